import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readFsClock } from '../../source/engine/judge/fs-clock.js';
import { Git } from '../../source/engine/judge/git.js';
import {
  diffIgnored,
  replayIgnored,
  serializeIgnored,
  snapshotIgnored,
} from '../../source/engine/judge/ignored-files.js';
import { findUnsafeFiles } from '../../source/engine/judge/unsafe-files.js';

// Issue 17: files inside an ignored folder are judged by ctime against the filesystem's clock
// (names only in the snapshot). Real repositories, real files: every kind of change a builder
// could make inside node_modules must still show, including ones that keep size and mtime.

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function repo(): Git {
  dir = mkdtempSync(join(tmpdir(), 'relais-ignored-'));
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  writeFileSync(join(dir, '.gitignore'), 'node_modules/\n');
  mkdirSync(join(dir, 'relais'));
  for (let p = 0; p < 5; p++) {
    mkdirSync(join(dir, 'node_modules', `p${p}`, 'lib'), { recursive: true });
    writeFileSync(join(dir, 'node_modules', `p${p}`, 'index.js'), `module.exports = ${p};\n`);
    writeFileSync(join(dir, 'node_modules', `p${p}`, 'lib', 'deep.js'), 'deep\n');
  }
  return new Git(dir);
}

const summary = (changes: Awaited<ReturnType<typeof diffIgnored>>) =>
  changes.map((c) => `${c.change} ${c.path}`);

describe('ignored folders judged by the filesystem clock', () => {
  it('keeps names only for a folder on the clock filesystem, and sees nothing when nothing changed', async () => {
    const git = repo();
    const before = await snapshotIgnored(git, 'relais');
    expect(before.clock).not.toBeNull();
    expect(before.inside.size).toBe(10);
    expect([...before.inside.values()].every((f) => f === null)).toBe(true);
    expect(await diffIgnored(git, 'relais', before)).toEqual([]);
  });

  it('sees an edit that keeps the size and sets the mtime back', async () => {
    const git = repo();
    const file = join(dir, 'node_modules/p3/lib/deep.js');
    utimesSync(file, 1_000_000, 1_000_000);
    const was = lstatSync(file);
    const before = await snapshotIgnored(git, 'relais');
    writeFileSync(file, 'DEEP\n');
    utimesSync(file, 1_000_000, 1_000_000);
    expect(lstatSync(file).mtimeMs).toBe(was.mtimeMs);
    expect(lstatSync(file).size).toBe(was.size);
    expect(summary(await diffIgnored(git, 'relais', before))).toEqual([
      'modified node_modules/p3/lib/deep.js',
    ]);
  });

  it('sees created, deleted, renamed and chmod-only files', async () => {
    const git = repo();
    const before = await snapshotIgnored(git, 'relais');
    writeFileSync(join(dir, 'node_modules/p0/new.js'), 'new\n');
    rmSync(join(dir, 'node_modules/p1/index.js'));
    execFileSync('mv', [join(dir, 'node_modules/p2/index.js'), join(dir, 'node_modules/p2/moved.js')]);
    execFileSync('chmod', ['+x', join(dir, 'node_modules/p4/index.js')]);
    expect(summary(await diffIgnored(git, 'relais', before))).toEqual([
      'created node_modules/p0/new.js',
      'deleted node_modules/p1/index.js',
      'deleted node_modules/p2/index.js',
      'created node_modules/p2/moved.js',
      'modified node_modules/p4/index.js',
    ]);
  });

  it('a file replaced by another one of the same size and mtime is still seen (rename over it)', async () => {
    const git = repo();
    const target = join(dir, 'node_modules/p0/index.js');
    utimesSync(target, 1_000_000, 1_000_000);
    const before = await snapshotIgnored(git, 'relais');
    const forged = join(dir, 'forged.tmp');
    writeFileSync(forged, 'module.exports = 9;\n');
    utimesSync(forged, 1_000_000, 1_000_000);
    execFileSync('mv', [forged, target]);
    expect(summary(await diffIgnored(git, 'relais', before))).toContain('modified node_modules/p0/index.js');
  });

  it('survives INFLIGHT.json: a replayed snapshot judges the same changes', async () => {
    const git = repo();
    const before = await snapshotIgnored(git, 'relais');
    const saved = JSON.parse(JSON.stringify(serializeIgnored(before)));
    expect(saved.names).toHaveLength(10);
    expect(saved.inside).toEqual([]);
    writeFileSync(join(dir, 'node_modules/p1/lib/deep.js'), 'deep\n');
    expect(summary(await diffIgnored(git, 'relais', replayIgnored(saved)))).toEqual([
      'modified node_modules/p1/lib/deep.js',
    ]);
  });

  it('without a readable clock every file keeps a full fingerprint, and changes still show', async () => {
    const git = repo();
    // The clock is written in the workspace folder; a missing one stands for any unwritable place.
    expect(readFsClock(join(dir, 'missing'))).toBeNull();
    const before = await snapshotIgnored(git, 'missing');
    expect(before.clock).toBeNull();
    expect([...before.inside.values()].every((f) => f !== null)).toBe(true);
    writeFileSync(join(dir, 'node_modules/p2/lib/deep.js'), 'changed\n');
    expect(summary(await diffIgnored(git, 'missing', before))).toEqual([
      'modified node_modules/p2/lib/deep.js',
    ]);
  });

  it('a replayed snapshot without its clock calls every named file changed rather than trust names', async () => {
    const git = repo();
    const saved = serializeIgnored(await snapshotIgnored(git, 'relais'));
    const changes = await diffIgnored(git, 'relais', replayIgnored({ ...saved, clock: null }));
    expect(changes).toHaveLength(10);
    expect(changes.every((c) => c.change === 'modified')).toBe(true);
  });
});

