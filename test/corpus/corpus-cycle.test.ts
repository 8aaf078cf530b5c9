import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CycleRunners } from '../../source/engine/cycle/context.js';
import type { CycleOutcome } from '../../source/engine/cycle/run-cycle.js';
import { supervisedCycleRunners } from '../../source/engine/cycle/supervision.js';
import { EngineBus, type StampedEvent } from '../../source/engine/events.js';
import type { RelaisConfig } from '../../source/engine/protocol/config.js';
import { runnerForProvider } from '../../source/engine/session/index.js';
import { CycleRepo, plan, scripted, spec, track, verdict } from '../support/cycle-project.js';
import { FakeClock } from '../support/fake-clock.js';
import { agentCases, type Case, expectedFor, NOW, REPLAY, type Reading, replayEnv } from './cases.js';
import { toolSilence } from './tool-silence.js';

// Issue 15: the corpus replayed through `relais cycle`'s implementer. The cycle is planned once
// (in-process planner: track, spec, a one-task plan, the task packet); each case then starts from
// that state, the replay plays the implementer through the real adapter under the cycle's own
// supervision (supervisedCycleRunners: one circuit breaker per agent run, its tool-CPU watch, the
// usage-limit wait), implement_task reads its ending, and verify_task judges the commit (the
// project's tests and lint, then a verifier that says YES). The replayed agent writes its work
// first: a change that keeps the tests green, or breaks them when the case's evidence disproves
// the claim.

const GREET = "module.exports = (name) => 'Hello, ' + name;\n";
const WORK = {
  kept: `${GREET}// replayed work\n`,
  broken: "module.exports = (name) => 'Hi, ' + name;\n",
};

/** cycle.timeouts.implementer_seconds for a CLI that never ends (still retrying a 429). */
const HANG_SECONDS = 2;

let repo: CycleRepo;
let planned: { head: string; state: string };
const clockAt = (c: Case) => new FakeClock(Date.parse(c.now ?? NOW));

beforeAll(async () => {
  repo = await CycleRepo.create();
  repo.now = () => new Date(NOW);
  // The cycle's breaker as the workflow replay's: seed §6.1 thresholds, OPEN at the first trigger.
  repo.config = {
    ...repo.config,
    claude_code_cli: { ...repo.config.claude_code_cli, command: REPLAY },
    codex_cli: { ...repo.config.codex_cli, command: REPLAY },
    circuit_breaker: { ...repo.config.circuit_breaker, max_attempts: 1, max_output_size: 1 << 20 },
  };
  const { runners } = scripted({
    planner: [track(), spec(), plan([{ id: 'T1', title: 'Greet politely' }])],
  });
  await repo.cycles(runners, () => repo.state().task.sub_step === 'implement');
  planned = { head: repo.head(), state: repo.read('relais/cycle/STATE.json') };
});
afterAll(() => repo?.dispose());

function implementerFor(c: Case, env: NodeJS.ProcessEnv): CycleRunners['implementer'] {
  const provider = c.format === 'codex-jsonl' ? 'codex' : 'claude';
  return runnerForProvider(provider, repo.config as RelaisConfig, {
    env,
    root: repo.root,
    sandbox: { kind: 'off' },
  });
}

async function replayCycle(c: Case): Promise<Reading> {
  repo.git('reset', '-q', '--hard', planned.head);
  repo.git('clean', '-qfd');
  repo.git('stash', 'clear');
  // The cycle's time budget counts from the case's own "now".
  const state = JSON.parse(planned.state);
  state.budget.started_at = c.now ?? NOW;
  repo.write('relais/cycle/STATE.json', `${JSON.stringify(state, null, 2)}\n`);
  // A hanging CLI is ended by the implementer's own timeout.
  repo.policy.timeouts.implementer_seconds = c.hang ? HANG_SECONDS : 300;
  const clock = clockAt(c);
  const controller = new AbortController();
  const silence = toolSilence();
  const events: StampedEvent[] = [];
  let resetAt: string | undefined;
  const bus = new EngineBus(() => new Date(clock.now()));
  bus.subscribe((event) => {
    events.push(event);
    // The supervision waits out a limit itself: its announcement is the verdict; stop there.
    if (event.type === 'workflow.waiting') {
      resetAt = event.until;
      controller.abort();
    }
  });
  const env = replayEnv(c, {
    ...silence.env,
    RELAIS_REPLAY_WRITE: JSON.stringify({
      'src/greet.js': c.evidence === 'disproved' ? WORK.broken : WORK.kept,
    }),
  });
  const agents = scripted({ verifier: verdict('YES') }).runners;
  const runners = supervisedCycleRunners(
    { ...agents, implementer: implementerFor(c, env) },
    repo.config as RelaisConfig,
    bus,
    clock,
  );
  const cycle = (): Promise<CycleOutcome> =>
    repo.cycle(runners, { bus, signal: controller.signal, now: () => new Date(clock.now()) });
  const implemented = cycle().finally(() => silence.stop());
  if (c.tool) await silence.drive(clock, c.tool === 'busy', () => new Promise((r) => setImmediate(r)));
  const outcome = await implemented;
  silence.dispose();
  if (resetAt !== undefined) return { verdict: 'limit', resetAt };
  const opened = events.find((e) => e.type === 'breaker.changed' && e.breaker.state === 'open');
  if (opened?.type === 'breaker.changed')
    return { verdict: 'breaker_open', detail: opened.detail ?? undefined };
  return readingOf(outcome, cycle);
}

/** implement_task's ending, then (after a commit) verify_task's judgement of it. */
async function readingOf(outcome: CycleOutcome, cycle: () => Promise<CycleOutcome>): Promise<Reading> {
  const said = `${outcome.code ?? outcome.reply}: ${outcome.details}`;
  if (outcome.phase === 'needs_human')
    return { verdict: outcome.code === 'CYCLE_NEEDS_INPUT' ? 'question' : 'paused', detail: said };
  if (outcome.reply !== 'CYCLE_OK') return { verdict: 'retry', detail: said };
  const verified = await cycle();
  const judged = `${verified.code ?? verified.reply}: ${verified.details}`;
  return verified.reply === 'CYCLE_OK' && verified.action === 'verify_task'
    ? { verdict: 'done', detail: judged }
    : { verdict: 'retry', detail: judged };
}

describe("the corpus through the cycle's implementer (issue 15)", () => {
  it.each(agentCases.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    const expected = expectedFor(c, 'cycle');
    const seen = await replayCycle(c);
    expect(seen.verdict, `${c.id}: ${seen.detail ?? ''}`).toBe(expected.verdict);
    if (expected.resetAt) expect(seen.resetAt).toBe(expected.resetAt);
    if (expected.detail) expect(seen.detail).toContain(expected.detail);
  });
});
