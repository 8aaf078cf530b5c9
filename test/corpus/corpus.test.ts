import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentRunner } from '../../source/engine/agents/agent-run.js';
import { claudeRunner } from '../../source/engine/agents/claude-code/run-claude.js';
import { codexRunner } from '../../source/engine/agents/codex/run-codex.js';
import { parsePlanBlock, parseTrackBlock } from '../../source/engine/cycle/blocks.js';
import { EngineBus } from '../../source/engine/events.js';
import { CircuitBreaker } from '../../source/engine/supervise/circuit-breaker.js';
import { runAgentStep, type StepOutcome } from '../../source/engine/workflow/agent-step.js';
import { treeEvidenceWatcher } from '../../source/engine/workflow/evidence.js';
import { TEST_BREAKER } from '../support/agent-fakes.js';
import { FakeClock } from '../support/fake-clock.js';
import {
  type Case,
  CORPUS_DIR,
  cases,
  ENGINES,
  expectedFor,
  NOW,
  REPLAY,
  replayEnv,
  whyDifferent,
} from './cases.js';
import { replayRepo } from './replay-repo.js';
import { toolSilence, trackedWatch } from './tool-silence.js';

// Issue 15: the corpus of recorded endings (test/corpus/cases.json, transcripts/), each replayed
// through what the engine really calls: the replay tool stands in for the `claude` or `codex`
// binary, the real adapter reads its output, the real circuit breaker watches it with the
// workflow's evidence watcher, and the workflow's agent step (runAgentStep: usage-limit waits,
// questions, EXIT_SIGNAL, evidence) gives the verdict. Seed 003 sentinel cases go through the
// cycle's block parsers. The tick engine's and the cycle's readings of the same cases are
// replayed in corpus-ticks.test.ts and corpus-cycle.test.ts.

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

const repo = replayRepo();
afterAll(() => repo.dispose());

function runnerFor(c: Case, env: NodeJS.ProcessEnv): AgentRunner {
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
  repo.reset();
  const clock = new FakeClock(Date.parse(c.now ?? NOW));
  const bus = new EngineBus(() => new Date(clock.now()));
  const controller = new AbortController();
  const silence = toolSilence();
  let resetAt: string | undefined;
  bus.subscribe((event) => {
    // A limit is waited out by the step itself: the wait's announcement is the verdict; stop there.
    if (event.type === 'workflow.waiting') {
      resetAt = event.until;
      controller.abort();
    }
  });
  const breaker = new CircuitBreaker({ ...TEST_BREAKER, maxAttempts: 1 }, () => clock.now());
  const watched = trackedWatch(treeEvidenceWatcher({ root: repo.root, git: repo.git }, breaker));
  const prompt = c.prompt === 'template' ? TEMPLATE_PROMPT : 'Implement every pending task.';
  const step = runAgentStep({
    role: 'dev',
    runner: runnerFor(c, replayEnv(c, silence.env)),
    bus,
    breaker,
    clock,
    signal: controller.signal,
    retries: 0,
    watch: watched.watch,
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
      cwd: repo.root,
      timeoutMs: c.hang ? HANG_TIMEOUT_MS : 120_000,
    }),
    // The runner's own check of a claim: the tests it runs pass, or they fail.
    verifyDone: async () => (c.evidence === 'disproved' ? 'the tests fail (npm test exited 1)' : null),
    onBreaker: () => undefined,
  }).finally(() => silence.stop());
  if (c.tool) await silence.drive(clock, c.tool === 'busy', watched.settle);
  const outcome: StepOutcome = await step;
  silence.dispose();
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
  const text = readFileSync(join(CORPUS_DIR, c.transcript), 'utf8');
  const parsed = c.block === 'PLAN' ? parsePlanBlock(text, NONCE) : parseTrackBlock(text, NONCE);
  if (!parsed.ok) return { verdict: 'invalid', detail: parsed.error.message };
  const value = parsed.value as { kind?: string };
  return { verdict: c.block === 'PLAN' ? 'plan' : (value.kind ?? 'track') };
}

describe('the corpus of endings (issue 15)', () => {
  it('holds every kind of ending, each with its source, and a reason for every difference', () => {
    const kinds = new Set(cases.map((c) => c.expect.verdict));
    for (const kind of ['done', 'retry', 'question', 'limit', 'breaker_open', 'invalid', 'phase_blocked'])
      expect(kinds, kind).toContain(kind);
    for (const c of cases) expect(c.source.length, c.id).toBeGreaterThan(10);
    expect(new Set(cases.map((c) => c.id)).size).toBe(cases.length);
    // An engine that reads a case differently from the workflow says why (its own rule, or the case's).
    for (const c of cases)
      for (const engine of ENGINES) {
        const why = whyDifferent(c, engine);
        if (why !== null)
          expect(why.length, `${c.id} (${engine}): ${expectedFor(c, engine).verdict}`).toBeGreaterThan(20);
      }
  });

  it.each(cases.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    const seen = c.format === 'sentinel' ? parseSentinel(c) : await replay(c);
    expect(seen.verdict, `${c.id}: ${seen.detail ?? ''}`).toBe(c.expect.verdict);
    if (c.expect.resetAt) expect(seen.resetAt).toBe(c.expect.resetAt);
    if (c.expect.detail) expect(seen.detail).toContain(c.expect.detail);
  });
});
