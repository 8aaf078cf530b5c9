import { execFileSync, spawnSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFsClock } from '../../source/engine/judge/fs-clock.js';
import { Git } from '../../source/engine/judge/git.js';
import { diffIgnored, narrowToWritable, snapshotIgnored } from '../../source/engine/judge/ignored-files.js';
import { type IndexCopy, keepIndexCopy } from '../../source/engine/judge/index-copy.js';
import {
  computeTouchedSet,
  statusCandidates,
  writablePathspec,
} from '../../source/engine/judge/touched-set.js';
import { findUnsafeFiles } from '../../source/engine/judge/unsafe-files.js';

// Issue 17: inside the sandbox the judge's status pass and unsafe-files walk read only the paths
// the tick could write (`writableInTree`). Real repositories: every change a sandboxed builder can
// make inside the writable set is judged exactly as the whole-tree judge judges it, and a change
// outside (which only a process outside Relais could make) is not seen by the limited judge.

let dir: string;
let g: Git;
let index: IndexCopy;
let head: string;

const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
const write = (path: string, text = 'x\n') => {
  mkdirSync(join(dir, path, '..'), { recursive: true });
  writeFileSync(join(dir, path), text);
};

/** Folder names a pathspec could misread: glob characters, a space, a newline, pathspec magic. */
const WITHIN = ['node_modules/foo/', 'src/:(glob)m/', 'src/a*b/', 'src/d0/', 'src/nl\nx/', 'src/sp ace/'];
const inside = (path: string) => WITHIN.some((w) => path.startsWith(w));

/** A committed tree with one folder per tricky name, and `index` kept as the judge keeps it. */
async function makeRepo(): Promise<void> {
  dir = mkdtempSync(join(tmpdir(), 'relais-writable-set-'));
  git('init', '-q', '-b', 'main');
  write('.gitignore', 'node_modules/\n*.log\n');
  for (const file of ['a.ts', 'b.ts', 'c.ts']) write(`src/d0/${file}`);
  for (const folder of ['src/d1', 'src/a*b', 'src/abc', 'src/sp ace', 'src/nl\nx', 'src/:(glob)m'])
    write(`${folder}/f`);
  write('node_modules/foo/m.js');
  write('node_modules/bar/m.js');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'base');
  mkdirSync(join(dir, 'relais'));
  writeFileSync(join(dir, '.git/info/exclude'), 'relais/\n');
  g = new Git(dir);
  head = git('rev-parse', 'HEAD').trim();
  index = (await keepIndexCopy(join(dir, '.git'))) as IndexCopy;
}

beforeEach(makeRepo);
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** What a sandboxed builder can do inside its folders: edit, create, delete, rename, ignored files. */
function changeInside(): void {
  write('src/d0/a.ts', 'edited\n');
  unlinkSync(join(dir, 'src/d0/b.ts'));
  renameSync(join(dir, 'src/d0/c.ts'), join(dir, 'src/d0/c2.ts'));
  write('src/d0/new/deep.ts');
  write('src/d0/out.log', 'ignored\n');
  write('src/a*b/f', 'edited\n');
  write('src/sp ace/f', 'edited\n');
  write('src/nl\nx/f', 'edited\n');
  write('src/:(glob)m/f', 'edited\n');
  write('node_modules/foo/new.js');
}

/** What only a process outside the sandbox could do: every path here is outside WITHIN. */
function changeOutside(): void {
  write('src/d1/f', 'edited\n');
  write('src/d1/new.ts');
  write('src/abc/f', 'edited\n');
  write('top.log');
  write('node_modules/bar/new.js');
}

/** The tick's judgement (git and ignored files) after both kinds of change, within `within`. */
async function judge(within: readonly string[] | null, kept: IndexCopy | null = index): Promise<string[]> {
  const before = await snapshotIgnored(g, 'relais', within);
  changeInside();
  changeOutside();
  const touched = await computeTouchedSet(
    g,
    head,
    (fromStatus) => diffIgnored(g, 'relais', before, undefined, fromStatus),
    [],
    [],
    kept,
    within,
  );
  await touched.index.dispose();
  return touched.files.map((f) => `${f.source} ${f.status} ${f.path} +${f.added}/-${f.deleted}`);
}

