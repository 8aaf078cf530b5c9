import { describe, expect, it } from 'vitest';
import { readUsageLimit } from '../../source/engine/agents/claude-code/usage-limit.js';
import { workflowFileSchema } from '../../source/engine/protocol/workflow.js';
import {
  type BreakerConfig,
  breakerLogLines,
  CircuitBreaker,
  normalize,
} from '../../source/engine/supervise/circuit-breaker.js';
import { readExitSignal } from '../../source/engine/workflow/exit-signal.js';
import { renderPrBody } from '../../source/engine/workflow/pr-body.js';
import { parseTasks, withStatus } from '../../source/engine/workflow/tasks-file.js';
import { allTransitions, nextState } from '../../source/engine/workflow/transitions.js';
import { freshWorkflow } from '../../source/engine/workflow/workflow-store.js';

describe('TASKS.md (seed 002 §7)', () => {
  const text = [
    '# Tasks',
    '',
    '## Task 1: Add slugify',
    '- **Status**: pending',
    '- **Description**: turn titles into slugs',
    '- **Files**: src/slug.js, test/slug.test.js',
    '',
    '## Tâche 2: Trim',
    '- **Statut**: completed',
    '- **Fichiers**: `src/slug.js`',
  ].join('\n');

  it('reads English and French sections', () => {
    const parsed = parseTasks(text);
    expect(parsed).toMatchObject({
      ok: true,
      tasks: [
        { number: 1, title: 'Add slugify', status: 'pending', files: ['src/slug.js', 'test/slug.test.js'] },
        { number: 2, title: 'Trim', status: 'completed', files: ['src/slug.js'] },
      ],
    });
  });

  it('rewrites one status in place and nothing else', () => {
    const parsed = parseTasks(text);
    if (!parsed.ok) throw new Error('parse');
    const updated = withStatus(text, parsed.tasks[0] as never, 'completed');
    expect(updated.split('\n')[3]).toBe('- **Status**: completed');
    expect(updated.replace('completed', 'pending')).toBe(text);
  });

  it.each([
    ['', 'no task found'],
    ['## Task 1: A\n- **Description**: x', 'no "- **Status**:" line'],
    ['## Task 1: A\n- **Status**: done', 'status "done" is not pending'],
    ['## Task 1: A\n- **Status**: pending\n## Task 1: B\n- **Status**: pending', 'task numbers repeat'],
  ])('refuses %j', (body, problem) => {
    const parsed = parseTasks(body);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.problems.join()).toContain(problem);
  });
});

describe('EXIT_SIGNAL (seed 002 §5)', () => {
  it.each([
    ['All tasks done.\n\nEXIT_SIGNAL: true', 'true'],
    ['**EXIT_SIGNAL**: true', 'true'],
    ['Done! Everything complete.', 'absent'],
    ['I am done.\nEXIT_SIGNAL: false', 'false'],
    ['EXIT_SIGNAL: true\n...on second thought, tests fail.\nEXIT_SIGNAL: false', 'false'],
    ['The prompt says to emit `EXIT_SIGNAL: true` when finished.', 'absent'],
    // Issue 15: a fenced status block counts; prose after it saying work remains makes it false.
    ['Example:\n```\nEXIT_SIGNAL: true\n```\nNot yet.', 'false'],
    ['Both tasks are done and tested.\n```\nEXIT_SIGNAL: true\n```', 'true'],
    ['Use this format:\n````markdown\n```\nEXIT_SIGNAL: true\n```\n````', 'absent'],
    ['EXIT_SIGNAL: true\n\nTask 2 still needs its tests; I will continue next loop.', 'false'],
    ['All done.\nEXIT_SIGNAL: true\nNothing remains to do.', 'true'],
    ['> EXIT_SIGNAL: true\nquoted only', 'absent'],
  ])('%j → %s', (answer, expected) => {
    expect(readExitSignal(answer)).toBe(expected);
  });
});

