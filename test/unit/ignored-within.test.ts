import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Git } from '../../source/engine/judge/git.js';
import {
  diffIgnored,
  narrowToWritable,
  replayIgnored,
  serializeIgnored,
  snapshotIgnored,
} from '../../source/engine/judge/ignored-files.js';
import { splitStatusV2 } from '../../source/engine/judge/touched-set.js';
import { inflightSchema } from '../../source/engine/protocol/inflight.js';
import type { Sandbox } from '../../source/engine/sandbox/sandbox.js';
import { ignoredWatchSet, writableInTree } from '../../source/engine/sandbox/sandbox.js';
import { bwrapSandboxValue } from '../support/sandbox-value.js';

// Issue 17: inside the sandbox the ignored snapshot covers only what the tick's processes can
// write; a 30k-file node_modules/ the task cannot write is neither listed nor stat'ed.

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'relais-ignored-within-')));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const bwrap = (extra: Partial<Extract<Sandbox, { kind: 'bwrap' }>> = {}) => bwrapSandboxValue(dir, extra);

describe('an ignored listing narrowed to what can be written', () => {
  const listing = ['node_modules/', 'src/gen/', 'src/out.log', 'dist/', '.env', 'cache/keep.txt'];

  it('keeps paths inside a writable folder, maps a folder holding one to it, drops the rest', () => {
    expect(narrowToWritable(listing, ['src/', 'node_modules/.cache/'])).toEqual([
      'node_modules/.cache/',
      'src/gen/',
      'src/out.log',
    ]);
    // A writable folder that is itself ignored, and a single writable file.
    expect(narrowToWritable(listing, ['dist/', 'cache/keep.txt'])).toEqual(['dist/', 'cache/keep.txt']);
    expect(narrowToWritable(listing, [])).toEqual([]);
    expect(narrowToWritable(listing, null)).toEqual(listing);
  });
});

describe('what a tick can write, from its sandbox', () => {
  beforeEach(() => {
    mkdirSync(join(dir, 'src/app'), { recursive: true });
    mkdirSync(join(dir, 'node_modules'));
  });

  it('is the task folders, the checks caches (made or not) and single files, relative to the tree', () => {
    const sandbox = bwrap({ verificationWritable: ['node_modules/.cache/**', 'coverage'] });
    expect(writableInTree(sandbox, dir, ['src/app/**', 'src/new/**'], [join(dir, 'out.json')])).toEqual([
      'coverage/',
      'node_modules/.cache/',
      'out.json',
      // src/new does not exist: the sandbox binds its nearest folder, src/, which holds src/app/.
      'src/',
    ]);
  });

  it('includes a writable_outside folder that lies in the tree (bound writable all the same)', () => {
    const sandbox = bwrap({ writableOutside: [join(dir, 'node_modules'), '/var/cache/elsewhere'] });
    expect(writableInTree(sandbox, dir, ['src/**'])).toEqual(['node_modules/', 'src/']);
  });

  it('is everything (null) without the sandbox or when the root is writable', () => {
    expect(writableInTree({ kind: 'off' }, dir, ['src/**'])).toBeNull();
    expect(writableInTree(bwrap(), dir, ['**'])).toBeNull();
    expect(writableInTree(bwrap(), dir, ['README.md'])).toBeNull();
  });

  it('narrows the ignored snapshot only without writable_outside (a folder there can share inodes with the tree)', () => {
    const set = writableInTree(bwrap(), dir, ['src/**']);
    expect(ignoredWatchSet(bwrap(), set)).toEqual(['src/']);
    expect(ignoredWatchSet(bwrap({ writableOutside: [join(dir, 'node_modules')] }), set)).toBeNull();
    expect(ignoredWatchSet(bwrap({ writableOutside: ['/var/cache/pnpm'] }), set)).toBeNull();
    expect(ignoredWatchSet({ kind: 'off' }, set)).toBeNull();
  });
});

