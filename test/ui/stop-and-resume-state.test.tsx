import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { Key } from 'ink';
import type { EngineEvent, WorkflowStartedEvent } from '../../source/engine/events.js';
import { createUiController } from '../../source/ui/keys/controller.js';
import { contextKeys } from '../../source/ui/keys/key-help.js';
import { keyAction } from '../../source/ui/keys/key-map.js';
import { Footer } from '../../source/ui/panels/Footer.js';
import { GatePanel } from '../../source/ui/panels/GatePanel.js';
import { Header } from '../../source/ui/panels/Header.js';
import { Lanes } from '../../source/ui/panels/Lanes.js';
import { PhaseTimeline } from '../../source/ui/panels/PhaseTimeline.js';
import { ResultPanel } from '../../source/ui/panels/ResultPanel.js';
import { Tasks } from '../../source/ui/panels/Tasks.js';
import { Verifications } from '../../source/ui/panels/Verifications.js';
import { finalResult } from '../../source/ui/store/selectors.js';
import { enter, NO_KEY, renderPanel, Script } from './helpers.js';

// Issue 16 item 6: what the app says after an abort, an interrupt and on a resume.

const started = (extra: Partial<WorkflowStartedEvent> = {}): EngineEvent => ({
  type: 'workflow.started',
  project: 'demo',
  prd_title: 'Todo app',
  base_branch: 'main',
  feature_branch: 'ralphy/todo',
  engine: 'ticks',
  resumed_from: null,
  max_cost_usd: 5,
  tasks: [
    { number: 1, title: 'Parse PRD', status: 'in_progress' },
    { number: 2, title: 'Render list', status: 'pending' },
  ],
  ...extra,
});

/** The controller takes Ink's full Key; the keys here need only the fields the key map reads. */
const key = (extra: Partial<Key> = {}) => ({ ...NO_KEY, ...extra }) as Key;

const lineWith = (frame: string, text: string) => frame.split('\n').find((l) => l.includes(text)) ?? '';

function running(): Script {
  return new Script().emit([
    started(),
    enter('IMPLEMENTATION'),
    { type: 'verify.started', template_id: 'unit', phase: 'fast', cmd: 'npm', args: ['test'] },
  ]);
}

function controllerOf(s: Script, calls: string[]) {
  return createUiController({
    store: s.store,
    onAbort: () => calls.push('abort'),
    onInterrupt: () => calls.push('interrupt'),
    onForceQuit: () => calls.push('force'),
  });
}

describe('after `a`: ABORTING while it stops, never after the end', () => {
  test('the header drops ABORTING and nothing spins once the workflow is FAILED', () => {
    const s = running();
    const calls: string[] = [];
    const controller = controllerOf(s, calls);
    controller.handleKey('a', key(), 10);
    controller.handleKey('y', key(), 10);
    expect(calls).toEqual(['abort']);
    expect(renderPanel(<Header state={s.state} width={120} />).frame()).toContain('ABORTING');
    expect(renderPanel(<Footer state={s.state} width={120} />).frame()).toContain('aborting…');
    // While it runs, the task and the verification spin (⠿ is the still frame).
    expect(
      lineWith(renderPanel(<Tasks state={s.state} width={90} height={5} />).frame(), 'Parse PRD'),
    ).toContain('⠿');

    s.emit({
      type: 'workflow.changed',
      state: 'FAILED',
      status: 'failed',
      reason: 'aborted',
      detail: 'aborted by the abort key (a) in the app',
    });
    const header = renderPanel(<Header state={s.state} width={120} />).frame();
    expect(header).toContain('FAILED');
    expect(header).not.toContain('ABORTING');
    expect(renderPanel(<Footer state={s.state} width={120} />).frame()).not.toContain('aborting');
    const tasks = renderPanel(<Tasks state={s.state} width={90} height={5} />).frame();
    expect(lineWith(tasks, 'Parse PRD')).not.toContain('⠿');
    const verify = renderPanel(<Verifications state={s.state} width={90} height={5} />).frame();
    expect(verify).toContain('unit');
    expect(verify).not.toContain('⠿');
  });
});

