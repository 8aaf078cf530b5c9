import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineBus } from '../../source/engine/events.js';
import { runTick } from '../../source/engine/tick/run-tick.js';
import { folderSizeBytes } from '../../source/engine/workspace/history.js';
import { tempFolderCountsSubfolders } from '../support/history-workspace.js';
import { builderWrites, TestProject, task } from '../support/project.js';

// Issue 17: a tick keeps a tally of relais/history when it ends, and the next tick trusts it
// instead of listing every run folder. Real ticks, in process (so that the test can forge the
// tally between them). The tally is kept when REPORT.json is stamped after the tick's own run
// folder, which two agent processes apart it always is (unit/history-tally: when it is not).

let project: TestProject;
afterEach(() => project?.dispose());

async function tickWith(content: string) {
  project.scenario({
    orchestrator: [{ result_json: task({ verification: { fast: [], slow: [] } }) }],
    builder: [builderWrites({ 'src/a.ts': content })],
  });
  const result = await runTick({
    root: project.root,
    bus: new EngineBus(),
    signal: new AbortController().signal,
    env: project.env,
    command: 'run',
  });
  expect(project.report().code).toBe('SUCCESS');
  return result;
}

const tally = () => project.json('relais/history-tally.json');
const runsOnDisk = () =>
  readdirSync(join(project.root, 'relais/history'), { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== 'agents')
    .map((e) => e.name)
    .sort();

// Skipped, with this reason, where the temp folder's folders do not count their subfolders (btrfs,
// a merged overlayfs folder): no tally is ever kept there, by design, and each tick lists history
// as unit/history tests. Here (ext4, as on CI) they run.
const COUNTS = tempFolderCountsSubfolders();

describe('the history tally across real ticks', () => {
  it.skipIf(!COUNTS)(
    'is kept by each tick, trusted by the next, and given up as soon as history changes by hand',
    async () => {
      project = TestProject.create();
      await tickWith('export const a = 2;\n');
      const first = project.report().run_id as string;
      expect(tally()).toMatchObject({ runs: 1, bytes: 0, unmeasured: [first], newest: [first] });

      // Trusted: the next tick believes the tally's byte count (forged here in relais/, which agents
      // cannot write) and measures only the first tick's folder.
      project.write('relais/history-tally.json', JSON.stringify({ ...tally(), bytes: 1_000 }));
      await tickWith('export const a = 3;\n');
      const second = project.report().run_id as string;
      const firstBytes = folderSizeBytes(join(project.root, 'relais/history', first));
      expect(firstBytes).toBeGreaterThan(0);
      expect(tally()).toMatchObject({
        runs: 2,
        bytes: 1_000 + firstBytes,
        unmeasured: [second],
        unsaved: [[first, firstBytes]],
      });

      // A run folder added by hand changes history's stamp: listed, and the forged count is gone.
      project.write('relais/history/20200101T000000Z-hand/report.md', 'x'.repeat(500));
      await tickWith('export const a = 4;\n');
      const runs = runsOnDisk();
      expect(tally().runs).toBe(runs.length);
      const measured = runs
        .filter((r) => r !== project.report().run_id)
        .reduce((sum, r) => sum + folderSizeBytes(join(project.root, 'relais/history', r)), 0);
      expect(tally().bytes).toBe(measured);
    },
  );

  it('a file where the transcripts folder goes costs the tally, never the tick', async () => {
    project = TestProject.create();
    project.write('relais/history/agents', 'not a folder\n');
    await tickWith('export const a = 2;\n');
    expect(project.read('relais/history/agents')).toBe('not a folder\n');
  });

  it('with history off, no tally is kept', async () => {
    project = TestProject.create(undefined, (c) => {
      c.history.enabled = false;
    });
    await tickWith('export const a = 2;\n');
    expect(project.exists('relais/history-tally.json')).toBe(false);
  });
});
