import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { EngineEvent } from '../../source/engine/events.js';
import { screenLayout } from '../../source/ui/layout/screen-layout.js';
import { headerRow } from '../../source/ui/panels/Header.js';
import { enter, renderApp, Script } from './helpers.js';

// Issue 16 item 4: at 80×24 (the default terminal) every panel shows in a compact form, and the
// header keeps the phase, the elapsed time and the cost.

const started: EngineEvent = {
  type: 'workflow.started',
  project: 'a-project-with-a-rather-long-name',
  prd_title: 'Add a slugify helper that handles every unicode letter',
  base_branch: 'main',
  feature_branch: 'ralphy/add-a-slugify-helper-that-handles-every-unicode-letter',
  engine: 'ticks',
  resumed_from: null,
  max_cost_usd: 5,
  tasks: [
    { number: 1, title: 'Parse the input', status: 'pending' },
    { number: 2, title: 'Render the output', status: 'pending' },
    { number: 3, title: 'Document it', status: 'pending' },
  ],
};

function implementing(): Script {
  return new Script().emit(
    [
      started,
      enter('SPECIFICATION'),
      enter('AWAITING_SPEC_VALIDATION'),
      enter('IMPLEMENTATION'),
      {
        type: 'task.updated',
        number: 1,
        title: 'Parse the input',
        status: 'completed',
        claimed: 'done',
        verified: 'verify passed',
        verdict: 'verified',
      },
      {
        type: 'task.updated',
        number: 2,
        title: 'Render the output',
        status: 'in_progress',
        claimed: 'done',
        verified: 'STOP_VERIFY_FAILED_FAST',
        verdict: 'rejected',
      },
      { type: 'phase.changed', phase: 'BUILD' },
      {
        type: 'agent.finished',
        role: 'builder',
        ok: true,
        exit_code: 0,
        cost_usd: 0.42,
        duration_ms: 1000,
        summary: 'ok',
      },
      {
        type: 'workflow.spend',
        phase: 'IMPLEMENTATION',
        cost_usd: 0.42,
        calls: 1,
        max_cost_usd: null,
        max_calls: null,
        total_cost_usd: 0.42,
      },
    ],
    95_000,
  );
}

describe('80×24', () => {
  test('every workflow panel has a place', () => {
    const s = implementing();
    const layout = screenLayout(s.state, 80, 24);
    if (layout.kind !== 'panels') throw new Error('too small');
    const ids = layout.stack.flatMap((c) => c.panels.map((p) => p.id));
    for (const id of ['phases', 'breaker', 'output', 'tasks', 'verify', 'blast'] as const)
      expect(ids).toContain(id);
    expect(layout.stack.flatMap((c) => c.panels).reduce((sum, p) => sum + p.height, 0)).toBe(
      layout.bodyHeight,
    );
  });

  test('the header keeps phase, elapsed and cost; long names give way', () => {
    const s = implementing().wait(0);
    const line = headerRow(s.state, 80)
      .map((seg) => ('text' in seg ? seg.text : '*'))
      .join('');
    expect(line.length).toBeLessThanOrEqual(80);
    expect(line).toContain('IMPLEMENTATION');
    expect(line).toContain('01:35');
    expect(line).toContain('$0.42');
    expect(line).toContain('$5.00');
  });

  test('the compact panels say what the runner decided', async () => {
    const s = implementing();
    s.store.flush();
    const app = renderApp(s.store, { columns: 80, rows: 24 });
    await app.waitFor('Tasks');
    const frame = app.frame();
    expect(frame.split('\n').length).toBeLessThanOrEqual(23);
    // The runner verified one task: the count says 1, and the rejected task carries no ✓.
    expect(frame).toContain('1/3 verified');
    const taskLine = frame.split('\n').find((l) => l.includes('Render the output')) ?? '';
    expect(taskLine).not.toContain('✓');
    expect(taskLine).toContain('not accepted');
    expect(frame).toMatch(/✓ spec\s+✓ spec gate\s+\S build\s+○ QA/);
    expect(frame).toContain('Verifications');
    expect(frame).toContain('Blast radius');
    app.unmount();
  });
});