describe('the ignored snapshot with a writable set', () => {
  function repo(): Git {
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
    writeFileSync(join(dir, '.gitignore'), 'node_modules/\nbuild/\n');
    mkdirSync(join(dir, 'relais'));
    for (let p = 0; p < 3; p++) {
      mkdirSync(join(dir, 'node_modules', `p${p}`), { recursive: true });
      writeFileSync(join(dir, 'node_modules', `p${p}`, 'index.js'), `${p}\n`);
    }
    mkdirSync(join(dir, 'node_modules/.cache/tool'), { recursive: true });
    writeFileSync(join(dir, 'node_modules/.cache/tool/a.json'), '{}\n');
    mkdirSync(join(dir, 'build'));
    writeFileSync(join(dir, 'build/app.js'), 'app\n');
    return new Git(dir);
  }

  it('watches only the writable parts, judges changes there, and keeps the set through INFLIGHT', async () => {
    const git = repo();
    const within = ['build/', 'node_modules/.cache/'];
    const before = await snapshotIgnored(git, 'relais', within);
    expect([...before.entries.keys()].sort()).toEqual(['build/', 'node_modules/.cache/']);
    expect([...before.inside.keys()].sort()).toEqual(['build/app.js', 'node_modules/.cache/tool/a.json']);
    writeFileSync(join(dir, 'node_modules/.cache/tool/b.json'), '{}\n');
    writeFileSync(join(dir, 'build/app.js'), 'changed\n');
    const expected = ['created node_modules/.cache/tool/b.json', 'modified build/app.js'].sort();
    const summary = (changes: Awaited<ReturnType<typeof diffIgnored>>) =>
      changes.map((c) => `${c.change} ${c.path}`).sort();
    expect(summary(await diffIgnored(git, 'relais', before))).toEqual(expected);
    // A recovery reads the snapshot back from INFLIGHT.json: the same set, the same judgement.
    const replayed = replayIgnored(JSON.parse(JSON.stringify(serializeIgnored(before))));
    expect(replayed.within).toEqual(within);
    expect(summary(await diffIgnored(git, 'relais', replayed))).toEqual(expected);
  });

  it("judges the same through the judge's status pass as through ls-files", async () => {
    const git = repo();
    const within = ['build/', 'node_modules/.cache/'];
    const before = await snapshotIgnored(git, 'relais', within);
    writeFileSync(join(dir, 'node_modules/.cache/tool/b.json'), '{}\n');
    writeFileSync(join(dir, 'node_modules/p1/index.js'), 'outside the writable set\n');
    rmSync(join(dir, 'build/app.js'));
    const status = splitStatusV2(
      execFileSync('git', ['status', '--porcelain=v2', '-z', '--untracked-files=all', '--ignored=matching'], {
        cwd: dir,
      }),
    );
    const summary = (changes: Awaited<ReturnType<typeof diffIgnored>>) =>
      changes.map((c) => `${c.change} ${c.path}`).sort();
    const viaStatus = summary(await diffIgnored(git, 'relais', before, undefined, status));
    expect(viaStatus).toEqual(['created node_modules/.cache/tool/b.json', 'deleted build/app.js']);
    expect(summary(await diffIgnored(git, 'relais', before))).toEqual(viaStatus);
  });

  it('refuses an INFLIGHT.json whose writable set climbs out of the repository', () => {
    const within = inflightSchema.shape.ignored_within;
    expect(within.safeParse(['src/', 'node_modules/.cache/']).success).toBe(true);
    expect(within.safeParse(null).success).toBe(true);
    for (const bad of ['../x/', 'node_modules/../../etc/', '/etc/', ''])
      expect(within.safeParse([bad]).success, bad).toBe(false);
  });

  it('a cache folder that appears later is judged whole (the checks make it at VERIFY)', async () => {
    const git = repo();
    rmSync(join(dir, 'node_modules/.cache'), { recursive: true });
    const before = await snapshotIgnored(git, 'relais', ['src/', 'node_modules/.cache/']);
    expect([...before.entries.keys()]).toEqual([]);
    mkdirSync(join(dir, 'node_modules/.cache'));
    writeFileSync(join(dir, 'node_modules/.cache/x'), 'x\n');
    const changes = await diffIgnored(git, 'relais', before);
    expect(changes.map((c) => `${c.change} ${c.path}`)).toEqual(['created node_modules/.cache/x']);
  });
});
