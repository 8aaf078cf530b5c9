import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IndexNotParsed, indexFlags, indexPathsLazily } from '../../source/engine/judge/index-copy.js';
import { parseStatusV2, splitStatusV2 } from '../../source/engine/judge/touched-set.js';

// The judge reads index flags from the index bytes and candidates from `status --porcelain=v2`:
// both checked here against what real git says.

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
};
const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env });

function repo(files: Record<string, string>): void {
  dir = mkdtempSync(join(tmpdir(), 'relais-index-'));
  git('init', '-q', '-b', 'main');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  git('add', '-A');
  git('commit', '-qm', 'init');
}

/** What `git ls-files -v` says, as the judge's flag names. */
function gitFlags(): Map<string, string> {
  const flags = new Map<string, string>();
  for (const entry of git('ls-files', '-v', '-z').toString().split('\0').filter(Boolean)) {
    const tag = entry[0] as string;
    if (tag === 'S') flags.set(entry.slice(2), 'skip-worktree');
    else if (tag !== tag.toUpperCase()) flags.set(entry.slice(2), 'assume-unchanged');
  }
  return flags;
}

const index = () => readFileSync(join(dir, '.git', 'index'));

describe('index flags from the index bytes', () => {
  it('match ls-files -v for assume-unchanged and skip-worktree, long and odd names included', () => {
    // Longer than the 12-bit name length field (4095): git stores 0xFFF and the NUL ends it.
    const long = `${Array.from({ length: 22 }, () => 'n'.repeat(200)).join('/')}.txt`;
    repo({ 'a.txt': 'a', 'b/c.txt': 'c', 'é space.txt': 'e', 'z.txt': 'z' });
    // Too long for the filesystem, not for the index: added as an entry only.
    const blob = git('rev-parse', 'HEAD:a.txt').toString().trim();
    git('update-index', '--add', '--cacheinfo', `100644,${blob},${long}`);
    git('update-index', '--assume-unchanged', 'a.txt', long);
    git('update-index', '--skip-worktree', 'b/c.txt', 'é space.txt');
    expect(index().readUInt32BE(4)).toBe(3); // skip-worktree needs the extended flags of v3
    const flags = indexFlags(index());
    expect(flags).not.toBeNull();
    expect(Object.fromEntries(flags ?? [])).toEqual(Object.fromEntries(gitFlags()));
    expect(flags?.get('a.txt')).toBe('assume-unchanged');
    expect(flags?.get('b/c.txt')).toBe('skip-worktree');
    expect(flags?.has('z.txt')).toBe(false);
  });

  it('finds no flag in a plain version 2 index, and a flag set later', () => {
    repo({ 'a.txt': 'a', 'b.txt': 'b' });
    expect(index().readUInt32BE(4)).toBe(2);
    expect(indexFlags(index())?.size).toBe(0);
    git('update-index', '--assume-unchanged', 'b.txt');
    expect(indexFlags(index())?.get('b.txt')).toBe('assume-unchanged');
  });

  it('gives up (null, so git is asked) on version 4 and on bytes that do not parse', () => {
    repo({ 'a.txt': 'a', 'b.txt': 'b' });
    git('update-index', '--index-version', '4');
    expect(indexFlags(index())).toBeNull();
    git('update-index', '--index-version', '2');
    const bytes = Buffer.from(index());
    expect(indexFlags(bytes)).not.toBeNull();
    bytes.writeUInt16BE(0x0fff & 3, 12 + 40 + 20); // a name length that does not match
    expect(indexFlags(bytes)).toBeNull();
    expect(indexFlags(Buffer.from('not an index'))).toBeNull();
  });

  it("gives up on a sparse index's folder entries, and reads the same index once it is full again", () => {
    repo({ 'a/x.txt': 'x', 'b/y.txt': 'y' });
    git('sparse-checkout', 'set', '--cone', '--sparse-index', 'a');
    // git keeps `b/` as one entry of mode 040000: not a file the flags could be read for.
    expect(git('ls-files', '--sparse', '-s').toString()).toMatch(/^040000 \w+ 0\tb\/$/m);
    expect(indexFlags(index())).toBeNull();
    git('sparse-checkout', 'disable');
    expect(indexFlags(index())?.size).toBe(0);
  });
});

