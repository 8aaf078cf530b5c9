import { existsSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRequest, AgentRunner } from '../../source/engine/agents/agent-run.js';
import { claudeRunner } from '../../source/engine/agents/claude-code/run-claude.js';
import { supervisedRunner } from '../../source/engine/agents/supervised-runner.js';
import { EngineBus, type StampedEvent } from '../../source/engine/events.js';
import { Git } from '../../source/engine/judge/git.js';
import type { Sandbox } from '../../source/engine/sandbox/sandbox.js';
import { type BreakerEvent, CircuitBreaker } from '../../source/engine/supervise/circuit-breaker.js';
import type { WorkflowContext } from '../../source/engine/workflow/context.js';
import { evidenceWatcher } from '../../source/engine/workflow/evidence.js';
import { runWorkflow } from '../../source/engine/workflow/run-workflow.js';
import { TEST_BREAKER } from '../support/agent-fakes.js';
import { FakeClock } from '../support/fake-clock.js';
import { survivorsOf } from '../support/host-pid.js';
import { FAKE_CLAUDE, TestProject } from '../support/project.js';
import {
  ghCalls,
  happyScenario,
  qaStep,
  runInProcess,
  scriptedGates,
  specStep,
  TASKS_MD,
  workflowProject,
  YES,
} from '../support/workflow.js';

// Issue 4's breaker and completion layer, against real git repositories and real child processes:
// evidence hashes what the changed files hold, the output cap counts every byte the agent writes,
// the PR phase's 120 s threshold, and an agent that hands its prompt back is not done.

let project: TestProject | null = null;
let scratch: string | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = null;
});

const BREAKER = TEST_BREAKER;

describe('evidence: what the changed files hold', () => {
  function setup() {
    project = TestProject.create({
      'src/a.ts': 'export const a = 1;\n',
      'src/b.ts': 'export const b = 1;\n',
    });
    const clock = new FakeClock();
    const breaker = new CircuitBreaker(BREAKER, () => clock.now());
    const git = new Git(project.root, project.env);
    const ctx = { setup: { git, facts: { root: project.root } } } as unknown as WorkflowContext;
    return { project, clock, breaker, watch: evidenceWatcher(ctx, breaker) };
  }

  it('a file that was dirty before, edited again, is progress (its status line does not change)', async () => {
    const { project, clock, breaker, watch } = setup();
    project.write('src/a.ts', 'export const a = 2;\n');
    await watch(null);
    clock.advance(50_000);
    project.write('src/a.ts', 'export const a = 3;\n');
    expect(project.status().trim()).toBe('M src/a.ts');
    await watch(null);
    clock.advance(50_000);
    expect(breaker.check()).toBeNull();
  });

  it('an untracked file edited again is progress', async () => {
    const { project, clock, breaker, watch } = setup();
    project.write('src/new.ts', 'export const n = 1;\n');
    await watch(null);
    clock.advance(50_000);
    project.write('src/new.ts', 'export const n = 1;\nexport const m = 2;\n');
    await watch(null);
    clock.advance(50_000);
    expect(breaker.check()).toBeNull();
  });

  it('a dirty tree that stays the same is no progress, even when a file is rewritten with the same bytes', async () => {
    const { project, clock, breaker, watch } = setup();
    project.write('src/a.ts', 'export const a = 2;\n');
    project.write('src/new.ts', 'export const n = 1;\n');
    await watch(null);
    clock.advance(30_000);
    project.write('src/a.ts', 'export const a = 2;\n'); // same content, new mtime
    await watch(null);
    clock.advance(30_000);
    await watch(null);
    expect(breaker.check()).toMatchObject({ trigger: 'inactivity' });
  });

  it('a baseline records where a run starts: what changed before it is not reported', async () => {
    const { project, clock, breaker, watch } = setup();
    await watch(null);
    clock.advance(60_000);
    project.write('src/b.ts', 'changed by the runner between runs\n');
    await watch(null, { baseline: true });
    await watch(null);
    expect(breaker.check()).toMatchObject({ trigger: 'inactivity' });
  });
});

