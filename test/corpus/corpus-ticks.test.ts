import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageLimit } from '../../source/engine/agents/claude-code/usage-limit.js';
import { supervisedRunner } from '../../source/engine/agents/supervised-runner.js';
import { EngineBus } from '../../source/engine/events.js';
import { Git } from '../../source/engine/judge/git.js';
import type { RelaisConfig } from '../../source/engine/protocol/config.js';
import { roleRoutedRunner } from '../../source/engine/session/index.js';
import { CircuitBreaker } from '../../source/engine/supervise/circuit-breaker.js';
import { runTick } from '../../source/engine/tick/run-tick.js';
import { treeEvidenceWatcher } from '../../source/engine/workflow/evidence.js';
import { readTick } from '../../source/engine/workflow/tick-reading.js';
import { TEST_BREAKER } from '../support/agent-fakes.js';
import { FakeClock } from '../support/fake-clock.js';
import { BUILDER_OK, TestProject, task } from '../support/project.js';
import { agentCases, type Case, expectedFor, NOW, REPLAY, type Reading, replayEnv } from './cases.js';
import { toolSilence, trackedWatch } from './tool-silence.js';

// Issue 15: the corpus replayed through the `ticks` engine's own decision code. Each case is one
// real tick (runTick: orchestrate, build, judge, verify, commit or roll back) in a real git
// repository, with every agent call under the circuit breaker and the evidence watcher as the
// ticks engine runs it (implement-ticks.ts), and its ending read by the engine's readTick. Two
// roles play the transcript in turn:
// - builder: the orchestrator proposes a fixed task (in scope, verified by a check that passes,
//   or fails when the case's evidence disproves the claim), the replayed builder writes its work
//   and answers with the recorded ending;
// - orchestrator: the recorded ending is the orchestrator's own answer (json output, as
//   `claude -p --output-format json` prints it: the result object alone).

type Role = 'builder' | 'orchestrator';

/** A hanging CLI is ended by the runner's own timeouts: the tick's, and the orchestrator call's. */
const HANG_TICK_SECONDS = 4;
const HANG_ORCHESTRATOR_SECONDS = 2;

let project: TestProject;
beforeAll(() => {
  project = TestProject.create({ 'src/a.ts': 'export const a = 1;\n' }, (config) => {
    config.claude_code_cli.command = REPLAY;
    config.verification.templates = [
      { id: 'pass', cmd: 'node', args: ['-e', 'process.exit(0)'] },
      { id: 'fail', cmd: 'node', args: ['-e', 'console.error("1 test failed"); process.exit(1)'] },
    ];
    config.budgets.per_milestone = {
      max_ticks: 10_000,
      max_orchestrator_calls: 10_000,
      max_builder_calls: 10_000,
      max_verify_runs: 10_000,
      max_estimated_cost_usd: 10_000,
    };
    config.history.enabled = false;
  });
});
afterAll(() => project?.dispose());

/** The case's timeouts in the committed config (a hanging CLI needs short ones). */
function timeoutsFor(c: Case): void {
  const tick = c.hang ? HANG_TICK_SECONDS : 300;
  const orchestrator = c.hang ? HANG_ORCHESTRATOR_SECONDS : 120;
  const config = project.json('relais.config.json');
  if (config.runner.max_tick_seconds === tick && config.orchestrator.timeout_seconds === orchestrator) return;
  project.commitConfig((edit) => {
    edit.runner.max_tick_seconds = tick;
    edit.orchestrator.timeout_seconds = orchestrator;
  });
}

/** A Codex transcript is played by the role's Codex provider, through the same routing. */
function routed(c: Case, role: Role, config: RelaisConfig): RelaisConfig {
  if (c.format !== 'codex-jsonl') return config;
  return {
    ...config,
    agents: { ...config.agents, [role]: { ...config.agents[role], provider: 'codex' } },
    codex_cli: { ...config.codex_cli, command: REPLAY },
  };
}

async function replayTick(c: Case, role: Role): Promise<Reading> {
  project.git('reset', '-q', '--hard');
  project.git('clean', '-qfd');
  rmSync(join(project.root, 'relais/REPORT.json'), { force: true });
  timeoutsFor(c);
  const proposed = task({
    scope: {
      allowed_globs: ['src/**'],
      forbidden_globs: [],
      allow_new_files: true,
      allow_lockfile_changes: false,
    },
    verification: { fast: [c.evidence === 'disproved' ? 'fail' : 'pass'], slow: [] },
  });
  const clock = new FakeClock(Date.parse(c.now ?? NOW));
  const bus = new EngineBus(() => new Date(clock.now()));
  const breaker = new CircuitBreaker({ ...TEST_BREAKER, maxAttempts: 1 }, () => clock.now());
  const silence = toolSilence();
  const env = replayEnv(c, {
    ...silence.env,
    RELAIS_REPLAY_ROLE: role,
    RELAIS_REPLAY_TASK: JSON.stringify(proposed),
    RELAIS_REPLAY_BUILDER: JSON.stringify(BUILDER_OK),
    RELAIS_REPLAY_WRITE: JSON.stringify({ 'src/a.ts': 'export const a = 2;\n' }),
  });
  const watched = trackedWatch(
    treeEvidenceWatcher({ root: project.root, git: new Git(project.root, env) }, breaker),
  );
  let limit: UsageLimit | null = null;
  const ticked = runTick({
    root: project.root,
    bus,
    signal: new AbortController().signal,
    env: project.env,
    command: 'tick',
    endedByLimit: () => limit !== null,
    // As implement-ticks.ts runs every agent of a tick: supervised, with evidence and limit watching.
    agentRunner: (setup) =>
      supervisedRunner(
        roleRoutedRunner(routed(c, role, setup.config), {
          env,
          root: project.root,
          sandbox: { kind: 'off' },
        }),
        {
          breaker,
          clock,
          onBreaker: () => undefined,
          watch: watched.watch,
          onLimit: (found) => {
            limit = found;
          },
        },
      ),
  }).finally(() => silence.stop());
  if (c.tool) await silence.drive(clock, c.tool === 'busy', watched.settle);
  const tick = await ticked;
  silence.dispose();
  if (breaker.isOpen) return { verdict: 'breaker_open', detail: breaker.snapshot().last_trigger ?? '' };
  const reading = readTick(tick, limit, true);
  switch (reading.kind) {
    case 'limit':
      return { verdict: 'limit', resetAt: reading.limit.resetAt.toISOString() };
    case 'question':
      return { verdict: 'question', detail: reading.question };
    case 'blocked':
      return { verdict: 'blocked', detail: `${tick.code}: ${tick.detail ?? ''}` };
    case 'stopped':
      return { verdict: 'retry', detail: `${tick.code}: ${tick.detail ?? ''}` };
    case 'succeeded':
      return { verdict: 'done', detail: tick.code };
  }
}

describe('the corpus through the ticks engine (issue 15)', () => {
  for (const [role, engine] of [
    ['builder', 'ticks'],
    ['orchestrator', 'orchestrator'],
  ] as const) {
    describe(`as the ${role}'s answer`, () => {
      it.each(agentCases.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
        const expected = expectedFor(c, engine);
        const seen = await replayTick(c, role);
        expect(seen.verdict, `${c.id}: ${seen.detail ?? ''}`).toBe(expected.verdict);
        if (expected.resetAt) expect(seen.resetAt).toBe(expected.resetAt);
        if (expected.detail) expect(seen.detail).toContain(expected.detail);
      });
    });
  }
});
