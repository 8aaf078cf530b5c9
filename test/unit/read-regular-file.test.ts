import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readRegularFile } from '../../source/engine/judge/stat-or-null.js';

// The judge's synchronous read (refs guard, ignored snapshot, object and workspace guards): the
// bytes of a regular file and nothing else, never waiting on what a builder may have left.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'relais-read-regular-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('readRegularFile', () => {
  it('gives the exact bytes of small, pooled-size and large files, and of an empty one', () => {
    for (const size of [0, 1, 41, 4095, 4096, 10_000, 3 * 1024 * 1024 + 7]) {
      const bytes = Buffer.alloc(size);
      for (let i = 0; i < size; i++) bytes[i] = (i * 31 + size) & 0xff;
      const path = join(dir, `f${size}`);
      writeFileSync(path, bytes);
      const read = readRegularFile(path);
      expect(read?.length, `size ${size}`).toBe(size);
      expect(read?.equals(bytes), `size ${size}`).toBe(true);
    }
  });

  it('reads through a symbolic link, and refuses a folder, a FIFO and a file over the bound', () => {
    writeFileSync(join(dir, 'target'), 'ref: refs/heads/main\n');
    symlinkSync(join(dir, 'target'), join(dir, 'link'));
    expect(readRegularFile(join(dir, 'link'))?.toString()).toBe('ref: refs/heads/main\n');
    mkdirSync(join(dir, 'folder'));
    expect(readRegularFile(join(dir, 'folder'))).toBeNull();
    expect(spawnSync('mkfifo', [join(dir, 'fifo')]).status).toBe(0);
    // Returns at once: a blocking read here would hang this test.
    expect(readRegularFile(join(dir, 'fifo'))).toBeNull();
    expect(readRegularFile(join(dir, 'target'), 5)).toBeNull();
    expect(readRegularFile(join(dir, 'missing'))).toBeNull();
  });

  it('refuses a file larger than Node reads at once (4 GiB, sparse), as readFileSync did, instead of reading it as empty', () => {
    const path = join(dir, 'huge');
    writeFileSync(path, '');
    truncateSync(path, 4 * 1024 ** 3);
    expect(readRegularFile(path)).toBeNull();
  });

  it('reads a file that reports size 0 but holds bytes (procfs) to its end', () => {
    const status = readRegularFile('/proc/self/status');
    expect(status?.toString()).toMatch(/^Name:/);
  });
});
