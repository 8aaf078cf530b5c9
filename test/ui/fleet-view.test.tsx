import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { FleetSnapshot } from '../../source/engine/protocol/fleet.js';
import { createUiController } from '../../source/ui/keys/controller.js';
import { renderApp, Script } from './helpers.js';

// Issue 20: the app's fleet view (`relais fleet status` on a terminal) draws what the fleet
// database says: runs per state, the gates waiting for a human, spend against the budget, the
// model accounts' rates, the workers alive and gone, every run. q leaves; the fleet goes on.

const SNAPSHOT: FleetSnapshot = {
  runs: [
    {
      run_id: 'run-1',
      repo: '/srv/git/shop.git',
      state: 'COMPLETED',
      status: 'completed',
      waiting_gate: null,
      pr_url: 'https://github.com/a/b/pull/1',
      spent_usd: 0.35,
      detail: null,
      executor_id: 'build-1',
    },
    {
      run_id: 'run-2',
      repo: '/srv/git/blog.git',
      state: 'IMPLEMENTATION',
      status: 'running',
      waiting_gate: null,
      pr_url: null,
      spent_usd: 0.2,
      detail: null,
      executor_id: 'build-2',
    },
    {
      run_id: 'run-3',
      repo: '/srv/git/api.git',
      state: 'AWAITING_SPEC_VALIDATION',
      status: 'waiting',
      waiting_gate: 'spec',
      pr_url: null,
      spent_usd: 0.1,
      detail: null,
      executor_id: 'build-1',
    },
    {
      run_id: 'run-4',
      repo: '/srv/git/cli.git',
      state: 'FAILED',
      status: 'budget_exhausted',
      waiting_gate: null,
      pr_url: null,
      spent_usd: 0.55,
      detail: 'the fleet budget',
      executor_id: 'build-3',
    },
  ],
  byStatus: { completed: 1, running: 1, waiting: 1, budget_exhausted: 1 },
  waitingGates: [
    { run_id: 'run-3', gate: 'spec', title: 'Approve the specification and tasks?', answer: 'yes_no' },
  ],
  budget: { cap_usd: 2, spent_usd: 1.2, reserved_usd: 0.25 },
  accounts: [{ name: 'team-a', calls_per_minute: 20, last_minute: 3 }],
  workers: [
    {
      executor_id: 'build-1',
      host: 'h1',
      pid: 1,
      age_ms: 400,
      stopped: false,
      taken_over_by: null,
      alive: true,
    },
    {
      executor_id: 'build-2',
      host: 'h2',
      pid: 2,
      age_ms: 1200,
      stopped: false,
      taken_over_by: null,
      alive: true,
    },
    {
      executor_id: 'build-3',
      host: 'h3',
      pid: 3,
      age_ms: 90_000,
      stopped: false,
      taken_over_by: 'build-1',
      alive: false,
    },
  ],
};

describe('the fleet view', () => {
  test('runs per state, the waiting gate and how to answer it, spend against the budget, accounts, workers, every run', async () => {
    const script = new Script('fleet');
    const app = renderApp(script.store, { columns: 120, rows: 30 });
    await app.waitFor('reading the fleet database');
    script.emit({ type: 'fleet.status', snapshot: SNAPSHOT });
    script.store.flush();
    await app.waitFor('Waiting at a gate');
    const frame = app.frame();
    expect(frame).toContain('relais  fleet · 4 runs · 1 waiting for a human · 2 workers alive');
    expect(frame).toMatch(/runs\s+1 running · 1 waiting · 1 completed · 1 budget_exhausted/);
    expect(frame).toMatch(/spend\s+\$1\.20 spent of \$2\.00 · \$0\.2500 reserved/);
    expect(frame).toMatch(
      /workers\s+2 alive: build-1 \(0\.4 s\), build-2 \(1\.2 s\) · 1 gone: build-3 → build-1/,
    );
    expect(frame).toMatch(/accounts\s+team-a: 3 of 20 calls this minute/);
    expect(frame).toContain('relais attach <run> answers it here');
    expect(frame).toMatch(/run-3\s+spec\s+Approve the specification and tasks\?/);
    expect(frame).toMatch(
      /run-2\s+running\s+IMPLEMENTATION\s+\$0\.2000\s+build-2\s+\/srv\/git\/blog\.git\s*│/,
    );
    expect(frame).toContain(' q  leave');
    // Every row stays inside the panel's frame.
    for (const line of frame.split('\n').slice(2, -2)) expect(line.endsWith('│'), line).toBe(true);
    app.unmount();
  });

  test('q leaves (an interrupt the command turns into the end of the watch); a or p do nothing to the fleet', async () => {
    const script = new Script('fleet');
    let left = 0;
    const controller = createUiController({
      store: script.store,
      onAbort: () => left++,
      onInterrupt: () => left++,
      onForceQuit: () => undefined,
    });
    const app = renderApp(script.store, { controller });
    script.emit({ type: 'fleet.status', snapshot: SNAPSHOT });
    script.store.flush();
    await app.waitFor('Waiting at a gate');
    app.press('a');
    await app.waitFor('q leaves (the fleet goes on).');
    expect(left).toBe(0);
    app.press('q');
    expect(left).toBe(1);
    app.unmount();
  });

  test('attached to a fleet run: the footer offers leaving, not abort or pause; a says the run goes on', async () => {
    const script = new Script('workflow');
    const app = renderApp(script.store);
    script.emit([
      { type: 'fleet.attached', run_id: 'run-9', repo: '/srv/git/shop.git' },
      { type: 'workflow.changed', state: 'IMPLEMENTATION', status: 'running', reason: null, detail: null },
    ]);
    script.store.flush();
    await app.waitFor('leave (the run goes on)');
    expect(app.frame()).not.toContain(' a  abort');
    expect(app.frame()).not.toContain(' p  pause');
    app.press('a');
    await app.waitFor('This run goes on in the fleet: q leaves it running.');
    app.unmount();
  });
});