describe('usage limits', () => {
  const now = new Date('2026-11-22T10:00:00Z');
  it('reads the epoch form', () => {
    expect(
      readUsageLimit(
        'Claude AI usage limit reached|1795000000',
        new Date(1795000000 * 1000 - 60_000),
      )?.resetAt.getTime(),
    ).toBe(1795000000 * 1000);
  });
  it('reads a clock time and waits until its next occurrence', () => {
    const limit = readUsageLimit('5-hour limit reached ∙ resets 3pm', now);
    const wait = (limit?.resetAt.getTime() ?? 0) - now.getTime();
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(24 * 3600 * 1000);
    expect(new Date(limit?.resetAt ?? 0).getMinutes()).toBe(0);
  });
  // Forms from anthropics/claude-code issues #15064, #22946, #51981, #55147: the named zone counts.
  it.each([
    ["You've hit your limit · resets 10pm (America/New_York)", '2026-11-23T03:00:00.000Z'],
    [
      'Claude usage limit reached. Your limit will reset at 9am (America/Chicago).',
      '2026-11-22T15:00:00.000Z',
    ],
    ["You've hit your limit · resets 3:30am (Europe/Moscow)", '2026-11-23T00:30:00.000Z'],
    ["You've hit your limit · resets Apr 23 at 4pm (America/Recife)", '2027-04-23T19:00:00.000Z'],
    ["You've hit your limit · resets Nov 22 at 11am (UTC)", '2026-11-22T11:00:00.000Z'],
  ])('%s → %s', (text, at) => {
    // The cap (a day for a time of day, 8 days for a dated reset) applies to longer waits only.
    const limit = readUsageLimit(text, now);
    const expected = Date.parse(at);
    const cap = / at /.test(text) ? 8 * 24 * 3600 * 1000 : 24 * 3600 * 1000;
    const wait = Math.min(expected - now.getTime(), cap);
    expect(limit?.resetAt.getTime()).toBe(now.getTime() + wait);
  });
  it('waits a default while on a 429 without a time, and ignores ordinary errors', () => {
    expect(
      (readUsageLimit('API Error: 429 rate_limit_error', now)?.resetAt.getTime() ?? 0) - now.getTime(),
    ).toBe(5 * 60 * 1000);
    expect(readUsageLimit('whatever', now, 429)).not.toBeNull();
    expect(readUsageLimit('Error: Cannot find module foo', now)).toBeNull();
  });
});

describe('workflow transitions (seed 002 §8, seed 004 PLANNING first)', () => {
  it('has exactly the edges of the diagram', () => {
    expect(allTransitions().map(([a, e, b]) => `${a} -${e}-> ${b}`)).toEqual([
      'IDLE -start-> PLANNING',
      'IDLE -skip_planning-> SPECIFICATION',
      'PLANNING -ready-> SPECIFICATION',
      'PLANNING -fail-> FAILED',
      'PLANNING -abort-> FAILED',
      'SPECIFICATION -spec_done-> AWAITING_SPEC_VALIDATION',
      'SPECIFICATION -fail-> FAILED',
      'SPECIFICATION -abort-> FAILED',
      'AWAITING_SPEC_VALIDATION -approve-> IMPLEMENTATION',
      'AWAITING_SPEC_VALIDATION -reject-> REJECTED',
      'AWAITING_SPEC_VALIDATION -abort-> FAILED',
      'IMPLEMENTATION -exit_signal-> QA',
      'IMPLEMENTATION -fail-> FAILED',
      'IMPLEMENTATION -abort-> FAILED',
      'QA -exit_signal-> AWAITING_QA_VALIDATION',
      'QA -fail-> FAILED',
      'QA -abort-> FAILED',
      'AWAITING_QA_VALIDATION -approve-> PR',
      'AWAITING_QA_VALIDATION -reject-> FAILED',
      'AWAITING_QA_VALIDATION -abort-> FAILED',
      'PR -exit_signal-> COMPLETED',
      'PR -fail-> FAILED',
      'PR -abort-> FAILED',
    ]);
  });
  it('refuses anything else', () => {
    expect(() => nextState('QA', 'approve')).toThrow('no transition from QA on approve');
  });
});

