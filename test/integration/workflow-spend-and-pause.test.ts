import { afterEach, describe, expect, it } from 'vitest';
import type { StampedEvent } from '../../source/engine/events.js';
import { projectStatus } from '../../source/engine/status/project-status.js';
import { usd } from '../../source/ui/format/money.js';
import { headerRow } from '../../source/ui/panels/Header.js';
import { ledgerRows } from '../../source/ui/panels/Ledger.js';
import { reduceUi } from '../../source/ui/store/reduce.js';
import { initialUiState, type UiState } from '../../source/ui/store/ui-state.js';
import type { TestProject } from '../support/project.js';
import {
  happyScenario,
  runInProcess,
  scriptedGates,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';

// Issue 16 item 7: one source of truth for a workflow's spend and cap. The app's header (its store
// reduced from the run's events, as the app does), `ralphy status` and the ledgers the runner
// writes (WORKFLOW.json, STATE.json) agree to the cent, also after a resume.
// Issue 16 item 11: the pause key. The running agent finishes and its work is recorded; no next
// agent starts; the workflow is interrupted (resumable) where it stopped; `ralphy start` resumes.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

/** A workflow cap of $40, or none (then no cap shows anywhere: a milestone's is not the workflow's). */
function pricedProject(cap: number | null) {
  const p = workflowProject((config) => {
    config.workflow.max_cost_usd = cap;
  });
  const scenario = happyScenario();
  const priced = (steps: readonly unknown[] | undefined, cost: number) =>
    (steps ?? []).map((step) => ({ ...(step as Record<string, unknown>), cost }));
  p.scenario({
    ...scenario,
    spec: priced(scenario.spec, 0.25),
    orchestrator: priced(scenario.orchestrator, 0.03),
    builder: priced(scenario.builder, 0.07),
    qa: priced(scenario.qa, 0.11),
  } as typeof scenario);
  return p;
}

/** The app's store after these events, as a fresh app (a resumed run opens a new one). */
function appState(events: readonly StampedEvent[]): UiState {
  return events.reduce(reduceUi, initialUiState('workflow', 'greeting', Date.parse(events[0]?.at ?? '')));
}

const regexOf = (text: string) => text.replace(/[$.]/g, (c) => `\\${c}`);

const rowText = (row: ReturnType<typeof headerRow>) =>
  row.map((segment) => ('text' in segment ? segment.text : ' ')).join('');

/** What `ralphy status --json` prints for the workflow. */
async function statusOf(p: TestProject) {
  const result = await projectStatus(p.root, p.env, { preflight: false });
  if (result.kind !== 'status') throw new Error(`status is blocked: ${result.preflight.detail}`);
  const workflow = result.status.workflow;
  if (!workflow) throw new Error('status shows no workflow');
  return { workflow, totals: result.status.totals };
}

/** Every number shown for the run's spend, checked against the ledgers the runner wrote. */
async function expectOneSpend(p: TestProject, state: UiState, cap: number | null) {
  const w = workflowFile(p);
  const status = await statusOf(p);
  expect(state.header.costUsd).toBe(w.cost_usd);
  expect(status.workflow.cost_usd).toBe(w.cost_usd);
  expect(state.header.budgetUsd).toBe(cap);
  expect(status.workflow.max_cost_usd).toBe(cap);
  // The header's text and the Ledger panel's cost row show that same number and cap.
  const header = rowText(headerRow(state));
  const costRow = state.ledger ? rowText(ledgerRows(state, 80).at(-1) ?? []) : null;
  if (cap === null) {
    expect(header).toMatch(new RegExp(`${regexOf(usd(w.cost_usd))}$`));
    if (costRow !== null) expect(costRow).toMatch(new RegExp(`workflow cost +${regexOf(usd(w.cost_usd))} `));
  } else {
    expect(header).toContain(`${usd(w.cost_usd)} / ${usd(cap)}`);
    if (costRow !== null) expect(costRow).toContain(`${usd(w.cost_usd)}/${usd(cap)}`);
  }
  // The phases add up to the workflow's total; the tick ledger (STATE.json) holds the ticks' part.
  const phases = Object.values(w.phases).reduce((n: number, s: any) => n + s.cost_usd, 0);
  expect(phases).toBeCloseTo(w.cost_usd, 6);
  const ledger = p.json('relais/STATE.json');
  expect(ledger.totals.estimated_cost_usd).toBeCloseTo(w.phases.IMPLEMENTATION?.cost_usd ?? 0, 6);
  expect(status.totals?.estimated_cost_usd).toBeCloseTo(ledger.totals.estimated_cost_usd, 6);
  return w.cost_usd as number;
}

describe('the pause key and one spend everywhere', () => {
  it('p during the first builder: its tick is judged and kept, no next agent, IMPLEMENTATION interrupted; spend agrees everywhere; a resume goes on from there', async () => {
    const p = pricedProject(40);
    project = p;
    let paused = false;
    const first = await runInProcess(p, {
      gates: scriptedGates({ spec: YES, qa: YES }),
      pauseRequested: () => paused,
      onEvent: (event) => {
        if (event.type === 'agent.started' && event.role === 'builder') paused = true;
      },
    });
    expect(first.outcome.status).toBe('interrupted');
    const w = workflowFile(p);
    expect(w).toMatchObject({ state: 'IMPLEMENTATION', status: 'interrupted' });
    expect(w.tasks.map((t: any) => t.verdict)).toEqual(['verified', null]);
    // The builder that ran when p was pressed finished; nothing started after it.
    expect(p.calls().map((c) => c.role)).toEqual(['spec', 'orchestrator', 'builder']);
    expect(first.outcome.nextSteps.join(' ')).toContain('ralphy start');
    const spent = await expectOneSpend(p, appState(first.events), 40);
    expect(spent).toBeCloseTo(0.25 + 0.03 + 0.07, 6);

    const resumed = await runInProcess(p, { gates: scriptedGates({ resume: YES, qa: YES }) });
    expect(resumed.outcome.state).toBe('COMPLETED');
    expect(resumed.states[0]).toBe('IMPLEMENTATION');
    // The resumed app opens with what was spent, never $0.
    const opened = resumed.events.findIndex((e) => e.type === 'workflow.started');
    expect(appState(resumed.events.slice(0, opened + 1)).header.costUsd).toBe(spent);
    const total = await expectOneSpend(p, appState(resumed.events), 40);
    expect(total).toBeCloseTo(spent + 0.03 + 0.07 + 0.11, 6);
    expect(workflowFile(p).tasks.map((t: any) => t.verdict)).toEqual(['verified', 'verified']);
  }, 120_000);

  it('p during the spec agent: it finishes, the workflow stops before the spec gate, and a resume asks there', async () => {
    const p = pricedProject(null);
    project = p;
    let paused = false;
    const first = await runInProcess(p, {
      gates: scriptedGates({ spec: YES, qa: YES }),
      pauseRequested: () => paused,
      onEvent: (event) => {
        if (event.type === 'agent.started' && event.role === 'spec') paused = true;
      },
    });
    expect(first.outcome.status).toBe('interrupted');
    expect(workflowFile(p)).toMatchObject({ state: 'AWAITING_SPEC_VALIDATION', status: 'interrupted' });
    expect(workflowFile(p).completed_phases).toContain('SPECIFICATION');
    expect(p.calls().map((c) => c.role)).toEqual(['spec']);
    // Never FAILED or COMPLETED on the way: the only end is the interruption.
    expect(first.states).not.toContain('FAILED');
    await expectOneSpend(p, appState(first.events), null);

    const gates = scriptedGates({ resume: YES, spec: YES, qa: YES });
    const resumed = await runInProcess(p, { gates });
    expect(resumed.outcome.state).toBe('COMPLETED');
    expect(gates.asked.map((g) => g.gate).slice(0, 2)).toEqual(['resume', 'spec']);
    expect(p.calls().filter((c) => c.role === 'spec')).toHaveLength(1);
    await expectOneSpend(p, appState(resumed.events), null);
  }, 120_000);
});
