import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentRunner } from '../../source/engine/agents/agent-run.js';
import { claudeRunner } from '../../source/engine/agents/claude-code/run-claude.js';
import { codexRunner } from '../../source/engine/agents/codex/run-codex.js';
import { parsePlanBlock, parseTrackBlock } from '../../source/engine/cycle/blocks.js';
import { EngineBus } from '../../source/engine/events.js';
import { CircuitBreaker } from '../../source/engine/supervise/circuit-breaker.js';
import { runAgentStep, type StepOutcome } from '../../source/engine/workflow/agent-step.js';
import { TEST_BREAKER } from '../support/agent-fakes.js';
import { FakeClock } from '../support/fake-clock.js';
import { REPO_ROOT } from '../support/project.js';

// Issue 15: the corpus of recorded endings (test/corpus/cases.json, transcripts/), each replayed
// through what the engine really calls: the replay tool stands in for the `claude` or `codex`
// binary, the real adapter reads its output, the real circuit breaker watches it, and the
// workflow's agent step (runAgentStep: usage-limit waits, questions, EXIT_SIGNAL, evidence) gives
// the verdict. Seed 003 sentinel cases go through the cycle's block parsers.

interface Case {
  readonly id: string;
  readonly format: 'claude-stream' | 'codex-jsonl' | 'text' | 'sentinel';
  readonly transcript: string;
  readonly expect: { verdict: string; resetAt?: string; detail?: string };
  readonly source: string;
  readonly now?: string;
  readonly hang?: boolean;
  readonly exit?: number;
  readonly evidence?: 'verified' | 'disproved';
  readonly prompt?: 'template';
  readonly block?: 'TRACK' | 'PLAN';
  /** How a peer decides the same case, when it decides differently (reported in docs/endings.md). */
  readonly peer?: string;
}

const HERE = join(REPO_ROOT, 'test/corpus');
const REPLAY = join(HERE, 'replay-agent.mjs');
const { cases } = JSON.parse(readFileSync(join(HERE, 'cases.json'), 'utf8')) as { cases: Case[] };
const NOW = '2026-11-22T10:00:00.000Z';
const NONCE = 'AB12CD';

/** The status template a prompt may show; an answer that is only this block is judged by evidence. */
const TEMPLATE_PROMPT = [
  'Implement every pending task of specs/TASKS.md.',
  'When every task is completed, say what you did, then end your answer with a line of its own:',
  '',
  '---RALPH_STATUS---',
  'STATUS: COMPLETE',
  'TASKS_COMPLETED_THIS_LOOP: 2',
  'FILES_MODIFIED: 3',
  'TESTS_STATUS: PASSING',
  'EXIT_SIGNAL: true',
  '---END_RALPH_STATUS---',
].join('\n');

/** How long a hanging CLI (still retrying a 429) runs before the runner's own timeout ends it. */
const HANG_TIMEOUT_MS = 1500;

function runnerFor(c: Case): AgentRunner {
  const env = {
    ...process.env,
    RELAIS_REPLAY: join(HERE, c.transcript),
    RELAIS_REPLAY_FORMAT: c.format,
    RELAIS_REPLAY_EXIT: String(c.exit ?? 0),
    RELAIS_REPLAY_HANG: c.hang ? '1' : '0',
  };
  // The corpus judges transcript parsing; the sandbox has its own tests (test/integration/sandbox-*).
  const sandbox = { kind: 'off' } as const;
  if (c.format === 'codex-jsonl')
    return codexRunner({ command: REPLAY, configOverrides: [], extraEnv: {}, env, sandbox });
  return claudeRunner({ command: REPLAY, extraEnv: {}, env, sandbox });
}

interface Verdict {
  readonly verdict: string;
  readonly resetAt?: string;
  readonly detail?: string;
}

async function replay(c: Case): Promise<Verdict> {
  const clock = new FakeClock(Date.parse(c.now ?? NOW));
  const bus = new EngineBus(() => new Date(clock.now()));
  const controller = new AbortController();
  let resetAt: string | undefined;
  bus.subscribe((event) => {
    // A limit is waited out by the step itself: the wait's announcement is the verdict; stop there.
    if (event.type === 'workflow.waiting') {
      resetAt = event.until;
      controller.abort();
    }
  });
  const breaker = new CircuitBreaker({ ...TEST_BREAKER, maxAttempts: 1 }, () => clock.now());
  const prompt = c.prompt === 'template' ? TEMPLATE_PROMPT : 'Implement every pending task.';
  const outcome: StepOutcome = await runAgentStep({
    role: 'dev',
    runner: runnerFor(c),
    bus,
    breaker,
    clock,
    signal: controller.signal,
    retries: 0,
    request: async () => ({
      role: 'dev',
      systemPrompt: prompt,
      userPrompt: 'Work in this repository.',
      model: 'replayed',
      fallbackModel: null,
      maxTurns: 5,
      maxBudgetUsd: 1,
      tools: ['Read', 'Edit', 'Bash'],
      permissionMode: 'bypassPermissions',
      streaming: true,
      cwd: HERE,
      timeoutMs: c.hang ? HANG_TIMEOUT_MS : 30_000,
    }),
    // The runner's own check of a claim: the tests it runs pass, or they fail.
    verifyDone: async () => (c.evidence === 'disproved' ? 'the tests fail (npm test exited 1)' : null),
    onBreaker: () => undefined,
  });
  if (resetAt !== undefined) return { verdict: 'limit', resetAt };
  switch (outcome.kind) {
    case 'done':
      return { verdict: 'done' };
    case 'question':
      return { verdict: 'question', detail: outcome.question };
    case 'failed':
      return { verdict: 'retry', detail: outcome.detail };
    case 'breaker_open':
      return { verdict: 'breaker_open', detail: outcome.detail };
    default:
      return { verdict: outcome.kind };
  }
}

function parseSentinel(c: Case): Verdict {
  const text = readFileSync(join(HERE, c.transcript), 'utf8');
  const parsed = c.block === 'PLAN' ? parsePlanBlock(text, NONCE) : parseTrackBlock(text, NONCE);
  if (!parsed.ok) return { verdict: 'invalid', detail: parsed.error.message };
  const value = parsed.value as { kind?: string };
  return { verdict: c.block === 'PLAN' ? 'plan' : (value.kind ?? 'track') };
}

describe('the corpus of endings (issue 15)', () => {
  it('holds every kind of ending, each with its source', () => {
    const kinds = new Set(cases.map((c) => c.expect.verdict));
    for (const kind of ['done', 'retry', 'question', 'limit', 'breaker_open', 'invalid', 'phase_blocked'])
      expect(kinds, kind).toContain(kind);
    for (const c of cases) expect(c.source.length, c.id).toBeGreaterThan(10);
    expect(new Set(cases.map((c) => c.id)).size).toBe(cases.length);
  });

  it.each(cases.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    const seen = c.format === 'sentinel' ? parseSentinel(c) : await replay(c);
    expect(seen.verdict, `${c.id}: ${seen.detail ?? ''}`).toBe(c.expect.verdict);
    if (c.expect.resetAt) expect(seen.resetAt).toBe(c.expect.resetAt);
    if (c.expect.detail) expect(seen.detail).toContain(c.expect.detail);
  });
});
