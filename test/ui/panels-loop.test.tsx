import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { EngineEvent, LoopTickEvent } from '../../source/engine/events.js';
import { CurrentTask } from '../../source/ui/panels/CurrentTask.js';
import { Ledger } from '../../source/ui/panels/Ledger.js';
import { TickTimeline } from '../../source/ui/panels/TickTimeline.js';
import { Verdicts } from '../../source/ui/panels/Verdicts.js';
import { renderApp, renderPanel, Script } from './helpers.js';

const lineWith = (frame: string, text: string) => frame.split('\n').find((l) => l.includes(text)) ?? '';

const runStarted: EngineEvent = { type: 'run.started', run_id: 'r1', command: 'loop', project: 'demo' };
const proposed: EngineEvent = {
  type: 'task.proposed',
  task_id: 'T-7',
  milestone_id: 'M1',
  task_kind: 'execute',
  intent: 'Add a parser for the TODO file format, with tests for empty files and comments',
  mode: 'claude_code',
};

function loopTick(tick: number, verdict: 'success' | 'stop' | 'blocked', code: string): EngineEvent {
  return {
    type: 'loop.tick',
    tick,
    run_id: `r${tick}`,
    verdict,
    code: code as LoopTickEvent['code'],
    task_id: `T-${tick}`,
    milestone: 'M1',
    blast_radius_line: '1 file, +3/-1, 0 new',
    cost_usd: 0.02,
    commit: verdict === 'success' ? 'abc1234' : null,
    control: null,
  };
}

describe('TickTimeline', () => {
  test('finished ticks with verdicts and the running tick with its phase', () => {
    const s = new Script('loop')
      .emit(runStarted, 42_000)
      .emit(loopTick(1, 'success', 'SUCCESS'))
      .emit(runStarted, 10_000)
      .emit(loopTick(2, 'stop', 'STOP_VERIFY_FAILED_FAST'))
      .emit(runStarted)
      .emit({ type: 'phase.changed', phase: 'BUILD' }, 12_000);
    s.wait(0);
    const view = renderPanel(<TickTimeline state={s.state} width={70} height={6} />);
    const frame = view.frame();
    expect(lineWith(frame, '#1')).toMatch(/✓ #1 SUCCESS\s+T-1\s+42s\s+\$0\.0200/);
    expect(lineWith(frame, '#2')).toMatch(/✗ #2 STOP_VERIFY_FAILED_FAST\s+T-2\s+10s/);
    expect(lineWith(frame, '#3')).toMatch(/⠿ #3 BUILD\s+12s/);
    expect(frame).toContain('2 done');
  });

  test('many ticks: the newest stay in view', () => {
    const s = new Script('loop');
    for (let i = 1; i <= 30; i++) s.emit([runStarted, loopTick(i, 'success', 'SUCCESS')]);
    const view = renderPanel(<TickTimeline state={s.state} width={70} height={6} />);
    expect(view.frame()).toContain('#30');
    expect(view.frame()).not.toContain('#1 ');
    expect(view.frame()).toMatch(/… \d+ earlier/);
  });
});

describe('CurrentTask', () => {
  test('waiting for the orchestrator, then the proposed task with its intent wrapped', () => {
    const s = new Script('loop').emit(runStarted);
    const view = renderPanel(<CurrentTask state={s.state} width={50} height={6} />);
    expect(view.frame()).toContain('waiting for the orchestrator');
    s.emit(proposed);
    view.rerender(<CurrentTask state={s.state} width={50} height={6} />);
    const frame = view.frame();
    expect(frame).toContain('T-7 [M1] execute · claude_code');
    expect(frame).toContain('Add a parser for the TODO file');
    expect(frame).toContain('empty files');
  });
});

describe('Verdicts', () => {
  test('counts per verdict and the last outcome with its remediation', () => {
    const s = new Script('loop')
      .emit([runStarted, loopTick(1, 'success', 'SUCCESS'), runStarted])
      .emit({
        type: 'tick.finished',
        run_id: 'r2',
        verdict: 'blocked',
        code: 'BLOCKED_BUDGET_CAP',
        remediation: 'Raise the cap or start a new milestone.',
        detail: null,
        blast_radius_line: '0 files',
        commit: null,
        report_path: 'relais/REPORT.md',
      })
      .emit(loopTick(2, 'blocked', 'BLOCKED_BUDGET_CAP'));
    const view = renderPanel(<Verdicts state={s.state} width={60} height={8} />);
    const frame = view.frame();
    expect(frame).toMatch(/✓ 1 success\s+✗ 0 stop\s+⊘ 1 blocked/);
    expect(frame).toContain('⊘ last: BLOCKED_BUDGET_CAP');
    expect(frame).toContain('Fix: Raise the cap or start a new milestone.');
    expect(frame).toContain('report: relais/REPORT.md');
  });
});

describe('Ledger', () => {
  test('each budget against its cap, nearly spent ones flagged', () => {
    const s = new Script('loop');
    const view = renderPanel(<Ledger state={s.state} width={60} height={8} />);
    expect(view.frame()).toContain('no ledger yet');
    s.emit({
      type: 'ledger.updated',
      milestone: 'M1',
      used: { ticks: 9, orchestrator_calls: 4, builder_calls: 3, verify_runs: 6, cost_usd: 0.5 },
      caps: { ticks: 10, orchestrator_calls: 40, builder_calls: 20, verify_runs: 60, cost_usd: 5 },
    });
    view.rerender(<Ledger state={s.state} width={60} height={8} />);
    const frame = view.frame();
    expect(frame).toContain('M1');
    expect(lineWith(frame, 'ticks')).toMatch(/ticks\s+9\/10 █+░*/);
    expect(lineWith(frame, 'cost')).toContain('$0.5000/$5.00');
    expect(lineWith(frame, 'orchestrator')).toContain('4/40');
  });
});

describe('the loop app', () => {
  test('composes the tick panels with output, and shows the final result', async () => {
    const s = new Script('loop')
      .emit([runStarted, { type: 'phase.changed', phase: 'ORCHESTRATE' }, proposed])
      .emit({ type: 'agent.started', role: 'builder', attempt: 1, command: 'claude', model: 'sonnet' })
      .emit({ type: 'agent.tool', role: 'builder', tool: 'Edit', target: 'src/parser.ts' });
    const app = renderApp(s.store, { columns: 100, rows: 30 });
    s.store.flush();
    await app.waitFor('Output · builder');
    let frame = app.frame();
    for (const title of ['Ticks', 'Verdicts', 'Ledger', 'Current task', 'Output · builder'])
      expect(frame).toContain(title);
    expect(frame).toContain('▸ Edit src/parser.ts');
    expect(frame).toContain('relais');
    expect(frame).toContain('tick 1 · ORCHESTRATE');
    s.emit([
      loopTick(1, 'success', 'SUCCESS'),
      {
        type: 'loop.finished',
        mode: 'milestone',
        ticks: 1,
        verdicts: { SUCCESS: 1 },
        cost_usd: 0.02,
        calls: 2,
        reason: 'the milestone is done',
        exit: 'success',
      },
    ]);
    s.store.flush();
    await app.waitFor('Loop success');
    frame = app.frame();
    expect(frame).toContain('✓ Loop success (milestone): 1 tick(s), 2 agent call(s)');
    expect(frame).toContain('Stopped because the milestone is done');
    app.unmount();
  });
});
