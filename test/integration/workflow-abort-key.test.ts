import { afterEach, describe, expect, it } from 'vitest';
import { phaseRows } from '../../source/ui/panels/PhaseTimeline.js';
import { reduceUi } from '../../source/ui/store/reduce.js';
import { initialUiState } from '../../source/ui/store/ui-state.js';
import type { TestProject } from '../support/project.js';
import {
  happyScenario,
  QA_MD,
  runInProcess,
  scriptedGates,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';

// The newcomer's defect 6: the app's abort key (`a`, then `y`) pressed while the QA agent runs or
// while its gate waits. The human aborted: the agent's work is never committed after that, and
// the record says who aborted, never "nobody could answer". The key is wired as `ralphy start`
// wires it (abortRequested / abortedBy); the agent is the fake claude of test/support.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const phaseText = (events: Parameters<typeof reduceUi>[1][], root: string) =>
  phaseRows(events.reduce(reduceUi, initialUiState('workflow', root, 0)), 70)
    .map((row) => row.map((seg) => ('text' in seg ? seg.text : '')).join(''))
    .join('\n');

/** A workflow whose QA agent writes its report and finishes (its commit is what an abort must stop). */
function qaWritesItsReport(): TestProject & { ghLog: string; remote: string } {
  const made = workflowProject();
  const scenario = happyScenario();
  scenario.qa = [
    {
      actions: [{ write: 'specs/QA_REPORT.md', content: QA_MD }],
      say: 'Writing the QA report.',
      result: 'QA_REPORT.md written.\n\nEXIT_SIGNAL: true',
    },
  ];
  made.scenario(scenario);
  return made;
}

describe('the abort key during QA', () => {
  it('while the QA agent runs: its report is not committed, and the workflow ends aborted by the key', async () => {
    // The QA agent writes its report and finishes; the abort comes as the runner judges it, before
    // the commit (the race a real agent loses when `y` lands as it ends).
    project = qaWritesItsReport();
    const abortKey = new AbortController();
    const run = await runInProcess(project, {
      gates: scriptedGates({ spec: YES, qa: YES }),
      abortKey,
      onEvent: (e) => {
        if (e.type === 'judge.finished' && e.touched_paths.includes('specs/QA_REPORT.md')) abortKey.abort();
      },
    });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'aborted' });
    expect(run.outcome.detail).toContain('aborted by the abort key (a) in the app');
    expect(project.git('log', '--format=%s', 'main..HEAD')).not.toContain('QA report');
    const workflow = workflowFile(project);
    expect(workflow.gate_decisions.map((g: any) => g.gate)).not.toContain('qa');
    expect(run.events.some((e) => e.type === 'gate.requested' && e.gate === 'qa')).toBe(false);
  }, 180_000);

  it('confirmed while the commit is being made: the branch never moves to the QA commit', async () => {
    project = qaWritesItsReport();
    const abortKey = new AbortController();
    // The `a` key is pressed as the QA agent's work is judged, and its `y` is confirmed only after
    // the runner's first look: the first question after that answers "not confirmed", every later
    // one "confirmed" — the window between the judge and the branch moving.
    let asked = 0;
    let pressed = false;
    const run = await runInProcess(project, {
      gates: scriptedGates({ spec: YES, qa: YES }),
      abortKey,
      abortConfirmed: () => pressed && ++asked > 1,
      onEvent: (e) => {
        if (e.type === 'judge.finished' && e.touched_paths.includes('specs/QA_REPORT.md')) {
          pressed = true;
          abortKey.abort();
        }
      },
    });
    expect(asked).toBeGreaterThan(1);
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'aborted' });
    expect(project.git('log', '--format=%s', 'main..HEAD')).not.toContain('QA report');
    expect(project.git('status', '--porcelain')).toBe('');
    expect(workflowFile(project).gate_decisions.map((g: any) => g.gate)).not.toContain('qa');
  }, 180_000);

  it('while the QA gate waits: recorded as aborted by the key, not "nobody could answer"', async () => {
    project = workflowProject();
    project.scenario(happyScenario());
    const abortKey = new AbortController();
    const run = await runInProcess(project, {
      // The app's gate port ends the wait as "nobody" when the signal aborts (keyboard-gates.ts).
      gates: scriptedGates({
        spec: YES,
        qa: () => {
          abortKey.abort();
          return { decision: 'reject', by: 'nobody' };
        },
      }),
      abortKey,
    });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'aborted' });
    const qa = workflowFile(project).gate_decisions.filter((g: any) => g.gate === 'qa');
    expect(qa).toEqual([
      expect.objectContaining({
        decision: 'aborted',
        by: 'human',
        reason: 'aborted by the abort key (a) in the app',
      }),
    ]);
    const text = phaseText(run.events, project.root);
    expect(text).toContain('qa: aborted by the abort key (a) in the app');
    expect(text).not.toContain('nobody could answer');
  }, 180_000);
});