describe('80×24 at a gate', () => {
  test('the gate keeps its question, its documents line and its keys', async () => {
    const s = implementing();
    s.store.flush();
    const app = renderApp(s.store, { columns: 80, rows: 24 });
    const answer = app.controller.gates.ask(
      {
        gate: 'spec',
        title: 'Approve the specification and tasks?',
        lines: ['Files generated:', '  - specs/SPEC.md', '  - specs/TASKS.md (3 tasks)', '    1. Parse'],
        answer: 'yes_no',
        documents: [{ name: 'specs/SPEC.md', text: '# Spec' }],
      },
      new AbortController().signal,
    );
    await app.waitFor('Approve the specification and tasks?');
    const frame = app.frame();
    const lines = frame.split('\n');
    expect(lines.some((l) => /^│ +v +read in full: specs\/SPEC\.md +│$/.test(l))).toBe(true);
    expect(lines.some((l) => /^│ +y +approve +n +reject +│$/.test(l))).toBe(true);
    expect(frame).toContain('Files generated:');
    app.press('y');
    await expect(answer).resolves.toEqual({ decision: 'approve', by: 'human' });
    app.unmount();
  });
});

describe('the loop at 80×24', () => {
  // Issue 16 item 4: the loop view's seven panels all keep a place, Verdicts and Ledger included
  // (before, they gave way to the others), each in its one-row form.
  function looping(): Script {
    const tick = (n: number, verdict: 'success' | 'stop', code: 'SUCCESS' | 'STOP_VERIFY_FAILED_FAST') =>
      ({
        type: 'loop.tick',
        tick: n,
        run_id: `r${n}`,
        verdict,
        code,
        task_id: `T-${n}`,
        milestone: 'M1',
        blast_radius_line: '1 file, +3/-1, 0 new',
        cost_usd: 0.02,
        commit: verdict === 'success' ? 'abc1234' : null,
        control: null,
      }) as const;
    return new Script('loop').emit([
      { type: 'run.started', run_id: 'r1', command: 'loop', project: 'demo' },
      tick(1, 'success', 'SUCCESS'),
      {
        type: 'tick.finished',
        run_id: 'r2',
        verdict: 'stop',
        code: 'STOP_VERIFY_FAILED_FAST',
        remediation: 'Fix the failing check.',
        detail: null,
        blast_radius_line: '1 file',
        commit: null,
        report_path: null,
      },
      tick(2, 'stop', 'STOP_VERIFY_FAILED_FAST'),
      {
        type: 'ledger.updated',
        milestone: 'M1',
        used: { ticks: 2, orchestrator_calls: 2, builder_calls: 2, verify_runs: 3, cost_usd: 0.04 },
        caps: { ticks: 10, orchestrator_calls: 40, builder_calls: 20, verify_runs: 60, cost_usd: 5 },
      },
      { type: 'phase.changed', phase: 'BUILD' },
    ]);
  }

  test('every loop panel has a place, Verdicts and Ledger side by side', () => {
    const layout = screenLayout(looping().state, 80, 24);
    if (layout.kind !== 'panels') throw new Error('too small');
    const ids = layout.stack.flatMap((c) => c.panels.map((p) => p.id));
    for (const id of ['ticks', 'task', 'breaker', 'output', 'verify_blast', 'verdicts_ledger'] as const)
      expect(ids).toContain(id);
  });

  test('the compact Verdicts and Ledger say the counts and the spend', async () => {
    const s = looping();
    s.store.flush();
    const app = renderApp(s.store, { columns: 80, rows: 24 });
    await app.waitFor('Ledger');
    const frame = app.frame();
    expect(frame.split('\n').length).toBeLessThanOrEqual(23);
    for (const title of [
      'Ticks',
      'Circuit breaker',
      'Output',
      'Verifications',
      'Blast radius',
      'Verdicts',
      'Ledger',
    ])
      expect(frame, title).toContain(title);
    const row = frame.split('\n').find((l) => l.includes('· last STOP_')) ?? '';
    expect(row, frame).toMatch(/✓1 ✗1 ⊘0 · last STOP_/);
    expect(row).toMatch(/ticks 2\/10 · cost \$0\.0400\/\$5\.00/);
    app.unmount();
  });
});