describe('the judge limited to the writable set', () => {
  it('judges every change inside it as the whole-tree judge does, and nothing outside', async () => {
    const limited = await judge(WITHIN);
    rmSync(dir, { recursive: true, force: true });
    // The same repository and changes again, judged over the whole tree.
    await makeRepo();
    const full = await judge(null);
    const path = (line: string) => line.split(' ').slice(2, -1).join(' ');
    expect(full.some((line) => !inside(path(line)))).toBe(true);
    expect(limited).toEqual(full.filter((line) => inside(path(line))));
    expect(limited).toEqual([
      'git modified src/:(glob)m/f +1/-1',
      'git modified src/a*b/f +1/-1',
      'git modified src/d0/a.ts +1/-1',
      'git deleted src/d0/b.ts +0/-1',
      'git deleted src/d0/c.ts +0/-1',
      'git added src/d0/c2.ts +1/-0',
      'git added src/d0/new/deep.ts +1/-0',
      'git modified src/nl\nx/f +1/-1',
      'git modified src/sp ace/f +1/-1',
      'ignored added node_modules/foo/new.js +1/-0',
      'ignored added src/d0/out.log +1/-0',
    ]);
  });

  it('limits the fallback without a kept index (diff base, ls-files --others) the same way', async () => {
    const limited = await judge(WITHIN, null);
    rmSync(dir, { recursive: true, force: true });
    await makeRepo();
    const full = await judge(null, null);
    const path = (line: string) => line.split(' ').slice(2, -1).join(' ');
    expect(full.some((line) => !inside(path(line)))).toBe(true);
    expect(limited).toEqual(full.filter((line) => inside(path(line))));
    expect(limited).toContain('git added src/d0/c2.ts +1/-0');
  });

  it('reports, through the limited status, what the full status reports inside the writable set', async () => {
    changeInside();
    changeOutside();
    const env = { GIT_INDEX_FILE: join(dir, 'judge-index') };
    writeFileSync(env.GIT_INDEX_FILE, index.bytes);
    const full = await statusCandidates(g, { env });
    const limited = await statusCandidates(g, { env }, writablePathspec(WITHIN));
    expect(full.changed.filter((p) => !inside(p)).length).toBeGreaterThan(0);
    expect(limited.changed.sort()).toEqual(full.changed.filter(inside).sort());
    // The ignored listing, narrowed as the snapshot is, is the same either way.
    expect(narrowToWritable(limited.ignored, WITHIN).sort()).toEqual(
      narrowToWritable(full.ignored, WITHIN).sort(),
    );
  });

  it('reads the whole tree without a writable set, or when the set is too long for argv', () => {
    expect(writablePathspec(null)).toEqual([]);
    expect(writablePathspec([])).toEqual([]);
    expect(writablePathspec(['src/d0/'])).toEqual(['--', 'src/d0/']);
    const many = Array.from({ length: 2000 }, (_, i) => `src/${'x'.repeat(40)}${i}/`);
    expect(writablePathspec(many)).toEqual([]);
  });
});

describe('the sandboxed unsafe-files walk limited to the writable set', () => {
  it('finds what the tick made inside it, reads nothing outside, and takes a writable file', async () => {
    const since = (readFsClock(join(dir, 'relais')) as { sinceMs: number }).sinceMs;
    spawnSync('mkfifo', [join(dir, 'src/d0/pipe')]);
    mkdirSync(join(dir, 'src/d0/new'));
    spawnSync('mkfifo', [join(dir, 'src/d0/new/pipe')]);
    linkSync(join(dir, 'src/d0/a.ts'), join(dir, 'src/d0/twin.ts'));
    spawnSync('mkfifo', [join(dir, 'src/d1/pipe')]);
    linkSync(join(dir, 'src/a*b/f'), join(dir, 'src/a*b/g'));
    spawnSync('mkfifo', [join(dir, 'relais/driver.fifo')]);
    const walk = (within: readonly string[] | null) =>
      findUnsafeFiles(dir, join(dir, 'relais'), since, { sandboxed: true, within }).then((found) =>
        found.map((f) => `${f.kind} ${f.path}`),
      );
    const full = await walk(null);
    expect(full).toContain('FIFO src/d1/pipe');
    // The nested `src/d0/new/` is walked once, with its parent.
    const limited = await walk(['src/a*b/', 'src/d0/', 'src/d0/new/', 'relais/driver.fifo']);
    const inWritableFolders = [
      'hard link src/a*b/f',
      'hard link src/a*b/g',
      'hard link src/d0/a.ts',
      'FIFO src/d0/new/pipe',
      'FIFO src/d0/pipe',
      'hard link src/d0/twin.ts',
    ];
    expect(limited).toEqual(['FIFO relais/driver.fifo', ...inWritableFolders]);
    // The whole walk finds the same there, and the FIFO outside them besides.
    expect(full.filter((line) => line.includes(' src/'))).toEqual([...inWritableFolders, 'FIFO src/d1/pipe']);
  });
});
