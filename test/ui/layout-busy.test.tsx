import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { EngineEvent } from '../../source/engine/events.js';
import { widthOf } from '../../source/ui/format/text.js';
import { renderApp, Script, T0 } from './helpers.js';

// The live area must stay shorter than the terminal and no line may be wider than it (a wrapped
// line scrolls the frame, which Ink answers by clearing the screen on every frame: flicker). The
// layout's own test checks the panel heights it plans; this one checks what is really drawn when
// everything shows at once.

const WIDE = '全角テキスト'; // two columns per character
const LONG = `${'a very long line of agent output that goes on '.repeat(12)}${WIDE}`;

function busyWorkflow(script: Script): void {
  script.emit([
    {
      type: 'workflow.started',
      project: `a-project-with-a-very-long-directory-name-${'x'.repeat(80)}`,
      prd_title: `A long PRD title ${'that keeps going '.repeat(10)}`,
      base_branch: 'main',
      feature_branch: `ralphy/${'long-branch-name-'.repeat(8)}`,
      engine: 'ticks',
      resumed_from: null,
      max_cost_usd: 5,
      tasks: Array.from({ length: 40 }, (_, i) => ({
        number: i + 1,
        title: `Task ${i + 1}: ${WIDE} ${'with a title longer than any panel '.repeat(3)}`,
        status: i < 10 ? ('completed' as const) : i === 10 ? ('in_progress' as const) : ('pending' as const),
      })),
    },
    { type: 'workflow.changed', state: 'SPECIFICATION', status: 'running', reason: null, detail: null },
    { type: 'workflow.changed', state: 'IMPLEMENTATION', status: 'running', reason: null, detail: null },
    {
      type: 'breaker.changed',
      breaker: { state: 'half_open', attempts: 2, max_attempts: 3, last_trigger: 'inactivity' },
      trigger: 'inactivity',
      detail: `inactivity detected (60s without output) ${'and more detail '.repeat(10)}`,
      log: [],
    },
    {
      type: 'agent.started',
      role: 'dev',
      attempt: 2,
      command: 'claude',
      model: 'claude-sonnet-4-long-model-name',
    },
    ...Array.from(
      { length: 300 },
      (_, i): EngineEvent =>
        i % 7 === 0
          ? { type: 'agent.tool', role: 'dev', tool: 'Bash', target: `npm test -- ${LONG}` }
          : {
              type: 'agent.output',
              role: 'dev',
              text: `${i} ${LONG}\n${WIDE.repeat(30)}`,
              kind: i % 5 ? 'text' : 'error',
            },
    ),
    {
      type: 'judge.finished',
      code: 'STOP_SCOPE_VIOLATION_FORBIDDEN',
      blast_radius: { files_touched: 60, lines_added: 123_456, lines_deleted: 7_890, new_files: 12 },
      blast_radius_line: '60 files, +123456/-7890, 12 new',
      violations: Array.from({ length: 10 }, (_, i) => `forbidden: secrets/${i}/${'deep/'.repeat(10)}.env`),
      touched_paths: Array.from({ length: 60 }, (_, i) => `src/${'nested/'.repeat(6)}file-${i}.ts`),
    },
    ...Array.from({ length: 12 }, (_, i): EngineEvent[] => [
      {
        type: 'verify.started',
        template_id: `check-${i}-${'long-template-id-'.repeat(3)}`,
        phase: i % 2 ? 'slow' : 'fast',
        cmd: 'npm',
        args: ['run', LONG],
      },
      ...(i < 8
        ? [
            {
              type: 'verify.finished',
              summary: LONG,
              template_id: `check-${i}-${'long-template-id-'.repeat(3)}`,
              phase: i % 2 ? 'slow' : 'fast',
              cmd: 'npm',
              args: [],
              exit_code: i % 3 ? 0 : 1,
              duration_ms: 123_456,
              timed_out: i === 6,
            } as EngineEvent,
          ]
        : []),
    ]).flat(),
    { type: 'budget.warning', warnings: [`cost at 80% of $5.00 ${'warning '.repeat(20)}`, 'calls at 90%'] },
    {
      type: 'workflow.waiting',
      until: new Date(T0 + 4 * 3600_000).toISOString(),
      reason: `usage limit reached ${'(the provider said so at length) '.repeat(6)}`,
    },
    {
      type: 'gate.requested',
      gate: 'qa',
      title: `Approve the QA report and open the pull request? ${'Really? '.repeat(10)}`,
      lines: Array.from({ length: 30 }, (_, i) => `  ${i + 1}. ${LONG}`),
      answer: 'yes_no',
    },
  ]);
}