describe('the output-size cap counts what the agent process writes, not the tool results it reads', () => {
  /** A dev-agent run of the real Claude adapter on the scripted fake CLI, under a 64 KB cap. */
  async function capped(step: Record<string, unknown>, hang = true) {
    scratch = mkdtempSync(join(tmpdir(), 'relais-cap-'));
    const scenarioPath = join(scratch, 'scenario.json');
    writeFileSync(scenarioPath, JSON.stringify({ dev: [{ ...step, hang }] }));
    const clock = new FakeClock();
    const breaker = new CircuitBreaker({ ...BREAKER, maxOutputBytes: 64 * 1024, maxAttempts: 1 }, () =>
      clock.now(),
    );
    const events: BreakerEvent[] = [];
    const runner = supervisedRunner(
      claudeRunner({
        command: FAKE_CLAUDE,
        extraEnv: {},
        env: { ...process.env, RELAIS_FAKE_SCENARIO: scenarioPath },
        // The breaker is under test here, not the sandbox: the fake writes beside its scenario.
        sandbox: { kind: 'off' },
      }),
      { breaker, clock, onBreaker: (event) => events.push(event) },
    );
    const outcome = await runner.run(devRequest(scratch), new EngineBus());
    return { outcome, events, breaker, scenarioPath };
  }

  it.each([
    ['lines that are not JSON', { print_bytes: 200_000 }],
    ['one line too long to read (cut, never parsed)', { print_line_bytes: 3_000_000 }],
    ['stderr', { stderr: `${'e'.repeat(199)}\n`.repeat(1000) }],
  ])('the cap counts %s: OPEN, and the agent is killed', async (_name, step) => {
    const { outcome, events, breaker, scenarioPath } = await capped(step);
    expect(events).toEqual([
      expect.objectContaining({
        kind: 'open',
        trigger: 'output_size',
        detail: expect.stringContaining('threshold 65536 bytes, max_output_size'),
      }),
    ]);
    expect(breaker.isOpen).toBe(true);
    expect(outcome.process.aborted).toBe(true);
    expect(existsSync(`${scenarioPath}.dev.pid`)).toBe(true);
    expect(survivorsOf(scenarioPath)).toEqual([]);
  });

  it('tool results the agent reads (200 KB, over a 64 KB cap) are not its output: the run ends normally', async () => {
    const big = {
      tools: [{ name: 'Bash', input: { command: 'cat big' } }],
      tool_result: 'y'.repeat(200_000),
      result: 'Read it.\nEXIT_SIGNAL: true',
    };
    const { outcome, events, breaker } = await capped(big, false);
    expect(events.filter((e) => e.trigger === 'output_size')).toEqual([]);
    expect(breaker.isOpen).toBe(false);
    expect(outcome.process.aborted).toBe(false);
    expect(outcome.failure).toBeNull();
  });
});

function devRequest(cwd: string): AgentRequest {
  return {
    role: 'dev',
    attempt: 1,
    systemPrompt: 'You are the dev-agent of Ralphy (Relais).',
    userPrompt: 'Implement the tasks.',
    model: 'fake',
    fallbackModel: null,
    maxTurns: 5,
    maxBudgetUsd: 1,
    tools: ['Read'],
    permissionMode: 'bypassPermissions',
    streaming: true,
    cwd,
    // Long enough that only the breaker can end the hanging agent within the test.
    timeoutMs: 50_000,
    signal: new AbortController().signal,
  };
}

describe('special case: the PR phase waits 120 s for a quiet git or gh', () => {
  it('gh silent for 119 s is fine; at 120 s the breaker opens, gh is stopped, the workflow FAILED', async () => {
    const p = workflowProject((config) => {
      config.circuit_breaker = { ...config.circuit_breaker, max_attempts: 1 };
    });
    project = p;
    p.scenario(happyScenario());
    const clock = new FakeClock();
    const breakerEvents: StampedEvent[] = [];
    let atSilence119: number | null = null;
    // gh's stand-in logs its arguments as it starts: then the fake clock moves. Its whole line,
    // not the log's creation: a gh stopped between the two (a loaded machine) logged no call.
    const ghStarted = new Promise<void>((resolve) => {
      const watcher = watch(p.base, () => {
        if (!existsSync(p.ghLog) || !readFileSync(p.ghLog, 'utf8').endsWith('\n')) return;
        watcher.close();
        resolve();
      });
    });
    const moved = ghStarted.then(() => {
      clock.advance(119_000);
      atSilence119 = breakerEvents.length;
      clock.advance(1_000);
    });
    const run = await runInProcess(p, {
      gates: scriptedGates({ spec: YES, qa: YES }),
      env: { RELAIS_GH_HANG: '1' },
      clock,
      onEvent: (event) => {
        // Triggers only (a phase showing its fresh breaker says nothing of one).
        if (event.type === 'breaker.changed' && event.trigger !== null) breakerEvents.push(event);
      },
    });
    // Said first when it fails: where the workflow ended if it never reached gh.
    expect(ghCalls(p), `${run.states.join(' → ')}: ${JSON.stringify(run.outcome)}`).toHaveLength(1);
    await moved;
    expect(atSilence119).toBe(0);
    expect(breakerEvents).toHaveLength(1);
    expect(breakerEvents[0]).toMatchObject({
      trigger: 'inactivity',
      detail: 'inactivity detected (120s without output; threshold 120s, inactivity_timeout)',
      breaker: { state: 'open' },
    });
    expect(run.states.slice(-2)).toEqual(['PR', 'FAILED']);
    expect(run.outcome.reason).toBe('circuit_breaker_triggered');
  });
});

