import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRequest } from '../../source/engine/agents/agent-run.js';
import { configSchema } from '../../source/engine/protocol/config.js';
import { sweepLeftoverScratchOnce } from '../../source/engine/sandbox/leftover-scratch.js';
import { agentSandbox, resolveSandbox } from '../../source/engine/sandbox/sandbox.js';
import { liveGroups } from '../../source/engine/supervise/live-groups.js';
import { prestartProcess } from '../../source/engine/supervise/run-process.js';
import { liveProcessesOf } from '../support/host-pid.js';
import { fresh, processOf, type Seen, watchedTick } from '../support/prestart-watch.js';
import { builderWrites, TestProject, task, unsandboxed } from '../support/project.js';

// Issue 17: once preflight has passed, a tick starts its orchestrator's CLI while it prepares the
// call, and the first orchestrator call adopts that process and only then writes the prompt. Real ticks in process,
// with the fake Claude Code in the real sandbox; a pass-through runner notes what the tick asked.

let project: TestProject;
afterEach(() => project?.dispose());

const tick = (seen: Seen) => watchedTick(project, seen);

/** A tick's first steps when its orchestrator's CLI is started before the call is prepared. */
const STARTED_BEFORE_ITS_CALL = [
  'phase LOCK',
  'phase PREFLIGHT',
  'prestart orchestrator',
  'phase ORCHESTRATE',
];

/** A tick that succeeds: a task, then a builder that edits one file. */
const oneEdit = () => ({
  orchestrator: [{ result_json: task({ verification: { fast: [], slow: [] } }) }],
  builder: [builderWrites({ 'src/a.ts': 'export const a = 2;\n' })],
});

