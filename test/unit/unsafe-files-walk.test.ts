import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFsClock } from '../../source/engine/judge/fs-clock.js';
import { findUnsafeFiles, type UnsafeFile } from '../../source/engine/judge/unsafe-files.js';

// Issue 17: inside the sandbox the unsafe-files walk reads files only in folders whose ctime moved.
// Each case does what a builder can do inside the sandbox (every name it makes is in the tree) and
// checks that the narrowed walk finds every unsafe inode the full walk finds.

let dir: string;
let root: string;
let since: number;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'relais-unsafe-walk-'));
  root = join(dir, 'repo');
  for (const folder of ['src/a', 'src/b/deep', 'docs', '.git/objects', 'relais'])
    mkdirSync(join(root, folder), { recursive: true });
  for (const file of ['src/a/one.ts', 'src/a/two.ts', 'src/b/deep/three.ts', 'docs/x.md', '.git/HEAD'])
    writeFileSync(join(root, file), file);
  // The tick's start as the filesystem's own clock reads it: everything above is older.
  since = (readFsClock(dir) as { sinceMs: number }).sinceMs;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const walk = (sandboxed: boolean) => findUnsafeFiles(root, join(root, 'relais'), since, { sandboxed });
const names = (files: UnsafeFile[]) => files.map((f) => `${f.kind} ${f.path}`);
const inodes = (files: UnsafeFile[]) => new Set(files.map((f) => lstatSync(join(root, f.path)).ino));

/** The narrowed walk may name fewer paths of one inode, never fewer inodes. */
async function expectSameInodes(): Promise<UnsafeFile[]> {
  const full = await walk(false);
  const narrowed = await walk(true);
  expect(full.length).toBeGreaterThan(0);
  expect(inodes(narrowed)).toEqual(inodes(full));
  return narrowed;
}

describe('the unsafe-files walk inside the sandbox', () => {
  it('finds a FIFO, a socket and a hard link made deep in the tree', async () => {
    spawnSync('mkfifo', [join(root, 'src/b/deep/pipe')]);
    linkSync(join(root, 'src/a/one.ts'), join(root, 'src/a/twin.ts'));
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(root, 'docs/sock'), resolve));
    try {
      const narrowed = await expectSameInodes();
      expect(names(narrowed)).toEqual([
        'socket docs/sock',
        'hard link src/a/one.ts',
        'hard link src/a/twin.ts',
        'FIFO src/b/deep/pipe',
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('finds a link to an old file in an unchanged folder by its new name', async () => {
    linkSync(join(root, 'src/b/deep/three.ts'), join(root, 'docs/alias.md'));
    const narrowed = await expectSameInodes();
    // The old name's folder did not change, so only the new name is read; the verdict is the same.
    expect(names(narrowed)).toEqual(['hard link docs/alias.md']);
    expect(names(await walk(false))).toEqual(['hard link docs/alias.md', 'hard link src/b/deep/three.ts']);
  });

  it('finds a link whose new name is in a nested .git folder, which the full walk skips', async () => {
    mkdirSync(join(root, 'src/vendor/.git'), { recursive: true });
    since = (readFsClock(dir) as { sinceMs: number }).sinceMs;
    linkSync(join(root, 'src/a/one.ts'), join(root, 'src/vendor/.git/alias'));
    const narrowed = await expectSameInodes();
    expect(names(narrowed)).toEqual(['hard link src/vendor/.git/alias']);
  });

  it('finds a FIFO made elsewhere in the tree and renamed into an old folder', async () => {
    spawnSync('mkfifo', [join(root, 'src/a/pipe')]);
    renameSync(join(root, 'src/a/pipe'), join(root, 'src/b/deep/moved'));
    expect(names(await expectSameInodes())).toEqual(['FIFO src/b/deep/moved']);
  });

  it('finds a file replaced by a hard link to another, in a new folder', async () => {
    mkdirSync(join(root, 'src/c/d'), { recursive: true });
    linkSync(join(root, 'docs/x.md'), join(root, 'src/c/d/x.md'));
    expect(names(await expectSameInodes())).toEqual(['hard link src/c/d/x.md']);
  });

  it('leaves the repository .git and the workspace out, as the full walk does', async () => {
    spawnSync('mkfifo', [join(root, '.git/pipe')]);
    spawnSync('mkfifo', [join(root, 'relais/pipe')]);
    expect(await walk(true)).toEqual([]);
    expect(await walk(false)).toEqual([]);
  });

  it('leaves an old hard link in an unchanged folder alone when only its mode changed', async () => {
    // Made before the tick began: the user's own link. A chmod moves its ctime, not its folder's.
    linkSync(join(root, 'src/a/one.ts'), join(dir, 'outside'));
    since = (readFsClock(dir) as { sinceMs: number }).sinceMs;
    chmodSync(join(root, 'src/a/one.ts'), 0o600);
    // Narrowed: no new name and no change of content (git sees none, so it is not in `changed`):
    // nothing the tick made. The full walk reads the file's ctime alone and refuses it: stricter.
    expect(await walk(true)).toEqual([]);
    expect(names(await walk(false))).toEqual(['hard link src/a/one.ts']);
  });

  it('leaves a FIFO that was there before the tick alone when only its mode changed', async () => {
    spawnSync('mkfifo', [join(root, 'src/a/old-pipe')]);
    since = (readFsClock(dir) as { sinceMs: number }).sinceMs;
    chmodSync(join(root, 'src/a/old-pipe'), 0o600);
    // No new name in src/a: not made by the tick. The full walk reads the FIFO's own ctime.
    expect(await walk(true)).toEqual([]);
    expect(names(await walk(false))).toEqual(['FIFO src/a/old-pipe']);
  });

  it('reads below an unchanged folder that has subfolders', async () => {
    // src/b did not change (its subfolder deep/ did): the walk must still go down to deep/.
    spawnSync('mkfifo', [join(root, 'src/b/deep/pipe')]);
    expect(lstatSync(join(root, 'src/b')).ctimeMs).toBeLessThan(since);
    expect(names(await walk(true))).toEqual(['FIFO src/b/deep/pipe']);
  });
});

describe('a hard link made before the tick', () => {
  it('is refused when the tick writes it in place, through the changed paths', async () => {
    // The second name was there before the tick; the build writes the file in place (truncate and
    // write): its folder does not move, the file's ctime does, and git sees an edit.
    linkSync(join(root, 'src/a/one.ts'), join(dir, 'outside'));
    since = (readFsClock(dir) as { sinceMs: number }).sinceMs;
    writeFileSync(join(root, 'src/a/one.ts'), 'written through\n');
    expect(names(await walk(false))).toEqual(['hard link src/a/one.ts']);
    expect(await walk(true)).toEqual([]);
    const narrowed = await findUnsafeFiles(root, join(root, 'relais'), since, {
      sandboxed: true,
      changed: ['src/a/one.ts', 'src/a/gone.ts'],
    });
    expect(names(narrowed)).toEqual(['hard link src/a/one.ts']);
  });
});