describe('tracked paths from the index bytes', () => {
  const lsFiles = () => git('ls-files', '-z').toString().split('\0').filter(Boolean);
  /** Every path, read to the end (null: the header is not one the reader parses). */
  const indexPaths = (bytes: Buffer, hashBytes = 20) => {
    const lazy = indexPathsLazily(bytes, hashBytes);
    return lazy ? [...lazy] : null;
  };

  it('are the paths ls-files -z prints, odd names, flags and intent-to-add entries included', () => {
    repo({ 'a.txt': 'a', 'b/c.txt': 'c', 'é space.txt': 'e', 'nl\nname.txt': 'n', 'z/y/x.txt': 'x' });
    const long = `${'d'.repeat(300)}/${'n'.repeat(4000)}.txt`;
    const blob = git('rev-parse', 'HEAD:a.txt').toString().trim();
    git('update-index', '--add', '--cacheinfo', `100644,${blob},${long}`);
    git('update-index', '--skip-worktree', 'b/c.txt');
    writeFileSync(join(dir, 'later.txt'), 'l');
    git('add', '--intent-to-add', 'later.txt');
    expect(indexPaths(index())).toEqual(lsFiles());
  });

  it('in a SHA-256 repository too, and null (git is asked) for version 4', () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-index-'));
    git('init', '-q', '--object-format=sha256', '-b', 'main');
    writeFileSync(join(dir, 'a.txt'), 'a');
    git('add', '-A');
    expect(indexPaths(index(), 32)).toEqual(lsFiles());
    // Read with the other object-name size, the first entry does not parse.
    expect(() => indexPaths(index(), 20)).toThrow(IndexNotParsed);
    git('update-index', '--index-version', '4');
    expect(indexPaths(index(), 32)).toBeNull();
  });

  it('are decoded only as far as they are read, and bytes that stop parsing throw when reached', () => {
    repo({ 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c' });
    const bytes = Buffer.from(index());
    expect(indexPaths(bytes)).toEqual(['a.txt', 'b.txt', 'c.txt']);
    // The second entry's name length no longer matches its name: entry 2 does not parse.
    // An entry: 62 bytes of stat data, object name and flags, then its name padded with NULs to 8.
    const second = 12 + 72;
    bytes.writeUInt16BE(3, second + 60);
    const lazy = indexPathsLazily(bytes, 20);
    const iterator = lazy?.[Symbol.iterator]();
    expect(iterator?.next()).toEqual({ value: 'a.txt', done: false });
    expect(() => iterator?.next()).toThrow(IndexNotParsed);
    expect(() => indexPaths(bytes)).toThrow(IndexNotParsed);
    // Bytes cut short after the entries (no checksum) are seen after the last path.
    const entriesEnd = 12 + 3 * 72;
    const cut = indexPathsLazily(Buffer.from(index()).subarray(0, entriesEnd + 10), 20);
    expect(() => [...(cut ?? [])]).toThrow(IndexNotParsed);
  });
});

describe('status --porcelain=v2 records', () => {
  it('give every changed, deleted, unmerged-free and untracked path, odd names whole', () => {
    repo({ 'a.txt': 'a', 'b c.txt': 'b', 'gone.txt': 'g' });
    writeFileSync(join(dir, 'a.txt'), 'changed');
    writeFileSync(join(dir, 'b c.txt'), 'changed too');
    rmSync(join(dir, 'gone.txt'));
    writeFileSync(join(dir, 'new file.txt'), 'n');
    writeFileSync(join(dir, '.gitignore'), 'ignored.txt\n');
    writeFileSync(join(dir, 'ignored.txt'), 'i');
    const out = git('status', '--porcelain=v2', '-z', '--untracked-files=all', '--no-renames', '--ignored');
    expect(parseStatusV2(out).sort()).toEqual(['.gitignore', 'a.txt', 'b c.txt', 'gone.txt', 'new file.txt']);
    expect(splitStatusV2(out).ignored).toEqual(['ignored.txt']);
  });

  it('refuses a record it does not know rather than skipping it', () => {
    expect(() => parseStatusV2(Buffer.from('2 R. N... 100644 100644 100644 a b R100 new\0old\0'))).toThrow(
      /unexpected git status record/,
    );
  });
});