describe('ignored folders judged in one pass (issue 17)', () => {
  it('sees a whole subfolder deleted, a new subfolder, and a file replaced by a folder', async () => {
    const git = repo();
    const before = await snapshotIgnored(git, 'relais');
    rmSync(join(dir, 'node_modules/p3/lib'), { recursive: true });
    mkdirSync(join(dir, 'node_modules/p0/fresh/deeper'), { recursive: true });
    writeFileSync(join(dir, 'node_modules/p0/fresh/deeper/x.js'), 'x\n');
    rmSync(join(dir, 'node_modules/p4/index.js'));
    mkdirSync(join(dir, 'node_modules/p4/index.js'));
    writeFileSync(join(dir, 'node_modules/p4/index.js/inner.js'), 'inner\n');
    expect(summary(await diffIgnored(git, 'relais', before))).toEqual([
      'created node_modules/p0/fresh/deeper/x.js',
      'deleted node_modules/p3/lib/deep.js',
      'deleted node_modules/p4/index.js',
      'created node_modules/p4/index.js/inner.js',
    ]);
  });

  it('sees a whole ignored folder removed and made again with the same names', async () => {
    const git = repo();
    const before = await snapshotIgnored(git, 'relais');
    rmSync(join(dir, 'node_modules/p2'), { recursive: true });
    mkdirSync(join(dir, 'node_modules/p2/lib'), { recursive: true });
    writeFileSync(join(dir, 'node_modules/p2/index.js'), 'module.exports = 2;\n');
    writeFileSync(join(dir, 'node_modules/p2/lib/deep.js'), 'deep\n');
    // Same names and contents, new files: each is reported changed.
    expect(summary(await diffIgnored(git, 'relais', before))).toEqual([
      'modified node_modules/p2/index.js',
      'modified node_modules/p2/lib/deep.js',
    ]);
  });

  it("hands the folder's changed files to the unsafe-files walk, which then finds a hard link made inside it", async () => {
    const git = repo();
    const before = await snapshotIgnored(git, 'relais');
    // What the tick takes as its start: anything changed after it has a ctime not older.
    const since = (readFsClock(join(dir, 'relais')) as { sinceMs: number }).sinceMs;
    execFileSync('ln', [join(dir, 'node_modules/p1/index.js'), join(dir, 'node_modules/p1/twin.js')]);
    const walked = new Map();
    const changes = await diffIgnored(git, 'relais', before, { walked, sinceMs: since });
    expect(summary(changes)).toEqual([
      'modified node_modules/p1/index.js',
      'created node_modules/p1/twin.js',
    ]);
    expect([...walked.keys()]).toEqual([join(dir, 'node_modules')]);
    // Only what changed since the tick began is kept: the two names of the new link.
    expect([...walked.get(join(dir, 'node_modules')).keys()].sort()).toEqual([
      join(dir, 'node_modules/p1/index.js'),
      join(dir, 'node_modules/p1/twin.js'),
    ]);
    // The same from the full walk and from the one that reads only changed folders (sandboxed).
    for (const sandboxed of [false, true]) {
      const unsafe = await findUnsafeFiles(dir, join(dir, 'relais'), since, { walked, sandboxed });
      expect(unsafe.map((u) => `${u.kind} ${u.path}`)).toEqual([
        'hard link node_modules/p1/index.js',
        'hard link node_modules/p1/twin.js',
      ]);
    }
  });
});