describe('Ctrl-C: a resumable interrupt, not an abort', () => {
  test('the header and footer say stopping and resumable; the phase shows interrupted, not running', () => {
    const s = running();
    const calls: string[] = [];
    const controller = controllerOf(s, calls);
    controller.handleKey('c', key({ ctrl: true }), 10);
    expect(calls).toEqual(['interrupt']);
    const header = renderPanel(<Header state={s.state} width={140} />).frame();
    expect(header).toContain('STOPPING (resumable)');
    expect(header).not.toContain('ABORTING');
    const footer = renderPanel(<Footer state={s.state} width={140} />).frame();
    expect(footer).toContain('ralphy start resumes');
    expect(footer).not.toContain('aborting');

    s.emit(enter('IMPLEMENTATION', 'interrupted'));
    const phases = renderPanel(<PhaseTimeline state={s.state} width={60} height={10} />).frame();
    expect(lineWith(phases, 'IMPLEMENTATION')).toContain('‖ IMPLEMENTATION');
    expect(phases).not.toContain('⠿');
  });
});

describe('p: pause after the running agent (issue 16 item 11)', () => {
  test('the header says PAUSING, the engine is asked once, the ? list offers p until pressed; the end clears it', () => {
    const s = running();
    const calls: string[] = [];
    const controller = createUiController({
      store: s.store,
      onAbort: () => calls.push('abort'),
      onPause: () => calls.push('pause'),
      onForceQuit: () => calls.push('force'),
    });
    expect(contextKeys(s.state).some((k) => k.keys.includes('p'))).toBe(true);
    expect(renderPanel(<Footer state={s.state} width={140} />).frame()).toContain('pause');
    controller.handleKey('p', key(), 10);
    controller.handleKey('p', key(), 10);
    expect(calls).toEqual(['pause']);
    expect(s.state.interaction.hint).toContain('Already pausing');
    expect(renderPanel(<Header state={s.state} width={140} />).frame()).toContain('PAUSING after this agent');
    expect(contextKeys(s.state).some((k) => k.keys.includes('p'))).toBe(false);

    // The engine stopped before the next step: interrupted, and the header no longer says pausing.
    s.emit(enter('QA', 'interrupted'));
    s.emit({
      type: 'run.finished',
      state: 'QA',
      status: 'interrupted',
      reason: null,
      detail: null,
      pr_url: null,
      next_steps: ['ralphy start /repo (it asks to resume at QA)'],
    });
    expect(renderPanel(<Header state={s.state} width={140} />).frame()).not.toContain('PAUSING');
    // The newcomer's pass, defect 16: a pause ends interrupted, never with the failure glyph.
    const result = finalResult(s.state);
    if (!result) throw new Error('no result after run.finished');
    const panel = renderPanel(<ResultPanel result={result} width={80} height={6} />).frame();
    expect(panel).toContain('‖ Paused at QA (resumable)');
    expect(panel).not.toContain('✗');
    expect(panel).toContain('Next: ralphy start /repo');
  });

  test('Ctrl-C ends "Stopped at ... (resumable)"; a failure keeps its ✗', () => {
    const stopped = running().emit({
      type: 'run.finished',
      state: 'IMPLEMENTATION',
      status: 'interrupted',
      reason: null,
      detail: null,
      pr_url: null,
      next_steps: [],
    });
    const stop = finalResult(stopped.state);
    expect(stop?.headline).toBe('Stopped at IMPLEMENTATION (resumable)');
    expect(stop?.interrupted).toBe(true);
    const failed = running().emit({
      type: 'run.finished',
      state: 'FAILED',
      status: 'failed',
      reason: 'agent_failed',
      detail: null,
      pr_url: null,
      next_steps: [],
    });
    const fail = finalResult(failed.state);
    if (!fail) throw new Error('no result');
    expect(renderPanel(<ResultPanel result={fail} width={80} height={4} />).frame()).toContain(
      '✗ Workflow FAILED (agent_failed)',
    );
  });

  test('with parallel lanes: the header counts the lanes still ending their tick; a paused lane ends its row', () => {
    const lane = (name: string, task: number, phase: string): EngineEvent =>
      ({
        type: 'lane.changed',
        lane: name,
        task,
        title: `Task ${task}`,
        phase,
        worktree: `/repo/relais/worktrees/${name}`,
        detail: phase === 'paused' ? 'the pause key' : null,
        cost_usd: 0,
      }) as EngineEvent;
    const s = running().emit([lane('task-1-1', 1, 'ticking'), lane('task-2-1', 2, 'ticking')]);
    const controller = createUiController({
      store: s.store,
      onAbort: () => undefined,
      onPause: () => undefined,
      onForceQuit: () => undefined,
    });
    controller.handleKey('p', key(), 10);
    const header = () => renderPanel(<Header state={s.state} width={160} />).frame();
    expect(header()).toContain('PAUSING: 2 lane(s) end their tick');

    // One lane landed its verified task, the other ended after its tick: neither counts any more.
    s.emit(lane('task-1-1', 1, 'landed'), 5_000).emit(lane('task-2-1', 2, 'paused'), 9_000);
    expect(s.state.lanes.rows.map((r) => [r.lane, r.phase, r.endedAtMs !== null])).toEqual([
      ['task-1-1', 'landed', true],
      ['task-2-1', 'paused', true],
    ]);
    expect(header()).toContain('PAUSING after this agent');
    const lanes = renderPanel(<Lanes state={s.state} width={100} height={6} />).frame();
    expect(lanes).toContain('0 running');
    expect(lanes).toContain('task-2-1 paused');
  });

  test('a loop has no pause key', () => {
    const s = new Script('loop');
    const calls: string[] = [];
    const controller = createUiController({
      store: s.store,
      onAbort: () => calls.push('abort'),
      onPause: () => calls.push('pause'),
      onForceQuit: () => calls.push('force'),
    });
    controller.handleKey('p', key(), 10);
    expect(calls).toEqual([]);
    expect(contextKeys(s.state).some((k) => k.keys.includes('p'))).toBe(false);
  });
});

