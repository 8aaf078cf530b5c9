import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { EngineEvent } from '../../source/engine/events.js';
import type { GateRequest } from '../../source/engine/gates.js';
import { BreakerPanel } from '../../source/ui/panels/BreakerPanel.js';
import { Lanes } from '../../source/ui/panels/Lanes.js';
import { KEY, renderApp, renderPanel, Script } from './helpers.js';

// Issue 19 in the app: each lane's breaker in its row, Tab to switch the Output panel between
// lanes (and back to all), and a gate a lane raises says which lane and task it is for. Every
// assertion reads the rendered frame: what the human sees must be true.

const lane = (name: string, task: number, phase = 'ticking'): EngineEvent =>
  ({
    type: 'lane.changed',
    lane: name,
    task,
    title: `Task ${task}`,
    phase,
    worktree: `/repo/relais/worktrees/${name}`,
    detail: null,
    cost_usd: 0,
  }) as EngineEvent;

const said = (text: string, from?: string): EngineEvent =>
  ({
    type: 'agent.output',
    role: 'builder',
    text,
    kind: 'text',
    ...(from ? { lane: from } : {}),
  }) as EngineEvent;

/** The Output panel's rows only (the Lanes panel shows each lane's last line too). */
function outputPanel(frame: string): string {
  const lines = frame.split('\n');
  const top = lines.findIndex((l) => l.includes('╭─ Output'));
  if (top < 0) return '';
  const at = lines[top]?.indexOf('╭─ Output') ?? 0;
  const rows: string[] = [];
  for (const line of lines.slice(top + 1)) {
    const part = line.slice(at);
    if (part.startsWith('╰')) break;
    rows.push(part);
  }
  return rows.join('\n');
}

function twoLanes(): Script {
  return new Script()
    .emit([lane('task-1-1', 1), lane('task-2-1', 2)])
    .emit({ type: 'log', level: 'info', message: 'the workflow speaks' })
    .emit(said('alpha writes src/a.ts', 'task-1-1'))
    .emit(said('bravo writes src/b.ts', 'task-2-1'));
}