describe('circuit breaker (seed 002 §6.1) with a fake clock', () => {
  const config: BreakerConfig = {
    inactivityMs: 60_000,
    maxRepeatedErrors: 3,
    stagnationMs: 600_000,
    maxOutputBytes: 1000,
    maxAttempts: 3,
    testCommand: 'npm test',
    testInactivityMs: 300_000,
  };
  const make = (overrides: Partial<BreakerConfig> = {}) => {
    let t = 0;
    const breaker = new CircuitBreaker({ ...config, ...overrides }, () => t);
    return { breaker, advance: (ms: number) => (t += ms) };
  };

  it('inactivity: warnings, then OPEN on the third trigger', () => {
    const { breaker, advance } = make({ stagnationMs: null });
    advance(59_999);
    expect(breaker.check()).toBeNull();
    advance(1);
    expect(breaker.check()).toMatchObject({ kind: 'warning', trigger: 'inactivity', attempts: 1 });
    expect(breaker.snapshot().state).toBe('half_open');
    advance(60_000);
    expect(breaker.check()).toMatchObject({ kind: 'warning', attempts: 2 });
    advance(60_000);
    const open = breaker.check();
    expect(open).toMatchObject({ kind: 'open', trigger: 'inactivity', attempts: 3 });
    expect(breaker.isOpen).toBe(true);
    expect(breakerLogLines(open as never)).toEqual([
      '⚠ Circuit breaker: inactivity detected (60s without output; threshold 60s, inactivity_timeout)',
      '✗ Circuit breaker: OPEN - agent stopped after 3 attempts',
    ]);
  });

  it('output and evidence of progress are activity', () => {
    const { breaker, advance } = make({ stagnationMs: null });
    advance(50_000);
    breaker.onOutput('working');
    advance(50_000);
    breaker.onProgress();
    advance(50_000);
    expect(breaker.check()).toBeNull();
  });

  it('while the test command runs, inactivity waits 300s', () => {
    const { breaker, advance } = make({ stagnationMs: null });
    breaker.onOutput('$ npm test -- --run');
    advance(299_000);
    expect(breaker.check()).toBeNull();
    advance(1_000);
    expect(breaker.check()).toMatchObject({ trigger: 'inactivity' });
  });

  it('the same error three times in a row, timestamps and line numbers aside', () => {
    const { breaker } = make();
    expect(breaker.onOutput("[10:00:01] Error: Cannot find module 'foo' at a.js:10:3")).toBeNull();
    expect(breaker.onOutput("[10:00:05] Error: Cannot find module 'foo' at a.js:12:9")).toBeNull();
    expect(breaker.onOutput("[10:00:09] Error: Cannot find module 'foo' at a.js:14:1")).toMatchObject({
      trigger: 'repeated_error',
      attempts: 1,
    });
    expect(normalize('[12:01:02] x.ts:10:5 failed 0xdeadbeef')).toBe(
      normalize('[13:04:05] x.ts:99:1 failed 0xcafe'),
    );
  });

  // Issue 15: the trigger counts copies of one error; another error between them hides nothing.
  it('a different error between two copies does not break the run', () => {
    const { breaker } = make();
    breaker.onOutput('Error: A');
    breaker.onOutput('Error: B');
    expect(breaker.onOutput('Error: A')).toBeNull();
    expect(breaker.onOutput('Error: A')).toMatchObject({ trigger: 'repeated_error' });
  });

  it('stagnation counts tasks that reach completed', () => {
    const { breaker, advance } = make({ inactivityMs: 10_000_000 });
    advance(599_000);
    breaker.onTaskCompleted();
    advance(599_000);
    expect(breaker.check()).toBeNull();
    advance(1_000);
    expect(breaker.check()).toMatchObject({ trigger: 'stagnation' });
  });

  it('output size cap, and the next trigger needs another full allowance', () => {
    const { breaker } = make();
    expect(breaker.onBytes(999)).toBeNull();
    expect(breaker.onBytes(2)).toMatchObject({ trigger: 'output_size', attempts: 1 });
    expect(breaker.onBytes(900)).toBeNull();
  });

  it('paused while a human gate waits, and nothing counts meanwhile', () => {
    const { breaker, advance } = make();
    breaker.pause();
    advance(3_600_000);
    expect(breaker.check()).toBeNull();
    expect(breaker.snapshot().state).toBe('paused');
    breaker.resume();
    expect(breaker.snapshot().state).toBe('closed');
    advance(59_000);
    expect(breaker.check()).toBeNull();
  });

  it("a run's start is activity: the runner's own time between runs is not the agent's silence", () => {
    const { breaker, advance } = make({ stagnationMs: null });
    advance(90_000); // judging and verifying the last run
    breaker.startRun();
    advance(59_000);
    expect(breaker.check()).toBeNull();
  });

  it('the output-size cap counts one run; a healthy run closes a half-open breaker', () => {
    const { breaker, advance } = make({ stagnationMs: null });
    expect(breaker.onBytes(900)).toBeNull();
    breaker.startRun();
    expect(breaker.onBytes(900)).toBeNull();
    advance(60_000);
    expect(breaker.check()).toMatchObject({ kind: 'warning', attempts: 1 });
    breaker.runSucceeded();
    expect(breaker.snapshot()).toMatchObject({ state: 'closed', attempts: 0 });
    // An open breaker stays open: the agent was killed.
    const open = make({ stagnationMs: null, maxAttempts: 1 });
    open.advance(60_000);
    expect(open.breaker.check()).toMatchObject({ kind: 'open' });
    open.breaker.runSucceeded();
    open.breaker.startRun();
    expect(open.breaker.snapshot().state).toBe('open');
  });
});