describe('a resume', () => {
  test('keeps PLANNING in the phase list and the spend so far', () => {
    const s = new Script().emit([
      started({
        resumed_from: 'IMPLEMENTATION',
        completed_phases: ['PLANNING', 'SPECIFICATION', 'AWAITING_SPEC_VALIDATION'],
        cost_usd: 0.75,
      }),
      enter('IMPLEMENTATION'),
    ]);
    const phases = renderPanel(<PhaseTimeline state={s.state} width={60} height={12} />).frame();
    expect(lineWith(phases, 'PLANNING')).toContain('✓ PLANNING');
    expect(lineWith(phases, 'SPECIFICATION ')).toContain('✓ SPECIFICATION');
    expect(phases).toContain('3/7');
    expect(renderPanel(<Header state={s.state} width={140} />).frame()).toContain('$0.7500 / $5.00');
  });

  test('the resume question shows the phases the stopped workflow finished; `n` starts from none', () => {
    const s = new Script().emit([
      {
        type: 'workflow.resumable',
        state: 'IMPLEMENTATION',
        completed_phases: ['PLANNING', 'SPECIFICATION', 'AWAITING_SPEC_VALIDATION'],
      },
      {
        type: 'gate.requested',
        gate: 'resume',
        title: 'Resume the interrupted workflow?',
        lines: ['"Todo app" was interrupted in IMPLEMENTATION.'],
        answer: 'yes_no',
      },
    ]);
    const asked = renderPanel(<PhaseTimeline state={s.state} width={60} height={12} />).frame();
    expect(lineWith(asked, 'PLANNING')).toContain('✓ PLANNING');
    expect(lineWith(asked, 'SPECIFICATION ')).toContain('✓ SPECIFICATION');
    expect(lineWith(asked, 'IMPLEMENTATION')).not.toContain('✓');
    expect(asked).toContain('3/7');
    // `n`: a new workflow for the same PRD starts; the old one's phases are not its own, even
    // before (or without) its start.
    s.emit({ type: 'gate.resolved', gate: 'resume', decision: 'reject', by: 'human', answer: null });
    expect(renderPanel(<PhaseTimeline state={s.state} width={60} height={12} />).frame()).not.toContain('✓');
    s.emit(started({ resumed_from: null, completed_phases: [] }));
    const fresh = renderPanel(<PhaseTimeline state={s.state} width={60} height={12} />).frame();
    expect(fresh).not.toContain('✓');
    expect(lineWith(fresh, 'SPECIFICATION ')).not.toContain('✓');
  });

  test('`y` at the resume question: its note goes to the phase it resumes, not to a finished one', () => {
    const s = new Script().emit([
      {
        type: 'workflow.resumable',
        state: 'IMPLEMENTATION',
        completed_phases: ['SPECIFICATION', 'AWAITING_SPEC_VALIDATION'],
      },
      { type: 'gate.resolved', gate: 'resume', decision: 'approve', by: 'human', answer: null },
      started({
        resumed_from: 'IMPLEMENTATION',
        completed_phases: ['SPECIFICATION', 'AWAITING_SPEC_VALIDATION'],
      }),
      enter('IMPLEMENTATION'),
    ]);
    const gatesOf = (state: string) =>
      s.state.phases.find((p) => p.state === state)?.gates.map((g) => g.gate);
    expect(gatesOf('AWAITING_SPEC_VALIDATION')).toEqual([]);
    expect(gatesOf('IMPLEMENTATION')).toEqual(['resume']);
  });

  test('the task list shows at the resume question (task.updated before the workflow starts)', () => {
    const s = new Script().emit([
      {
        type: 'task.updated',
        number: 1,
        title: 'Parse PRD',
        status: 'completed',
        claimed: 'done',
        verified: 'SUCCESS a1b2c3d',
        verdict: 'verified',
      },
      {
        type: 'task.updated',
        number: 2,
        title: 'Render list',
        status: 'pending',
        claimed: null,
        verified: null,
        verdict: null,
      },
      {
        type: 'gate.requested',
        gate: 'resume',
        title: 'Resume the interrupted workflow?',
        lines: ['1/2 task(s) verified by the runner so far.'],
        answer: 'yes_no',
      },
    ]);
    const tasks = renderPanel(<Tasks state={s.state} width={90} height={5} />).frame();
    expect(lineWith(tasks, 'Parse PRD')).toContain('✓');
    expect(tasks).toContain('Render list');
    expect(tasks).toContain('1/2 verified');
  });
});