/** The end of the busy workflow: its result, with a long detail, link and next steps. */
function workflowOver(script: Script): void {
  script.emit([
    {
      type: 'run.finished',
      state: 'FAILED',
      status: 'failed',
      reason: 'aborted',
      detail: LONG,
      pr_url: `https://github.com/owner/repo/pull/1?${'q=1&'.repeat(40)}`,
      next_steps: Array.from({ length: 8 }, (_, i) => `step ${i}: ${LONG}`),
    },
  ]);
}

function busyLoop(script: Script): void {
  script.emit([
    { type: 'run.started', run_id: 'r1', command: 'loop', project: `/tmp/${'deep/'.repeat(30)}demo` },
    ...Array.from({ length: 60 }, (_, i): EngineEvent[] => [
      {
        type: 'task.proposed',
        task_id: `T-${i}-${'long-'.repeat(10)}`,
        milestone_id: `M1-${'milestone-'.repeat(6)}`,
        task_kind: 'execute',
        intent: LONG,
        mode: 'claude_code',
      },
      {
        type: 'loop.tick',
        tick: i + 1,
        run_id: `r${i}`,
        verdict: i % 4 ? 'success' : 'stop',
        code: i % 4 ? 'SUCCESS' : 'STOP_VERIFY_FAILED_FAST',
        task_id: `T-${i}-${'long-'.repeat(10)}`,
        milestone: `M1-${'milestone-'.repeat(6)}`,
        blast_radius_line: LONG,
        cost_usd: 12.3456,
        commit: 'abcdef0123456789',
        control: null,
      },
    ]).flat(),
    { type: 'run.started', run_id: 'r61', command: 'loop', project: '/tmp/demo' },
    { type: 'phase.changed', phase: 'BUILD' },
    {
      type: 'ledger.updated',
      milestone: `M1-${'milestone-'.repeat(6)}`,
      used: { ticks: 61, orchestrator_calls: 61, builder_calls: 60, verify_runs: 240, cost_usd: 740.12 },
      caps: { ticks: 100, orchestrator_calls: 200, builder_calls: 100, verify_runs: 400, cost_usd: 1000 },
    },
    ...Array.from(
      { length: 200 },
      (_, i): EngineEvent => ({ type: 'agent.output', role: 'builder', text: `${i} ${LONG}`, kind: 'text' }),
    ),
    {
      type: 'tick.finished',
      run_id: 'r61',
      verdict: 'stop',
      code: 'STOP_SCOPE_VIOLATION_FORBIDDEN',
      remediation: LONG,
      detail: LONG,
      blast_radius_line: LONG,
      commit: null,
      report_path: `relais/${'history/'.repeat(20)}REPORT.md`,
    },
  ]);
}

describe('a busy screen fits the terminal', () => {
  const sizes = [
    [80, 24],
    [40, 10],
    // Two columns (from 100): ink-testing-library's stdout is 100 columns wide, so no wider here.
    [100, 30],
  ] as const;

  /** Renders the script's store at a size and checks the frame once `ready` holds. */
  async function expectFits(script: Script, columns: number, rows: number, ready: string | RegExp) {
    const app = renderApp(script.store, { columns, rows });
    script.store.flush();
    await app.waitFor((frame) => (typeof ready === 'string' ? frame.includes(ready) : ready.test(frame)));
    const lines = app.frame().split('\n');
    expect(lines.length).toBeLessThanOrEqual(rows - 1);
    for (const line of lines) expect(widthOf(line), line).toBeLessThanOrEqual(columns);
    const frame = app.frame();
    app.unmount();
    return frame;
  }

  test.each(sizes)('workflow at a gate, waiting on the usage limit, at %ix%i', async (columns, rows) => {
    const script = new Script('workflow');
    busyWorkflow(script);
    script.wait(65_000);
    const frame = await expectFits(script, columns, rows, /y\s+approve/);
    // What is being decided must show, whatever the size: the question and its keys.
    expect(frame).toMatch(/╭─ Approve the QA/);
    if (rows >= 24) expect(frame).toMatch(/resumes in|usage limit/);
  });

  test.each(sizes)('workflow over, with its result, at %ix%i', async (columns, rows) => {
    const script = new Script('workflow');
    busyWorkflow(script);
    workflowOver(script);
    script.wait(65_000);
    script.store.setInteraction({ over: true });
    const frame = await expectFits(script, columns, rows, /q\s+quit/);
    expect(frame).toContain('Workflow FAILED');
  });

  test.each(sizes)('loop with 60 ticks, a long result and output, at %ix%i', async (columns, rows) => {
    const script = new Script('loop');
    busyLoop(script);
    script.wait(65_000);
    script.store.setInteraction({ over: true });
    await expectFits(script, columns, rows, /q\s+quit/);
  });
});
