import { afterEach, describe, expect, it } from 'vitest';
import { EngineBus } from '../../source/engine/events.js';
import { runTick } from '../../source/engine/tick/run-tick.js';
import { tempFolderCountsSubfolders } from '../support/history-workspace.js';
import { BUILDER_OK, builderWrites, TestProject, task, unsandboxed } from '../support/project.js';
import { sh } from './aftermath.js';

// The red team against history's tally (issue 17): the next tick trusts relais/history-tally.json
// instead of listing history, so a builder that forged it (a zero byte count) would keep history
// from ever rotating. The judge's guard of runner-owned files must catch it. The first tick of a
// project keeps a tally too (the transcripts' folder is made with the run's own).

let project: TestProject;
afterEach(() => project?.dispose());

/** One tick in process, as `relais run` makes it. */
async function tick(builder: Record<string, unknown>) {
  project.scenario({
    orchestrator: [{ result_json: task({ verification: { fast: [], slow: [] } }) }],
    builder: [builder],
  });
  await runTick({
    root: project.root,
    bus: new EngineBus(),
    signal: new AbortController().signal,
    env: project.env,
    command: 'run',
  });
  return project.report();
}

// Skipped, with this reason, where the temp folder's folders do not count their subfolders (btrfs,
// a merged overlayfs folder): no tally is ever kept there, by design, and each tick lists history
// as unit/history tests. Here (ext4, as on CI) they run.
const COUNTS = tempFolderCountsSubfolders();

describe('red team: forging the history tally', () => {
  it.skipIf(!COUNTS)(
    'a builder that rewrites relais/history-tally.json is stopped, and no tick trusts the forged count',
    async () => {
      project = TestProject.create(
        undefined,
        unsandboxed('proves the judge (second fence) against a write into relais/ the sandbox refuses'),
      );
      expect((await tick(builderWrites({ 'src/a.ts': 'export const a = 2;\n' }))).code).toBe('SUCCESS');
      const kept = project.read('relais/history-tally.json');
      const forged = JSON.stringify({ ...JSON.parse(kept), bytes: 0, unsaved: [], unmeasured: [] });
      const report = await tick({
        actions: [
          { write: 'src/a.ts', content: 'export const a = 3;\n' },
          sh(`printf '%s' '${forged}' > relais/history-tally.json`),
        ],
        result_json: BUILDER_OK,
      });
      expect(report.code).toBe('STOP_RUNNER_OWNED_MUTATION');
      expect(report.detail).toBe('runner-owned path modified: relais/history-tally.json');
      // The guard puts the file back (as it does the config, redteam/fence-widening); the stopped
      // tick then keeps its own tally, counted from what it knew, never from the forged file.
      const after = project.json('relais/history-tally.json');
      expect(after.bytes).toBeGreaterThan(0);
      expect(after.runs).toBe(JSON.parse(kept).runs + 1);
    },
  );
});
