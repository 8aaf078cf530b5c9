import v8 from 'node:v8';
import vm from 'node:vm';
import { afterEach, describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  // Ink renders differently under CI (is-in-ci is read when ink is imported).
  delete process.env.CI;
});

import { render } from 'ink-testing-library';
import { App } from '../../source/ui/components/App.js';
import { createUiController } from '../../source/ui/keys/controller.js';
import { createUiStore, DEFAULT_OUTPUT_CAP } from '../../source/ui/store/create-store.js';
import { plain, renderApp, Script, settle, T0 } from './helpers.js';

afterEach(() => {
  vi.useRealTimers();
});

const output = (text: string) => ({ type: 'agent.output', role: 'dev', text, kind: 'text' }) as const;

describe('flush batching', () => {
  test('listeners hear at most one notification per 100 ms, whatever the event rate (fake timers)', () => {
    vi.useFakeTimers({ now: T0 });
    const store = createUiStore({ view: 'workflow', project: 'demo' });
    const heard: number[] = [];
    store.subscribe(() => heard.push(Date.now() - T0));
    const at = new Date(T0).toISOString();

    for (let i = 0; i < 500; i++) store.dispatch({ ...output(`line ${i}`), at });
    expect(heard).toEqual([]); // nothing synchronous: the engine's emit never waits on a redraw
    vi.advanceTimersByTime(0);
    expect(heard).toEqual([0]);

    // A steady stream for one second: ten notifications, 100 ms apart.
    for (let ms = 1; ms <= 1000; ms++) {
      store.dispatch({ ...output(`tick ${ms}`), at });
      vi.advanceTimersByTime(1);
    }
    expect(heard.length).toBeLessThanOrEqual(11);
    const gaps = heard.slice(1).map((t, i) => t - (heard[i] ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(100);
    expect(store.getSnapshot().output.lastSeq).toBe(1499);
    store.dispose();
  });

  test('the rendered app draws on flushes only: output between two flushes writes no frame', async () => {
    const s = new Script().emit({
      type: 'workflow.changed',
      state: 'IMPLEMENTATION',
      status: 'running',
      reason: null,
      detail: null,
    });
    s.store.flush();
    const app = renderApp(s.store);
    await app.waitFor('IMPLEMENTATION');
    const before = app.writes();
    for (let i = 0; i < 2000; i++) s.emit(output(`line ${i}`));
    s.timers.advance(99);
    await settle();
    expect(app.writes()).toBe(before);
    s.timers.advance(1); // 100 ms after the last flush
    await app.waitFor('line 1999');
    expect(app.writes()).toBeGreaterThan(before);
    app.unmount();
  });

  test('no events, no notification; key-driven changes notify at once', () => {
    const s = new Script();
    let heard = 0;
    s.store.subscribe(() => heard++);
    s.timers.advance(1000);
    expect(heard).toBe(0);
    s.store.setInteraction({ hint: 'hello' });
    expect(heard).toBe(1);
    expect(s.timers.pending).toBe(0);
  });

  test('the flush stamps the clock, so elapsed times move on a tick without events', () => {
    const s = new Script().emit({ type: 'run.started', run_id: 'r', command: 'run', project: 'demo' });
    s.store.flush();
    expect(s.store.getSnapshot().state.nowMs).toBe(T0);
    s.timers.advance(1000);
    s.store.tick();
    s.timers.advance(100);
    expect(s.store.getSnapshot().state.nowMs).toBe(T0 + 1100);
  });
});

describe('a burst of 100k output lines', () => {
  // Heap measurements need a real GC between them.
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;

  test('keeps memory bounded and renders the last lines', () => {
    const store = createUiStore({ view: 'workflow', project: 'demo' });
    const controller = createUiController({ store, onAbort: () => {}, onForceQuit: () => {} });
    const at = new Date(T0).toISOString();
    const padding = 'x'.repeat(200);
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 100_000; i++) store.dispatch({ ...output(`line ${i} ${padding}`), at });
    store.flush();
    gc();
    const growth = process.memoryUsage().heapUsed - before;

    const { buffer, dropped } = store.getSnapshot().output;
    expect(buffer.size).toBe(DEFAULT_OUTPUT_CAP);
    expect(dropped).toBe(100_000 - DEFAULT_OUTPUT_CAP);
    // 100k lines of ~210 characters are ~21 MB; the kept 5,000 are ~1 MB.
    expect(growth).toBeLessThan(8 * 1024 * 1024);

    const view = render(
      <App store={store} controller={controller} columns={100} rows={30} animate={false} />,
    );
    const frame = plain(view.lastFrame());
    expect(frame).toContain('line 99999 xxx');
    expect(frame).not.toContain('line 94999 ');
    expect(frame).toContain('95,000 dropped');
    view.unmount();
  });

  test('lines cut out of large stdout chunks do not keep the chunks alive', () => {
    const store = createUiStore({ view: 'workflow', project: 'demo' });
    const at = new Date(T0).toISOString();
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let c = 0; c < 2000; c++) {
      // A 64 KB chunk of a child's stdout; the engine hands one of its lines to the bus.
      const chunk = `${c}${'x'.repeat(100)}\n`.repeat(640);
      store.dispatch({ ...output(chunk.slice(0, chunk.indexOf('\n'))), at });
    }
    store.flush();
    gc();
    // Pinned, the chunks would be 2,000 x 64 KB = 130 MB.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(10 * 1024 * 1024);
    expect(store.getSnapshot().output.buffer.size).toBe(2000);
  });

  test('one huge chunk without newlines is cut, not kept whole', () => {
    const s = new Script();
    s.emit(output('y'.repeat(10_000_000)));
    const line = s.store.getSnapshot().output.buffer.at(0);
    expect(line?.text.length).toBeLessThanOrEqual(1000);
  });
});
