import { describe, expect, it } from 'vitest';
import { mkdirRefusalIn, sandboxRefusalIn } from '../../source/engine/sandbox/refusal.js';

describe('sandboxRefusalIn: a write the sandbox refused, as each runtime words it', () => {
  it.each([
    ["Error: EROFS: read-only file system, open '/r/package.json'", 'node'],
    ['sh: 1: cannot create /r/package.json: Read-only file system', 'sh'],
    ["OSError: [Errno 30] Read-only file system: '/r/x'", 'python'],
    ["Error: EXDEV: cross-device link not permitted, link '/r/src/a' -> '/etc/x'", 'node link'],
    ["ln: failed to create hard link '/r/src/l' => '/etc/passwd': Invalid cross-device link", 'ln'],
  ])('finds %s (%s)', (line) => {
    expect(sandboxRefusalIn(`stack line\n${line}\n    at Object.openSync`)).toBe(line);
  });

  it('is null for other failures, so they stay STOP_INTERRUPTED', () => {
    expect(sandboxRefusalIn("Error: ENOENT: no such file or directory, open 'x'")).toBeNull();
    expect(sandboxRefusalIn('API Error: 529 overloaded')).toBeNull();
    expect(sandboxRefusalIn('')).toBeNull();
    expect(sandboxRefusalIn(null)).toBeNull();
  });

  it('keeps one bounded line', () => {
    const line = sandboxRefusalIn(`EROFS ${'x'.repeat(5000)}\nnext`);
    expect(line?.length).toBe(300);
  });
});

describe("mkdirRefusalIn: node's recursive mkdir says ENOENT on a read-only mount", () => {
  const writable = ['/r/src', '/h/harness'];
  const enoent = (dir: string) =>
    `Error: ENOENT: no such file or directory, mkdir '${dir}'\n    at mkdirSync`;

  it('is a refusal for a folder outside every writable one, its control characters escaped', () => {
    expect(mkdirRefusalIn(enoent('/r/deploy'), writable)).toBe(
      "ENOENT: no such file or directory, mkdir '/r/deploy'",
    );
    expect(mkdirRefusalIn(enoent('/r/evil\nsrc'), writable)).toBe(
      "ENOENT: no such file or directory, mkdir '/r/evil\\nsrc'",
    );
  });

  it('is null inside a writable folder, for a relative folder, and for other errors', () => {
    expect(mkdirRefusalIn(enoent('/r/src/new/deep'), writable)).toBeNull();
    expect(mkdirRefusalIn(enoent('/h/harness'), writable)).toBeNull();
    expect(mkdirRefusalIn(enoent('deploy'), writable)).toBeNull();
    expect(mkdirRefusalIn("Error: ENOENT: no such file or directory, open '/r/x'", writable)).toBeNull();
    expect(mkdirRefusalIn(null, writable)).toBeNull();
  });

  it('sandboxRefusalIn counts it only when told the writable folders (builders and checks alike)', () => {
    expect(sandboxRefusalIn(enoent('/r/deploy'))).toBeNull();
    expect(sandboxRefusalIn(enoent('/r/deploy'), writable)).toBe(
      "ENOENT: no such file or directory, mkdir '/r/deploy'",
    );
    expect(sandboxRefusalIn(enoent('/r/src/x'), writable)).toBeNull();
  });
});