describe('an idle gate (issue 16 item 10)', () => {
  test('a task in progress does not spin while the run waits for a human answer', () => {
    const s = running().emit({
      type: 'gate.requested',
      gate: 'input',
      title: 'The orchestrator asks about task 1',
      lines: ['Which port?'],
      answer: 'text',
    });
    const tasks = renderPanel(<Tasks state={s.state} width={90} height={5} />).frame();
    expect(lineWith(tasks, 'Parse PRD')).not.toContain('⠿');
    s.emit({ type: 'gate.resolved', gate: 'input', decision: 'answer', by: 'human', answer: '8080' });
    const again = renderPanel(<Tasks state={s.state} width={90} height={5} />).frame();
    expect(lineWith(again, 'Parse PRD')).toContain('⠿');
  });
});

describe("the resume question's words (the newcomer's pass, defect 12)", () => {
  test('y resumes, n starts a new workflow at once: no reason is asked, since no agent reads it', () => {
    const s = new Script().emit({
      type: 'gate.requested',
      gate: 'resume',
      title: 'Resume the interrupted workflow?',
      lines: ['"Todo app" was interrupted in IMPLEMENTATION.'],
      answer: 'yes_no',
    });
    const gate = renderPanel(<GatePanel state={s.state} width={80} height={6} />).frame();
    expect(gate).toMatch(/y\s+resume\s+n\s+start a new workflow/);
    expect(renderPanel(<Footer state={s.state} width={140} />).frame()).toContain('start a new workflow');
    expect(keyAction(s.state, 'n', NO_KEY)).toEqual({ type: 'gate', decision: 'reject' });
    // The spec and QA gates still ask why: their next agent reads it.
    const spec = new Script().emit({
      type: 'gate.requested',
      gate: 'qa',
      title: 'Approve the QA report?',
      lines: [],
      answer: 'yes_no',
    });
    expect(keyAction(spec.state, 'n', NO_KEY)).toEqual({ type: 'reject_ask' });
  });
});