describe('gate decisions nobody took', () => {
  const at = '2026-11-22T10:00:00.000Z';
  const workflow = {
    ...freshWorkflow({
      prdTitle: 'Greeting service',
      now: new Date(at),
      maxAttempts: 3,
      engine: 'ticks',
      maxCostUsd: null,
    }),
    gate_decisions: [
      // As written before `unanswered` existed: nobody's "no" recorded as a reject.
      { gate: 'spec' as const, decision: 'reject' as const, at, by: 'nobody' as const },
      { gate: 'spec' as const, decision: 'unanswered' as const, at, by: 'nobody' as const },
      { gate: 'spec' as const, decision: 'approve' as const, at, by: 'human' as const },
      { gate: 'qa' as const, decision: 'approve' as const, at, by: 'auto' as const },
    ],
  };

  it('WORKFLOW.json accepts unanswered, and older files with a reject by nobody still load', () => {
    expect(workflowFileSchema.safeParse(workflow).success).toBe(true);
    expect(workflowFileSchema.safeParse(JSON.parse(JSON.stringify(workflow))).success).toBe(true);
  });

  it('the PR body lists only the decisions someone took', () => {
    const body = renderPrBody({
      workflow,
      objective: 'Greet people.',
      blast: { files_touched: 0, lines_added: 0, lines_deleted: 0, new_files: 0 },
      files: [],
      qaSummary: [],
    });
    const gates = body.split('## Human gates\n')[1]?.split('\n\n')[0];
    expect(gates).toBe(`- spec: approve (human, ${at})\n- qa: approve (auto, ${at})`);
    expect(body).not.toContain('nobody');
  });

  it('the PR body says the spend of calls killed before they reported as held, not as spent (issue 4)', () => {
    const render = (w: typeof workflow) =>
      renderPrBody({
        workflow: w,
        objective: 'Greet people.',
        blast: { files_touched: 0, lines_added: 0, lines_deleted: 0, new_files: 0 },
        files: [],
        qaSummary: [],
      });
    expect(render({ ...workflow, cost_usd: 0.31 })).toContain('agent spend $0.31.');
    const held = render({ ...workflow, cost_usd: 3.31, unreported_usd: 3, unreported_calls: 2 });
    expect(held).toContain('agent spend $0.3100 spent + $3.00 held for 2 calls of unknown cost.');
    expect(held).not.toContain('$3.31');
  });
});
