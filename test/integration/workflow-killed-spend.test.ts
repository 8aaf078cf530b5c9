import { afterEach, describe, expect, it } from 'vitest';
import type { StampedEvent } from '../../source/engine/events.js';
import { headerRow } from '../../source/ui/panels/Header.js';
import { spendLabel } from '../../source/ui/panels/PhaseTimeline.js';
import { reduceUi } from '../../source/ui/store/reduce.js';
import { initialUiState, type UiState } from '../../source/ui/store/ui-state.js';
import { survivorsOf } from '../support/host-pid.js';
import type { TestProject } from '../support/project.js';
import {
  happyScenario,
  runInProcess,
  scriptedGates,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';

// Issue 4: a builder call interrupted (Ctrl-C) before Claude Code reported its cost was shown as
// $1.50 of real spend (its --max-budget-usd), once per interruption. Its maximum still guards the
// caps, but every display now says which part was reported spent and which is only held for a
// call of unknown cost. The builder here is a real child process (the scripted `claude`), killed
// by the runner when the run's signal aborts.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

/** Spec $0.25, orchestrator $0.03 a call, builder $0.07 a call, QA $0.11; builder max $1.50 (default). */
function pricedProject() {
  const p = workflowProject((config) => {
    config.workflow.max_cost_usd = 40;
  });
  const scenario = happyScenario();
  const priced = (steps: readonly unknown[] | undefined, cost: number) =>
    (steps ?? []).map((step) => ({ ...(step as Record<string, unknown>), cost }));
  const hang = { say: 'Working.', hang: true };
  const orchestrator = scenario.orchestrator ?? [];
  p.scenario({
    ...scenario,
    spec: priced(scenario.spec, 0.25),
    // Each interrupted tick spends its orchestrator answer; the resumed tick asks again.
    orchestrator: priced([orchestrator[0], orchestrator[0], ...orchestrator], 0.03),
    builder: priced([hang, hang, ...(scenario.builder ?? [])], 0.07),
    qa: priced(scenario.qa, 0.11),
  } as typeof scenario);
  return p;
}

function appState(events: readonly StampedEvent[]): UiState {
  return events.reduce(reduceUi, initialUiState('workflow', 'greeting', Date.parse(events[0]?.at ?? '')));
}

const rowText = (row: ReturnType<typeof headerRow>) =>
  row.map((segment) => ('text' in segment ? segment.text : ' ')).join('');

/** Runs until the hanging builder speaks, then interrupts (the app's Ctrl-C aborts this signal). */
async function interruptBuilder(p: TestProject, resume: boolean) {
  const interrupt = new AbortController();
  const run = await runInProcess(p, {
    gates: scriptedGates({ ...(resume ? { resume: YES } : {}), spec: YES, qa: YES }),
    signal: interrupt.signal,
    onEvent: (event) => {
      if (event.type === 'agent.output' && event.role === 'builder') interrupt.abort();
    },
  });
  expect(run.outcome.status).toBe('interrupted');
  return run;
}

describe('an interrupted builder call is held, not spent (issue 4)', () => {
  it('two Ctrl-Cs during the builder: the header, the phase row, ralphy status and both ledgers say $1.50 held per call, not spent', async () => {
    const p = pricedProject();
    project = p;

    const first = await interruptBuilder(p, false);
    // The builder process was really killed, not left running.
    expect(survivorsOf(p.scenarioPath)).toEqual([]);
    let w = workflowFile(p);
    // The cap still sees the builder's maximum...
    expect(w.cost_usd).toBeCloseTo(0.25 + 0.03 + 1.5, 6);
    // ...marked as held for one call of unknown cost.
    expect(w).toMatchObject({ unreported_usd: 1.5, unreported_calls: 1 });
    expect(w.phases.IMPLEMENTATION).toMatchObject({ calls: 2, unreported_usd: 1.5, unreported_calls: 1 });
    let header = rowText(headerRow(appState(first.events)));
    expect(header).toContain('$0.2800 spent + $1.50 held for 1 call of unknown cost / $40.00 (4%)');
    expect(header).not.toContain('$1.78');

    const second = await interruptBuilder(p, true);
    expect(survivorsOf(p.scenarioPath)).toEqual([]);
    w = workflowFile(p);
    expect(w.cost_usd).toBeCloseTo(0.25 + 0.06 + 3, 6);
    expect(w).toMatchObject({ unreported_usd: 3, unreported_calls: 2 });
    // The resumed app opens from the recorded split and keeps it.
    header = rowText(headerRow(appState(second.events)));
    expect(header).toContain('$0.3100 spent + $3.00 held for 2 calls of unknown cost / $40.00 (8%)');
    const phase = appState(second.events).phases.find((r) => r.state === 'IMPLEMENTATION');
    expect(spendLabel(phase?.spend)).toBe('$0.0600 + $3.00 held (2 unknown) 4 calls');

    // The tick ledger (STATE.json): $3.06 against the milestone cap, of which $3.00 held.
    const ledger = p.json('relais/STATE.json');
    expect(ledger.totals).toMatchObject({ orchestrator_calls: 2, builder_calls: 2, unreported_calls: 2 });
    expect(ledger.totals.estimated_cost_usd).toBeCloseTo(3.06, 6);
    expect(ledger.totals.unreported_usd).toBeCloseTo(3, 6);

    // The interrupted tick's REPORT.md says it too.
    expect(p.read('relais/REPORT.md')).toContain(
      'cost $0.0600 spent + $3.00 held for 2 calls of unknown cost',
    );

    // `ralphy status` (the built CLI) says the same, in the same words.
    const status = p.cliSync(['status']);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(
      'Total:     $0.3100 spent + $3.00 held for 2 calls of unknown cost, 5 agent calls, cap $40.00',
    );
    expect(status.stdout).toContain(
      'Spend:     IMPLEMENTATION $0.0600 spent + $3.00 held for 2 calls of unknown cost, 4 agent calls',
    );
    expect(status.stdout).toContain(
      '$0.0600 spent + $3.00 held for 2 calls of unknown cost, milestone cap $80.00',
    );
    expect(status.stdout).toContain('All time:  2 ticks, 4 orchestrator and builder calls,');
    for (const line of status.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(100);

    // A resume to the end: the reported calls are added, the two unknown ones stay held.
    const done = await runInProcess(p, { gates: scriptedGates({ resume: YES, qa: YES }) });
    expect(done.outcome.state).toBe('COMPLETED');
    w = workflowFile(p);
    expect(w).toMatchObject({ unreported_usd: 3, unreported_calls: 2 });
    expect(w.cost_usd).toBeCloseTo(0.25 + 0.06 + 3 + 2 * (0.03 + 0.07) + 0.11, 6);
    expect(rowText(headerRow(appState(done.events)))).toContain(
      '$0.6200 spent + $3.00 held for 2 calls of unknown cost / $40.00',
    );
  }, 180_000);
});