describe('an agent that hands its prompt back is not done', () => {
  /**
   * The real Claude adapter on the scripted fake CLI, except that the first run of each workflow
   * agent answers with its rendered prompt (after doing the work, so only the answer is wrong).
   */
  function echoingFirstRuns(env: NodeJS.ProcessEnv, sandbox: Sandbox): AgentRunner {
    const real = claudeRunner({ command: FAKE_CLAUDE, extraEnv: {}, env, sandbox });
    const echoed = new Set<string>();
    return {
      async run(request, bus) {
        const outcome = await real.run(request, bus);
        if (!['spec', 'dev', 'qa'].includes(request.role) || echoed.has(request.role)) return outcome;
        echoed.add(request.role);
        return { ...outcome, text: request.userPrompt };
      },
    };
  }

  const OLD_ENDINGS = {
    spec: 'When you have finished your task, end your answer with a line of its own:\nEXIT_SIGNAL: true\n',
    dev: 'When every task is completed, end your answer with a line of its own:\nEXIT_SIGNAL: true\n',
    qa: 'When the report is written, end your answer with a line of its own:\nEXIT_SIGNAL: true\n',
  };

  it.each([
    ['the shipped prompts', false, 'it ended without EXIT_SIGNAL: true'],
    [
      'old project copies ending on a bare status line',
      true,
      'its final answer copies the prompt instead of reporting',
    ],
  ])('with %s: each echo is sent back, each genuine answer is done', async (_name, oldCopies, why) => {
    const p = workflowProject((config) => {
      config.workflow.implementation_engine = 'single';
    });
    project = p;
    if (oldCopies) {
      // A project initialised before this change keeps its own copies (relais/prompts).
      for (const role of ['spec', 'dev', 'qa'] as const) {
        const path = join(p.root, 'relais', 'prompts', `${role}.txt`);
        const text = readFileSync(path, 'utf8');
        writeFileSync(path, `${text.slice(0, text.lastIndexOf('\nWhen ') + 1)}${OLD_ENDINGS[role]}`);
      }
    }
    const completedTasks = TASKS_MD.replaceAll('- **Status**: pending', '- **Status**: completed');
    p.scenario({
      spec: [specStep(), { result: 'SPEC.md and TASKS.md are written: two tasks.\n\nEXIT_SIGNAL: true' }],
      dev: [
        {
          actions: [
            { write: 'src/a.ts', content: 'export const greet = (n: string) => "Hello, " + n;\n' },
            { write: 'src/b.ts', content: 'export const bye = (n: string) => "Bye, " + n;\n' },
            { write: 'specs/TASKS.md', content: completedTasks },
          ],
          result: 'unused: the echo replaces it',
        },
        { result: 'Both tasks are implemented and marked completed.\n\nEXIT_SIGNAL: true' },
      ],
      qa: [qaStep(), { result: 'The report is written: no blocking issue.\n\nEXIT_SIGNAL: true' }],
    });
    const bus = new EngineBus();
    const events: StampedEvent[] = [];
    bus.subscribe((event) => events.push(event));
    const env = { ...p.env, IS_SANDBOX: '1' };
    const outcome = await runWorkflow({
      root: p.root,
      bus,
      signal: new AbortController().signal,
      env,
      gates: scriptedGates({ spec: YES, qa: YES }),
      clock: new FakeClock(),
      agentRunner: (setup) => echoingFirstRuns(env, setup.sandbox),
    });
    const warnings = events.flatMap((e) => (e.type === 'log' && e.level === 'warn' ? [e.message] : []));
    expect(warnings).toEqual(
      expect.arrayContaining(
        ['spec', 'dev', 'qa'].map((role) => `${role}-agent: ${why}; running it again (1/2)`),
      ),
    );
    const calls = p.calls();
    for (const role of ['spec', 'dev', 'qa']) expect(calls.filter((c) => c.role === role)).toHaveLength(2);
    expect(outcome).toMatchObject({ status: 'completed', state: 'COMPLETED' });
  });
});
