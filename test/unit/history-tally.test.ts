import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listStaleTmpFiles } from '../../source/engine/workspace/crash-recovery.js';
import {
  historySizesFile,
  MEASURED_BEFORE_WRITING,
  NEWEST_RUNS_KEPT,
  rotateHistory,
} from '../../source/engine/workspace/history.js';
import {
  historyTallyFile,
  keepHistoryTally,
  type OwnRun,
  ownRunCreated,
} from '../../source/engine/workspace/history-tally.js';
import type { WorkspacePaths } from '../../source/engine/workspace/paths.js';
import {
  type HistoryWorkspace,
  makeHistoryWorkspace,
  tempFolderCountsSubfolders,
} from '../support/history-workspace.js';

// Issue 17: a tick trusts the last tick's tally of relais/history instead of listing thousands of
// run folders, only while history's folder is as the tally saw it. These check that every change
// to that folder still reaches the rotation, and that a tally is never kept when it could be wrong.

let dir: string;
let paths: WorkspacePaths;
let run: HistoryWorkspace['run'];
beforeEach(() => {
  ({ dir, paths, run } = makeHistoryWorkspace('relais-tally-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const tally = () => JSON.parse(readFileSync(historyTallyFile(paths), 'utf8'));
/**
 * A file written after history's last change, as a tick's REPORT.json is: rewritten until the
 * filesystem's clock (a coarse tick of a few ms) stamps it later than history's folder. Not a
 * sleep: it awaits that event, bounded.
 */
function later(): string {
  const file = join(paths.dir, 'REPORT.json');
  const history = statSync(paths.historyDir, { bigint: true }).ctimeNs;
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    writeFileSync(file, '{}');
    if (statSync(file, { bigint: true }).ctimeNs > history) return file;
  }
  throw new Error("the filesystem's clock did not move in 5 s");
}

/** The tick's own run folder, created as run-tick.ts does: history's stamp read right after. */
function ownRun(name: string, bytes: number): OwnRun {
  mkdirSync(join(paths.historyDir, name));
  const own = ownRunCreated(paths, name) as OwnRun;
  writeFileSync(join(paths.historyDir, name, 'report.md'), 'x'.repeat(bytes));
  return own;
}

/** One tick as the runner makes it: rotation, its own run folder, the tally at its end. */
async function tick(name: string, bytes: number, cap = 1_000_000) {
  const rotation = await rotateHistory(paths, cap, true);
  const own = ownRun(name, bytes);
  const kept = await keepHistoryTally(paths, rotation.known, own, NEWEST_RUNS_KEPT, later());
  return { rotation, kept };
}

// Skipped, with this reason, where the temp folder's folders do not count their subfolders (btrfs,
// a merged overlayfs folder): no tally is ever kept there, by design, and each tick lists history
// as unit/history tests. Here (ext4, as on CI) they run.
const COUNTS = tempFolderCountsSubfolders();

describe.skipIf(!COUNTS)('the history tally', () => {
  it('is trusted while history is unchanged: only the last tick folder is measured', async () => {
    run('20200101T000000Z-a', 300);
    expect((await tick('20200102T000000Z-b', 200)).kept).toBe(true);
    expect(tally()).toMatchObject({ runs: 2, bytes: 300, unmeasured: ['20200102T000000Z-b'], unsaved: [] });
    // A forged byte count in the tally (relais/, not history/) is what the next tick believes:
    // proof that it did not list history. The judge's guard keeps agents away from this file.
    writeFileSync(historyTallyFile(paths), JSON.stringify({ ...tally(), bytes: 10_000 }));
    const second = await tick('20200103T000000Z-c', 100);
    expect(second.rotation.bytes).toBe(10_200);
    expect(second.rotation.known.unsaved).toEqual([['20200102T000000Z-b', 200]]);
    expect(tally()).toMatchObject({ runs: 3, unmeasured: ['20200103T000000Z-c'] });
  });

  it('a folder added, deleted or renamed by hand, or a temp file left in history, means a listing', async () => {
    run('20200101T000000Z-a', 300);
    await tick('20200102T000000Z-b', 200);
    const forge = () => writeFileSync(historyTallyFile(paths), JSON.stringify({ ...tally(), bytes: 10_000 }));
    const hand = (name: string) => join(paths.historyDir, name);
    const changes: Array<[string, () => void, number]> = [
      ['added', () => run('20190101T000000Z-hand', 50), 550],
      ['renamed', () => renameSync(hand('20190101T000000Z-hand'), hand('20190102T000000Z-moved')), 550],
      ['deleted', () => rmSync(hand('20190102T000000Z-moved'), { recursive: true }), 500],
      ['a temp file', () => writeFileSync(hand('sizes.json.1.abcdef.tmp'), '{}'), 500],
    ];
    for (const [what, change, bytes] of changes) {
      forge();
      change();
      const rotation = await rotateHistory(paths, 1_000_000, true);
      // The forged count is gone: the folder was listed and the sizes are the real ones.
      expect([what, rotation.bytes]).toEqual([what, bytes]);
      await keepHistoryTally(
        paths,
        rotation.known,
        ownRun(`20200103T00000${bytes}Z-${what.length}`, 0),
        NEWEST_RUNS_KEPT,
        later(),
      );
    }
    // The temp file was listed too, and the stale-file scan is handed it.
    forge();
    writeFileSync(join(paths.historyDir, 'report.json.2.abcdef.tmp'), '{}');
    const rotation = await rotateHistory(paths, 1_000_000, true);
    expect(await listStaleTmpFiles(paths, rotation.listing)).toEqual([
      join(paths.historyDir, 'report.json.2.abcdef.tmp'),
      join(paths.historyDir, 'sizes.json.1.abcdef.tmp'),
    ]);
  });

  it('is not kept unless a file written after history changed is stamped later (racy)', async () => {
    run('20200101T000000Z-a', 300);
    const rotation = await rotateHistory(paths, 1_000_000, true);
    // The witness written first, then the tick's own folder: within one clock tick or not, the
    // witness is not later than history's stamp, so a change right after could keep that stamp.
    const early = join(paths.dir, 'early.json');
    writeFileSync(early, '{}');
    const own = ownRun('20200102T000000Z-b', 200);
    const keep = (witness: string) => keepHistoryTally(paths, rotation.known, own, NEWEST_RUNS_KEPT, witness);
    expect(await keep(early)).toBe(false);
    expect(await keep(join(paths.dir, 'missing.json'))).toBe(false);
    expect(() => statSync(historyTallyFile(paths))).toThrow();
    expect(await keep(later())).toBe(true);
  });

  it('is not kept when history changed during the tick, after its own folder or before it', async () => {
    run('20200101T000000Z-a', 300);
    run('20200101T000001Z-old', 100);
    const during: Array<[string, () => void]> = [
      ['a folder created', () => mkdirSync(join(paths.historyDir, 'milestones'))],
      // Same number of folders: only the stamp taken after the tick's own folder tells.
      [
        'a folder renamed',
        () =>
          renameSync(join(paths.historyDir, '20200101T000001Z-old'), join(paths.historyDir, 'zzz-hidden')),
      ],
      ['a folder deleted', () => rmSync(join(paths.historyDir, 'zzz-hidden'), { recursive: true })],
    ];
    for (const [i, [what, change]] of during.entries()) {
      const rotation = await rotateHistory(paths, 1_000_000, true);
      const own = ownRun(`20200102T00000${i}Z-b`, 10);
      change();
      const kept = await keepHistoryTally(paths, rotation.known, own, NEWEST_RUNS_KEPT, later());
      expect([what, kept]).toEqual([what, false]);
    }
    // Between the rotation's look and the tick's own folder: the link count disagrees.
    const rotation = await rotateHistory(paths, 1_000_000, true);
    mkdirSync(join(paths.historyDir, 'workflows'));
    const own = ownRun('20200103T000000Z-c', 10);
    expect(await keepHistoryTally(paths, rotation.known, own, NEWEST_RUNS_KEPT, later())).toBe(false);
    // Its own `agents` folder is no run and does not count against the tally.
    const next = await rotateHistory(paths, 1_000_000, true);
    mkdirSync(join(paths.historyDir, 'agents'));
    const last = ownRun('20200104T000000Z-d', 10);
    expect(await keepHistoryTally(paths, next.known, last, NEWEST_RUNS_KEPT, later())).toBe(true);
    expect(tally().runs).toBe(next.known.runs + 1);
  });

  it("a change that puts the folder's mtime back is still seen: ctime cannot be set back", async () => {
    run('20200101T000000Z-a', 300);
    run('20200101T000001Z-old', 100);
    await tick('20200102T000000Z-b', 200);
    writeFileSync(historyTallyFile(paths), JSON.stringify({ ...tally(), bytes: 10_000 }));
    const before = statSync(paths.historyDir, { bigint: true });
    renameSync(
      join(paths.historyDir, '20200101T000001Z-old'),
      join(paths.historyDir, '20190101T000000Z-moved'),
    );
    // Back to the nanosecond, as `touch -d` can (Node's utimes keeps only microseconds).
    const ns = before.mtimeNs % 1_000_000_000n;
    const stamp = `@${before.mtimeNs / 1_000_000_000n}.${String(ns).padStart(9, '0')}`;
    execFileSync('touch', ['-m', '-d', stamp, paths.historyDir]);
    const after = statSync(paths.historyDir, { bigint: true });
    expect([after.mtimeNs, after.nlink]).toEqual([before.mtimeNs, before.nlink]);
    // Listed: the real byte count, not the forged one.
    expect((await rotateHistory(paths, 1_000_000, true)).bytes).toBe(600);
  });

  it('a forged tally naming paths, not folders, is refused: nothing outside history is measured or scanned', async () => {
    run('20200101T000000Z-a', 300);
    await tick('20200102T000000Z-b', 200);
    for (const [i, name] of ['../..', '..', '.', 'a/b', '/etc'].entries()) {
      writeFileSync(
        historyTallyFile(paths),
        JSON.stringify({ ...tally(), newest: [name], unmeasured: [name] }),
      );
      const rotation = await rotateHistory(paths, 1_000_000, true);
      expect([name, rotation.bytes]).toEqual([name, 500]);
      expect(rotation.listing.newest).not.toContain(name);
      await keepHistoryTally(
        paths,
        rotation.known,
        ownRun(`20200103T00000${i}Z-c`, 0),
        NEWEST_RUNS_KEPT,
        later(),
      );
    }
    // A name that is a symbolic link in history is not followed either.
    symlinkSync(dir, join(paths.historyDir, 'link'));
    writeFileSync(historyTallyFile(paths), JSON.stringify({ ...tally(), unmeasured: ['link'] }));
    const stamped = JSON.parse(readFileSync(historyTallyFile(paths), 'utf8'));
    const stat = statSync(paths.historyDir, { bigint: true });
    stamped.folder = { ...stamped.folder, mtime_ns: String(stat.mtimeNs), ctime_ns: String(stat.ctimeNs) };
    writeFileSync(historyTallyFile(paths), JSON.stringify(stamped));
    expect((await rotateHistory(paths, 1_000_000, true)).bytes).toBe(500);
  });

  it("a stale tally's sizes are not saved: its folders are measured again", async () => {
    run('20200101T000000Z-a', 300);
    await tick('20200102T000000Z-big', 5000);
    await tick('20200103T000000Z-c', 100);
    // Stale (a folder added by hand) and forged (the big run weighs nothing): measured, not believed.
    writeFileSync(
      historyTallyFile(paths),
      JSON.stringify({ ...tally(), unsaved: [['20200102T000000Z-big', 0]] }),
    );
    run('20190101T000000Z-hand', 10);
    // 5,410 bytes against a cap of 5,200 (believed, the forged size would make it 410: nothing to do).
    const rotation = await rotateHistory(paths, 5200, true);
    expect(rotation.removed).toEqual(['20190101T000000Z-hand', '20200101T000000Z-a']);
    expect(JSON.parse(readFileSync(historySizesFile(paths), 'utf8')).runs).toEqual({
      '20200102T000000Z-big': 5000,
      '20200103T000000Z-c': 100,
    });
  });

  it('an unreadable or invalid tally is ignored and replaced', async () => {
    run('20200101T000000Z-a', 300);
    const bad = ['{ not json', JSON.stringify({ version: 1 }), JSON.stringify({ version: 2 })];
    for (const [i, text] of bad.entries()) {
      writeFileSync(historyTallyFile(paths), text);
      const rotation = await rotateHistory(paths, 1_000_000, true);
      // Every run measured: the first, and the ticks' own folders (10 bytes each).
      expect(rotation.bytes).toBe(300 + 10 * i);
      const own = ownRun(`20200102T00000${i}Z-b`, 10);
      expect(await keepHistoryTally(paths, rotation.known, own, NEWEST_RUNS_KEPT, later())).toBe(true);
      expect(tally()).toMatchObject({ version: 1, runs: 2 + i, bytes: 300 + 10 * i });
    }
  });

  it('past the cap, the full rotation runs and deletes the oldest, with the sizes the tally carried', async () => {
    run('20200101T000000Z-a', 300);
    await tick('20200102T000000Z-b', 200);
    await tick('20200103T000000Z-c', 100);
    // b was measured from the tally and is not in sizes.json: its size is carried, not re-measured.
    writeFileSync(join(paths.historyDir, '20200102T000000Z-b', 'late.txt'), 'y'.repeat(5000));
    const rotation = await rotateHistory(paths, 350, true);
    expect(rotation.removed).toEqual(['20200101T000000Z-a']);
    expect(rotation.bytes).toBe(300);
    expect(JSON.parse(readFileSync(historySizesFile(paths), 'utf8')).runs).toEqual({
      '20200102T000000Z-b': 200,
      '20200103T000000Z-c': 100,
    });
  });

  it('lists history and writes sizes.json at least every MEASURED_BEFORE_WRITING ticks', async () => {
    run('20200101T000000Z-a', 100);
    await tick('20200101T000001Z-first', 10);
    expect(JSON.parse(readFileSync(historySizesFile(paths), 'utf8')).runs).toEqual({
      '20200101T000000Z-a': 100,
    });
    const listed: number[] = [];
    for (let i = 0; i < MEASURED_BEFORE_WRITING + 2; i++) {
      const before = statSync(historySizesFile(paths)).ino; // each write renames a new file into place
      // Whatever a trusted tally could still get wrong is listed away at the latest here.
      await tick(`20200102T0000${String(i).padStart(2, '0')}Z-n`, 10);
      if (statSync(historySizesFile(paths)).ino !== before) listed.push(i);
    }
    expect(listed).toEqual([MEASURED_BEFORE_WRITING - 1]);
    const sizes = JSON.parse(readFileSync(historySizesFile(paths), 'utf8')).runs as Record<string, number>;
    expect(Object.keys(sizes)).toHaveLength(MEASURED_BEFORE_WRITING + 1);
    expect(Object.values(sizes).reduce((a, b) => a + b, 0)).toBe(100 + 10 * MEASURED_BEFORE_WRITING);
  });

  it('hands the stale-file scan the newest runs, as a listing would', async () => {
    for (let i = 0; i < NEWEST_RUNS_KEPT + 5; i++) run(`20200101T0000${String(i).padStart(2, '0')}Z-old`, 1);
    await tick('20200102T000000Z-b', 1);
    const newest = join(paths.historyDir, '20200102T000000Z-b');
    writeFileSync(join(newest, 'report.json.3.abcdef.tmp'), '{}');
    const trusted = await rotateHistory(paths, 1_000_000, true);
    expect(tally().runs).toBe(NEWEST_RUNS_KEPT + 6);
    expect(trusted.listing.newest).toHaveLength(NEWEST_RUNS_KEPT);
    expect(await listStaleTmpFiles(paths, trusted.listing)).toEqual([
      join(newest, 'report.json.3.abcdef.tmp'),
    ]);
    expect(await listStaleTmpFiles(paths)).toEqual(await listStaleTmpFiles(paths, trusted.listing));
    // One byte a run, all counted; the last run is measured now, with its temp file's two bytes.
    expect(trusted.bytes).toBe(NEWEST_RUNS_KEPT + 6 + 2);
  });
});