describe('the ignored listing', () => {
  it('sees an ignored file the builder writes beside a re-included folder of a new untracked folder', async () => {
    const git = repo();
    // `cache/*` is ignored except `cache/keep/`: git's `ls-files --directory --no-empty-directory`
    // left cache/secret.txt out of the listing once cache/ held an untracked file of its own.
    writeFileSync(join(dir, '.gitignore'), 'node_modules/\ncache/*\n!cache/keep/\n');
    const before = await snapshotIgnored(git, 'relais');
    mkdirSync(join(dir, 'cache/keep'), { recursive: true });
    writeFileSync(join(dir, 'cache/keep/a.txt'), 'kept\n');
    writeFileSync(join(dir, 'cache/secret.txt'), 'hidden\n');
    expect(summary(await diffIgnored(git, 'relais', before))).toEqual(['created cache/secret.txt']);
  });
});

describe('ignored files kept with their bytes', () => {
  function withOutputs(git: Git): string {
    // Build outputs beside their sources, each listed on its own (no ignored folder to walk).
    rmSync(join(dir, 'node_modules'), { recursive: true });
    writeFileSync(join(dir, '.gitignore'), '*.o\n');
    for (let i = 0; i < 3; i++) writeFileSync(join(dir, `f${i}.o`), `object ${i}\n`);
    utimesSync(join(dir, 'f1.o'), 1_000_000, 1_000_000);
    return git.root;
  }

  it('sees an edit in place that keeps the size and sets the mtime back, and nothing when nothing changed', async () => {
    const git = repo();
    withOutputs(git);
    const before = await snapshotIgnored(git, 'relais');
    expect(before.entries.get('f1.o')?.content?.toString()).toBe('object 1\n');
    expect(await diffIgnored(git, 'relais', before)).toEqual([]);
    writeFileSync(join(dir, 'f1.o'), 'OBJECT 1\n');
    utimesSync(join(dir, 'f1.o'), 1_000_000, 1_000_000);
    expect(summary(await diffIgnored(git, 'relais', before))).toEqual(['modified f1.o']);
  });

  it('trusts an unmoved ctime only when it is older than the clock: otherwise the bytes decide', async () => {
    const git = repo();
    withOutputs(git);
    const before = await snapshotIgnored(git, 'relais');
    // The same snapshot, but with other bytes kept for f2.o (as if it changed between the clock
    // reading and its lstat): with its ctime older than the clock the bytes are not read again...
    const forged = (ctimeMs: number | null | undefined) => {
      const entries = new Map(before.entries);
      const was = before.entries.get('f2.o');
      if (!was) throw new Error('f2.o not in the snapshot');
      entries.set('f2.o', { ...was, ctimeMs, content: Buffer.from('other 2\n') });
      return { ...before, entries };
    };
    const was = before.entries.get('f2.o');
    expect(was?.ctimeMs).toBeLessThan(before.clock?.sinceMs ?? 0);
    expect(await diffIgnored(git, 'relais', forged(was?.ctimeMs))).toEqual([]);
    // ...with a ctime not older than the clock, or none kept (replayed), they are, and differ.
    const dev = before.clock?.dev ?? 0;
    const recent = { ...forged(was?.ctimeMs), clock: { sinceMs: was?.ctimeMs ?? 0, dev } };
    expect(summary(await diffIgnored(git, 'relais', recent))).toEqual(['modified f2.o']);
    expect(summary(await diffIgnored(git, 'relais', forged(undefined)))).toEqual(['modified f2.o']);
  });
});
