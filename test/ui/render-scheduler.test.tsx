import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { GateRequest } from '../../source/engine/gates.js';
import { enter, renderApp, Script, settle } from './helpers.js';

// Issue 16 item 10, issue 17: what the app redraws when nothing happens. While an agent runs, its
// stopwatches move: one redraw a second, never more. At a gate with nothing at work (no agent, no
// lane) and once the work is over, nothing keeps time: no redraw at all. The front end's clock
// calls `store.tick()` once a second; here the test is that clock (ManualTimers), and Ink's frames
// are counted.

const request: GateRequest = {
  gate: 'spec',
  title: 'Approve the specification and tasks?',
  lines: ['Files generated:', '  - specs/SPEC.md'],
  answer: 'yes_no',
};

/** One second of the front end's clock: time moves, the clock ticks, the batch is flushed. */
function second(s: Script): void {
  s.timers.advance(1000);
  s.store.tick();
  s.timers.advance(0);
}

describe('the render scheduler', () => {
  test('an idle gate: no frame while the human reads; a key redraws at once, with the time of now', async () => {
    const s = new Script().emit([
      { type: 'run.started', run_id: 'r', command: 'start', project: 'demo' },
      enter('SPECIFICATION'),
    ]);
    s.store.flush();
    const app = renderApp(s.store, { columns: 80, rows: 24 });
    void app.controller.gates.ask(request, new AbortController().signal);
    s.emit(enter('AWAITING_SPEC_VALIDATION', 'waiting'));
    s.timers.advance(100);
    await app.waitFor((f) => f.includes('Approve the specification') && f.includes('approve'), 'the gate');
    await settle();
    const notified: number[] = [];
    s.store.subscribe(() => notified.push(s.timers.nowMs));
    const frame = app.frame();
    const before = app.writes();
    for (let n = 1; n <= 5; n++) second(s);
    await settle();
    expect(notified).toHaveLength(0);
    expect(app.writes() - before).toBe(0);
    expect(app.frame()).toBe(frame);
    // The stopwatch on screen is the gate's opening; the next redraw (a scroll key here) shows now.
    const shown = frame.match(/AWAITING_SPEC_VALIDATION · (\d\d:\d\d)/)?.[1];
    expect(shown).toBeDefined();
    s.store.setInteraction({ hint: 'scrolled' });
    await app.waitFor((f) => f !== frame, 'the frame after a key');
    const after = app.frame().match(/AWAITING_SPEC_VALIDATION · (\d\d:\d\d)/)?.[1];
    expect(after).toBeDefined();
    expect(after).not.toBe(shown);
    expect(app.frame()).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⠿]/);
    app.unmount();
  });

  test('an agent at work: one frame a second, only its clocks change in it', async () => {
    const s = new Script().emit([
      { type: 'run.started', run_id: 'r', command: 'start', project: 'demo' },
      enter('IMPLEMENTATION'),
      { type: 'agent.started', role: 'builder', attempt: 1, command: 'claude', model: 'sonnet' },
    ]);
    s.store.flush();
    const app = renderApp(s.store, { columns: 80, rows: 24 });
    await app.waitFor('IMPLEMENTATION');
    await settle();
    const notified: number[] = [];
    s.store.subscribe(() => notified.push(s.timers.nowMs));
    const frames: string[] = [app.frame()];
    const before = app.writes();
    for (let n = 1; n <= 5; n++) {
      second(s);
      await app.waitFor((f) => f !== frames.at(-1), `the frame of second ${n}`);
      frames.push(app.frame());
    }
    await settle();
    expect(notified).toHaveLength(5);
    expect(app.writes() - before).toBe(5);
    // From one frame to the next, the lines that change are the clocks' (the header's stopwatch,
    // the running phase's and the agent's time), nothing else.
    for (let i = 1; i < frames.length; i++) {
      const a = (frames[i - 1] ?? '').split('\n');
      const b = (frames[i] ?? '').split('\n');
      const changed = b.filter((line, index) => line !== a[index]);
      expect(changed.length).toBeGreaterThanOrEqual(1);
      expect(changed.length).toBeLessThanOrEqual(3);
      expect(changed[0]).toMatch(/ralphy +demo · IMPLEMENTATION .*· \d\d:\d\d/);
      for (const line of changed) expect(line).toMatch(/\d\d:\d\d|\d+(\.\d)?s\b/);
    }
    app.unmount();
  });

  test('a burst of events within 100 ms is one frame', async () => {
    const s = new Script().emit(enter('IMPLEMENTATION'));
    s.store.flush();
    const app = renderApp(s.store, { columns: 80, rows: 24 });
    await app.waitFor('IMPLEMENTATION');
    const before = app.writes();
    for (let i = 0; i < 300; i++)
      s.emit({ type: 'agent.output', role: 'builder', text: `line ${i}`, kind: 'text' });
    s.timers.advance(100);
    await app.waitFor('line 299');
    await settle();
    expect(app.writes() - before).toBe(1);
    app.unmount();
  });

  test('once the work is over, the clock draws nothing', async () => {
    const s = new Script().emit([
      { type: 'run.started', run_id: 'r', command: 'start', project: 'demo' },
      enter('SPECIFICATION'),
    ]);
    s.store.setInteraction({ over: true });
    const app = renderApp(s.store, { columns: 80, rows: 24 });
    await app.waitFor('q  quit');
    await settle();
    const before = app.writes();
    let notified = 0;
    s.store.subscribe(() => notified++);
    for (let n = 0; n < 5; n++) second(s);
    await settle();
    expect(notified).toBe(0);
    expect(app.writes()).toBe(before);
    expect(s.timers.pending).toBe(0);
    app.unmount();
  });
});
