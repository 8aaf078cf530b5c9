import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { takeSnapshot } from '../../source/engine/judge/fs-snapshot.js';
import { checkAndRestore, guardWorkspace } from '../../source/engine/judge/protected-files.js';
import type { RepoFacts } from '../../source/engine/judge/repo.js';
import { listStaleTmpFiles } from '../../source/engine/workspace/crash-recovery.js';
import {
  historySizesFile,
  MEASURED_BEFORE_WRITING,
  rotateHistory,
} from '../../source/engine/workspace/history.js';
import type { WorkspacePaths } from '../../source/engine/workspace/paths.js';
import { type HistoryWorkspace, makeHistoryWorkspace } from '../support/history-workspace.js';

// Issue 17: history is listed once a tick and sizes.json read once; these check that rotation,
// the stale-temp-file scan and the workspace guard still see what they saw before.

let dir: string;
let paths: WorkspacePaths;
let run: HistoryWorkspace['run'];
beforeEach(() => {
  ({ dir, paths, run } = makeHistoryWorkspace('relais-history-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const sizes = () => JSON.parse(readFileSync(historySizesFile(paths), 'utf8')).runs as Record<string, number>;

describe('history rotation', () => {
  it('trusts written sizes, deletes the oldest past the cap, and rewrites sizes.json only on change', async () => {
    run('20200101T000000Z-a', 600);
    run('20200102T000000Z-b', 500);
    // A folder named like one of Object's own properties is measured, not taken from the prototype.
    run('constructor', 100);
    const first = await rotateHistory(paths, 1000, true);
    expect(first.removed).toEqual(['20200101T000000Z-a']);
    expect(first.bytes).toBe(600);
    expect(first.listing.newest).toEqual(['20200102T000000Z-b', 'constructor']);
    expect(sizes()).toEqual({ '20200102T000000Z-b': 500, constructor: 100 });

    const written = statSync(historySizesFile(paths));
    const again = await rotateHistory(paths, 1000, true);
    expect(again).toMatchObject({ bytes: 600, removed: [], failed: [] });
    // Nothing new and nothing gone: the file is not written again (same inode, same mtime).
    const after = statSync(historySizesFile(paths));
    expect([after.ino, after.mtimeMs]).toEqual([written.ino, written.mtimeMs]);

    // Sizes are trusted once measured: a known folder is not walked again.
    writeFileSync(join(paths.historyDir, '20200102T000000Z-b', 'more.txt'), 'y'.repeat(5000));
    expect((await rotateHistory(paths, 1000, true)).bytes).toBe(600);
  });

  it('drops entries of folders deleted by hand, and rebuilds an index whose values are not byte counts', async () => {
    run('20200101T000000Z-a', 300);
    await rotateHistory(paths, 10_000, true);
    rmSync(join(paths.historyDir, '20200101T000000Z-a'), { recursive: true });
    run('20200102T000000Z-b', 200);
    await rotateHistory(paths, 10_000, true);
    expect(sizes()).toEqual({ '20200102T000000Z-b': 200 });

    for (const bad of [{ x: -1 }, { x: 1.5 }, { x: '3' }, { '': 3 }, [1], null]) {
      writeFileSync(historySizesFile(paths), JSON.stringify({ version: 1, runs: bad }));
      const rotation = await rotateHistory(paths, 10_000, true);
      expect(rotation.bytes).toBe(200);
      expect(sizes()).toEqual({ '20200102T000000Z-b': 200 });
    }
  });

  it('measures a new folder each time until enough are new to write sizes.json again', async () => {
    run('20200101T000000Z-a', 100);
    await rotateHistory(paths, 1_000_000, true);
    const written = statSync(historySizesFile(paths));
    let bytes = 100;
    for (let i = 1; i < MEASURED_BEFORE_WRITING; i++) {
      run(`20200102T0000${String(i).padStart(2, '0')}Z-n`, 10);
      bytes += 10;
      // Not written yet, and the new folders count all the same (measured again each time).
      expect((await rotateHistory(paths, 1_000_000, true)).bytes).toBe(bytes);
      const now = statSync(historySizesFile(paths));
      expect([now.ino, now.mtimeMs]).toEqual([written.ino, written.mtimeMs]);
    }
    expect(Object.keys(sizes())).toHaveLength(1);
    run('20200103T000000Z-last', 10);
    expect((await rotateHistory(paths, 1_000_000, true)).bytes).toBe(bytes + 10);
    expect(Object.keys(sizes())).toHaveLength(MEASURED_BEFORE_WRITING + 1);
    // Past the cap, unwritten sizes delete the oldest as written ones do.
    expect((await rotateHistory(paths, bytes + 10 - 100, true)).removed).toEqual(['20200101T000000Z-a']);
  });

  it('without side effects deletes and writes nothing', async () => {
    run('20200101T000000Z-a', 600);
    run('20200102T000000Z-b', 600);
    const dry = await rotateHistory(paths, 1000, false);
    expect(dry.removed).toEqual(['20200101T000000Z-a']);
    expect(statSync(join(paths.historyDir, '20200101T000000Z-a')).isDirectory()).toBe(true);
    expect(() => statSync(historySizesFile(paths))).toThrow();
  });
});

describe('stale temp files from the shared listing', () => {
  it('finds them in history, the newest run folders and the workspace, as a listing of its own would', async () => {
    const newest = run('20200103T000000Z-c', 1);
    run('20200101T000000Z-a', 1);
    writeFileSync(join(paths.historyDir, 'sizes.json.123.abcdef.tmp'), '{}');
    writeFileSync(join(newest, 'report.json.123.abcdef.tmp'), '{}');
    writeFileSync(join(paths.dir, 'STATE.json.123.abcdef.tmp'), '{}');
    writeFileSync(join(paths.dir, 'lock.json.123.abcdef.tmp'), '{}');
    const rotation = await rotateHistory(paths, 10_000, true);
    const shared = await listStaleTmpFiles(paths, rotation.listing);
    expect(shared.map((p) => p.slice(paths.dir.length + 1))).toEqual([
      'STATE.json.123.abcdef.tmp',
      'history/20200103T000000Z-c/report.json.123.abcdef.tmp',
      'history/sizes.json.123.abcdef.tmp',
    ]);
    expect(await listStaleTmpFiles(paths)).toEqual(shared);
  });
});

describe('the workspace guard does not list history', () => {
  const facts = () => ({ root: dir, gitDir: join(dir, '.git'), commonDir: join(dir, '.git') }) as RepoFacts;

  it('takes the same snapshot as a walk that lists history, and still catches the current run and the rest', async () => {
    for (let i = 0; i < 30; i++) run(`20200101T0000${String(i).padStart(2, '0')}Z-old`, 10);
    writeFileSync(join(paths.dir, 'STATE.json'), '{}');
    writeFileSync(join(paths.historyDir, 'sizes.json'), '{}');
    const current = run('20260101T000000Z-now', 10);
    const guard = await guardWorkspace(paths, [], current);
    // The same roots walked with a listing of every folder give the same snapshot.
    const listed = await takeSnapshot(guard.roots.map((r) => ({ ...r, onlyNames: undefined })));
    expect([...guard.before.entries()]).toEqual([...listed.entries()]);
    expect(guard.before.has(join(current, 'report.md'))).toBe(true);

    writeFileSync(join(current, 'planted.sh'), 'x');
    writeFileSync(join(current, 'report.md'), 'changed');
    writeFileSync(join(paths.historyDir, '20200101T000000Z-old', 'note'), 'an earlier run is a record only');
    writeFileSync(join(paths.dir, 'STATE.json'), '{"forged":true}');
    const { changes } = await checkAndRestore(guard, facts(), paths);
    expect(changes.map((c) => [c.display, c.change])).toEqual([
      [join(paths.relDir, 'history/20260101T000000Z-now/planted.sh'), 'created'],
      [join(paths.relDir, 'history/20260101T000000Z-now/report.md'), 'modified'],
      [join(paths.relDir, 'STATE.json'), 'modified'],
    ]);
  });

  it("keeps a lane's runner state, .git file and config, fingerprints its checkout, skips its history copy", async () => {
    const lane = join(paths.dir, 'worktrees', 'task-1-1');
    const laneWorkspace = join(lane, basename(paths.dir));
    mkdirSync(join(lane, 'src'), { recursive: true });
    mkdirSync(join(laneWorkspace, 'history', 'run-1'), { recursive: true });
    writeFileSync(join(lane, 'src', 'a.ts'), 'lane work\n');
    writeFileSync(join(lane, '.git'), 'gitdir: /somewhere\n');
    writeFileSync(join(lane, 'relais.config.json'), '{}');
    writeFileSync(join(laneWorkspace, 'STATE.json'), '{}');
    writeFileSync(join(laneWorkspace, 'history', 'run-1', 'report.md'), 'copied record\n');
    const guard = await guardWorkspace(paths, [], null);
    const entry = (path: string) => guard.before.get(path) as { content?: Buffer | null } | null | undefined;
    expect(entry(join(lane, 'src', 'a.ts'))?.content).toBeNull();
    expect(entry(join(laneWorkspace, 'STATE.json'))?.content?.toString()).toBe('{}');
    expect(guard.before.has(join(laneWorkspace, 'history', 'run-1'))).toBe(false);

    writeFileSync(join(lane, 'src', 'a.ts'), 'edited\n');
    writeFileSync(join(lane, 'src', 'new.ts'), 'new\n');
    writeFileSync(join(laneWorkspace, 'STATE.json'), '{"forged":true}');
    writeFileSync(join(lane, '.git'), 'gitdir: /elsewhere\n');
    writeFileSync(join(lane, 'relais.config.json'), '{"widened":true}');
    writeFileSync(join(laneWorkspace, 'history', 'run-1', 'report.md'), 'a record only\n');
    const { changes, unrestorable } = await checkAndRestore(guard, facts(), paths);
    const lanePath = (p: string) => join(paths.relDir, 'worktrees', 'task-1-1', p);
    expect(changes.map((c) => [c.display, c.change])).toEqual([
      [lanePath('.git'), 'modified'],
      [lanePath('relais.config.json'), 'modified'],
      [lanePath('src/a.ts'), 'modified'],
      [lanePath('src/new.ts'), 'created'],
      [lanePath(join(basename(paths.dir), 'STATE.json')), 'modified'],
    ]);
    expect(readFileSync(join(laneWorkspace, 'STATE.json'), 'utf8')).toBe('{}');
    // Seen, but with no copy kept the lane's own file cannot be put back: said, not hidden.
    expect(unrestorable).toEqual([lanePath('src/a.ts')]);
  });

  it('keeps the names of the folders recoveries set aside and fingerprints what is inside them', async () => {
    const kept = join(paths.recoveredDir, '20260101T000000Z-aaaaaa');
    mkdirSync(join(kept, 'untracked'), { recursive: true });
    writeFileSync(join(kept, 'untracked', 'a.txt'), 'set aside\n');
    writeFileSync(join(kept, 'worktree.patch'), 'diff\n');
    const guard = await guardWorkspace(paths, [], null);
    const entry = (path: string) => guard.before.get(path) as { content?: Buffer | null } | null | undefined;
    expect(entry(join(kept, 'worktree.patch'))?.content).toBeNull();

    writeFileSync(join(kept, 'worktree.patch'), 'forged patch\n');
    mkdirSync(join(paths.recoveredDir, 'planted'));
    const { changes } = await checkAndRestore(guard, facts(), paths);
    expect(changes.map((c) => [c.display, c.change])).toEqual([
      [join(paths.relDir, 'recovered/20260101T000000Z-aaaaaa/worktree.patch'), 'modified'],
      [join(paths.relDir, 'recovered/planted'), 'created'],
    ]);
  });

  it('catches the current run folder created after the guard was taken, as a listing would', async () => {
    const current = join(paths.historyDir, '20260101T000000Z-now');
    const guard = await guardWorkspace(paths, [], current);
    expect(guard.before.has(current)).toBe(false);
    run('20260101T000000Z-now', 5);
    const { changes } = await checkAndRestore(guard, facts(), paths);
    expect(changes.map((c) => c.change)).toEqual(['created', 'created']);
  });
});