describe('lanes in the app', () => {
  test('each lane shows its own breaker in its row; a lane breaker never takes over the Breaker panel', () => {
    const breaker = (from: string, state: string, attempts: number): EngineEvent =>
      ({
        type: 'breaker.changed',
        breaker: { state, attempts, max_attempts: 3, last_trigger: state === 'open' ? 'inactivity' : null },
        trigger: state === 'open' ? 'inactivity' : null,
        detail: null,
        log: [],
        lane: from,
      }) as EngineEvent;
    const s = twoLanes().emit([breaker('task-1-1', 'open', 3), breaker('task-2-1', 'closed', 0)]);
    const lanes = renderPanel(<Lanes state={s.state} width={110} height={8} />).frame();
    expect(lanes).toMatch(/task-1-1 ticking · task 1 Task 1 · .* · breaker OPEN 3\/3/);
    expect(lanes).toMatch(/task-2-1 ticking · task 2 Task 2 · .* · breaker closed 0\/3/);
    // The Breaker panel is the workflow's: nothing tripped there.
    expect(s.state.breaker).toBeNull();
    expect(renderPanel(<BreakerPanel state={s.state} width={60} height={5} />).frame()).toContain(
      'closed · no trip so far',
    );
  });

  test('Tab shows one lane’s output at a time, then every line again; the title, footer, Lanes panel and ? say which', async () => {
    const s = twoLanes();
    s.store.flush();
    const app = renderApp(s.store, { columns: 100, rows: 40 });
    await app.waitFor('Output · all lanes (Tab: one lane)');
    let frame = app.frame();
    expect(outputPanel(frame)).toContain('task-1-1 │ alpha writes src/a.ts');
    expect(outputPanel(frame)).toContain('task-2-1 │ bravo writes src/b.ts');
    expect(outputPanel(frame)).toContain('the workflow speaks');
    expect(frame).toMatch(/Tab\s+output: task-1-1/);

    app.press(KEY.tab);
    await app.waitFor('Output · lane task-1-1 · task 1 Task 1');
    frame = app.frame();
    expect(outputPanel(frame)).toContain('alpha writes src/a.ts');
    expect(outputPanel(frame)).not.toContain('bravo writes');
    expect(outputPanel(frame)).not.toContain('the workflow speaks');
    expect(frame).toContain('▸ task-1-1');
    expect(frame).toMatch(/Tab\s+output: task-2-1/);
    // A line of the other lane arrives: it is not shown here; one of this lane is.
    s.emit(said('bravo again', 'task-2-1')).emit(said('alpha again', 'task-1-1'));
    s.store.flush();
    await app.waitFor((f) => outputPanel(f).includes('alpha again'), 'alpha again in the output');
    expect(outputPanel(app.frame())).not.toContain('bravo again');

    app.press(KEY.tab);
    await app.waitFor('Output · lane task-2-1 · task 2 Task 2');
    frame = app.frame();
    expect(outputPanel(frame)).toContain('bravo writes src/b.ts');
    expect(outputPanel(frame)).toContain('bravo again');
    expect(outputPanel(frame)).not.toContain('alpha');
    expect(frame).toMatch(/Tab\s+output: all lanes/);

    app.press('?');
    await app.waitFor('Keys');
    expect(app.frame()).toMatch(/│ Tab\s+show every lane's output again \(now: lane task-2-1\)/);
    app.press('x');
    await app.waitFor((f) => !f.includes('any key closes this list'), 'the list closed');

    app.press(KEY.tab);
    await app.waitFor('Output · all lanes (Tab: one lane)');
    expect(outputPanel(app.frame())).toContain('task-1-1 │ alpha again');
    expect(outputPanel(app.frame())).toContain('task-2-1 │ bravo again');
    app.unmount();
  });

  test('best of N: a verified attempt shows as a candidate, the loser as discarded (its clock stopped), and the choice with its reason in the output', () => {
    const s = new Script()
      .emit([lane('task-1-1', 1, 'started'), lane('task-1-2', 1, 'started')], 2_000)
      .emit(
        {
          ...lane('task-1-1', 1, 'candidate'),
          detail: 'verified, 4 line(s) in 1 file(s); waits for attempt(s) 2',
        } as EngineEvent,
        5_000,
      )
      .emit({
        type: 'attempts.decided',
        task: 1,
        title: 'Task 1',
        winner: 'task-1-2',
        reason:
          'task-1-2 lands: the smallest verified diff of 2, 2 line(s) in 1 file(s); discarded: task-1-1 verified, 4 line(s) in 1 file(s)',
        candidates: [
          { lane: 'task-1-1', verified: true, lines_changed: 4, files_changed: 1, detail: 'verified' },
          { lane: 'task-1-2', verified: true, lines_changed: 2, files_changed: 1, detail: 'verified' },
        ],
      } as EngineEvent)
      .emit({ ...lane('task-1-1', 1, 'discarded'), detail: 'task-1-2 was chosen' } as EngineEvent)
      .emit(lane('task-1-2', 1, 'merging'), 60_000);
    const frame = renderPanel(<Lanes state={s.state} width={100} height={8} />).frame();
    expect(frame).toContain('1 running');
    // Ended at 7 s: its clock stays there while the winner's runs on.
    expect(frame).toContain('task-1-1 discarded · task 1 Task 1 · 00:07');
    expect(frame).toContain('task-1-2 was chosen');
    expect(frame).toContain('task-1-2 merging · task 1 Task 1 · 01:07');
    const lines = s.snapshot.output.buffer.range(0, 100).map((l) => l.text);
    expect(lines).toContain(
      'best of 2 for task 1: task-1-2 lands · task-1-2 lands: the smallest verified diff of 2, 2 line(s) in 1 file(s); discarded: task-1-1 verified, 4 line(s) in 1 file(s)',
    );
  });

  test('two lanes ask at once: the gate shows whose it is, y answers that one, then the other lane’s shows', async () => {
    const s = twoLanes();
    s.store.flush();
    const app = renderApp(s.store, { columns: 100, rows: 40 });
    const signal = new AbortController().signal;
    const gateOf = (from: string, task: number): GateRequest => ({
      gate: 'input',
      title: `Task ${task} "Task ${task}" could not land twice (lane ${from})`,
      lines: [`conflict in src/${task}.ts`],
      answer: 'yes_no',
      lane: from,
    });
    // As the engine asks: the event first, then the port.
    const ask = (from: string, task: number) => {
      const request = gateOf(from, task);
      s.emit({ type: 'gate.requested', ...request, lane: from } as EngineEvent);
      return app.controller.gates.ask(request, signal);
    };
    const first = ask('task-1-1', 1);
    const second = ask('task-2-1', 2);
    s.store.flush();
    await app.waitFor('from lane task-1-1 · task 1 "Task 1"');
    expect(app.frame()).toContain('could not land twice (lane task-1-1)');
    expect(app.frame()).toContain('conflict in src/1.ts');
    expect(app.frame()).not.toContain('conflict in src/2.ts');

    app.press('y');
    await expect(first).resolves.toMatchObject({ decision: 'approve', by: 'human' });
    await app.waitFor('from lane task-2-1 · task 2 "Task 2"');
    // The engine records lane 1's answer after the next gate is on screen: it stays there.
    s.emit({
      type: 'gate.resolved',
      gate: 'input',
      decision: 'approve',
      by: 'human',
      answer: null,
      lane: 'task-1-1',
    } as EngineEvent);
    s.store.flush();
    expect(s.state.gate).toMatchObject({ lane: 'task-2-1' });
    expect(app.frame()).toContain('conflict in src/2.ts');

    app.press('y');
    await expect(second).resolves.toMatchObject({ decision: 'approve', by: 'human' });
    app.unmount();
  });
});