describe('the orchestrator started once preflight has passed', () => {
  it('is started once the start conditions are met, and is the one process its call runs', async () => {
    project = TestProject.create();
    project.scenario(oneEdit());
    const seen = fresh();
    await tick(seen);
    expect(project.report().code).toBe('SUCCESS');
    expect(seen.steps.slice(0, 4)).toEqual(STARTED_BEFORE_ITS_CALL);
    // The builder is prestarted too, on the orchestrator's answer (test/integration/prestart-builder.test.ts).
    expect(seen.prestarted.map((r) => r.role)).toEqual(['orchestrator', 'builder']);
    const [orchestrator] = seen.ran;
    expect(orchestrator?.role).toBe('orchestrator');
    expect(processOf(seen.prestarted[0] as AgentRequest)).toEqual(processOf(orchestrator as AgentRequest));
    // Two calls, two processes: each call adopted its prestarted one (a third start would be a
    // prestarted process left waiting, then discarded).
    expect(project.calls().map((c) => c.role)).toEqual(['orchestrator', 'builder']);
    expect(project.starts()).toHaveLength(2);
    expect(project.calls()[0]?.prompt).toBe(orchestrator?.userPrompt);
    // The sweep of what killed runners left runs `rm` as processes of its own.
    await sweepLeftoverScratchOnce();
    expect(liveGroups.size).toBe(0);
  });

  it('is not started in a tick that preflight refuses: no agent runs at all', async () => {
    project = TestProject.create();
    project.scenario({ orchestrator: [{ result_json: task() }] });
    // An untracked file, and a config edit not committed: the command it names must never run.
    project.write('src/dirty.ts', 'uncommitted\n');
    const planted = join(project.harness, 'planted.sh');
    const ran = join(project.harness, 'planted-ran');
    writeFileSync(planted, `#!/bin/sh\ntouch '${ran}'\n`, { mode: 0o755 });
    project.editConfig((config) => {
      config.claude_code_cli.command = planted;
    });
    const seen = fresh();
    await tick(seen);
    expect(project.report().code).toBe('BLOCKED_DIRTY_WORKTREE');
    expect(existsSync(ran)).toBe(false);
    expect(seen.prestarted).toEqual([]);
    expect(seen.ran).toEqual([]);
    expect(project.starts()).toEqual([]);
    // The sweep of what killed runners left runs `rm` as processes of its own.
    await sweepLeftoverScratchOnce();
    expect(liveGroups.size).toBe(0);
  });

  it('is ended unused when a start condition read after the clean tree refuses the tick (a budget cap): no prompt reaches it', async () => {
    project = TestProject.create();
    project.budgetUsed('ticks', 1, 1);
    project.scenario(oneEdit());
    const seen = fresh();
    await tick(seen);
    expect(project.report()).toMatchObject({
      code: 'BLOCKED_BUDGET_CAP',
      detail: 'milestone M1: ticks: 1 used, cap 1',
    });
    // Started once the tree was found clean, while the ledger was read; then ended, never called.
    expect(seen.steps).toEqual([
      'phase LOCK',
      'phase PREFLIGHT',
      'prestart orchestrator',
      'phase REPORT',
      'phase END',
    ]);
    expect(seen.ran).toEqual([]);
    expect(project.calls()).toEqual([]);
    expect(liveProcessesOf(project.scenarioPath)).toEqual([]);
    // The ledger the refusal read is the one it left: nothing was counted for the unused process.
    expect(project.state().budgets).toMatchObject({ ticks: 1, orchestrator_calls: 0 });
    // The sweep of what killed runners left runs `rm` as processes of its own.
    await sweepLeftoverScratchOnce();
    expect(liveGroups.size).toBe(0);
  });

  it('with runner files past 1 MiB, is started only once they are parsed: a corrupt one refuses the tick with no agent started', async () => {
    project = TestProject.create();
    project.scenario(oneEdit());
    // Valid JSON, not a task: a parse long enough could hold back the timer that ends a waiting CLI.
    project.write('relais/TASK.json', `[${'0,'.repeat(600_000)}0]`);
    const seen = fresh();
    await tick(seen);
    expect(project.report().code).toBe('BLOCKED_CRASH_RECOVERY_REQUIRED');
    expect(seen.prestarted).toEqual([]);
    expect(project.starts()).toEqual([]);
  });

  it('with runner files past 1 MiB that are valid, the tick runs, its orchestrator still started before its call', async () => {
    project = TestProject.create();
    project.scenario(oneEdit());
    const state = project.state();
    // A record the runner would never write this long, which row 6 still reads as valid.
    state.last_run_id = 'r'.repeat(1_200_000);
    project.write('relais/STATE.json', JSON.stringify(state));
    const seen = fresh();
    await tick(seen);
    expect(project.report().code).toBe('SUCCESS');
    expect(seen.steps.slice(0, 4)).toEqual(STARTED_BEFORE_ITS_CALL);
    expect(seen.prestarted.map((r) => r.role)).toEqual(['orchestrator', 'builder']);
    expect(project.starts()).toHaveLength(2);
  });

  it('a tick stopped before its call kills the waiting process at once: no prompt, not even an empty one, reaches an agent', async () => {
    project = TestProject.create();
    project.scenario({ orchestrator: [{ result_json: task() }] });
    for (let round = 0; round < 3; round++) {
      const stop = new AbortController();
      const seen = fresh();
      // Interrupted right after the prestart: the call never comes.
      await watchedTick(project, seen, { signal: stop.signal }, { after: () => stop.abort() });
      expect(project.report().code).toBe('STOP_INTERRUPTED');
      expect(seen.prestarted).toHaveLength(1);
      expect(project.calls()).toEqual([]);
      // The sweep of what killed runners left runs `rm` as processes of its own.
      await sweepLeftoverScratchOnce();
      expect(liveGroups.size).toBe(0);
      expect(liveProcessesOf(project.scenarioPath)).toEqual([]);
    }
  });

  it('is not started outside the OS sandbox, where what it runs while loading could write', async () => {
    project = TestProject.create(
      undefined,
      unsandboxed('the point of the test: no prestart without the sandbox'),
    );
    project.scenario(oneEdit());
    const seen = fresh();
    await tick(seen);
    expect(project.report().code).toBe('SUCCESS');
    expect(seen.prestarted).toEqual([]);
    expect(project.starts()).toHaveLength(2);
  });
});

describe('a prestarted process nobody adopts', () => {
  it('is killed whole before it can read the end of its stdin, even right after its start', async () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'relais-prestart-sbx-')));
    try {
      const root = join(base, 'repo');
      mkdirSync(join(root, 'out'), { recursive: true });
      const sandbox = await resolveSandbox(configSchema.parse({}), root, process.env);
      expect(sandbox.kind).toBe('bwrap');
      // What an agent CLI does with an empty prompt: it runs. Here it leaves a file to say so; a
      // shell, which starts fast enough to act in the moment right after its start.
      const spec = {
        cmd: '/bin/sh',
        args: ['-c', 'cat > /dev/null; echo ran > out/ran'],
        cwd: root,
        env: process.env,
        sandbox: agentSandbox(sandbox, ['out/**']),
      };
      for (let round = 0; round < 40; round++) {
        const started = await prestartProcess(spec);
        await started?.discard();
        expect(existsSync(join(root, 'out/ran'))).toBe(false);
        // The sweep of what killed runners left runs `rm` as processes of its own.
        await sweepLeftoverScratchOnce();
        expect(liveGroups.size).toBe(0);
      }
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
