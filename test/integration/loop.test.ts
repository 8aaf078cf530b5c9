import { existsSync, readdirSync, watch } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killProcessesOf, liveProcessesOf, survivorsOf } from '../support/host-pid.js';
import { builderWrites, TestProject, task } from '../support/project.js';

// `relais loop` (seed 001 PR2, PR3, PR6) and interrupts, through the real CLI.

let project: TestProject;
afterEach(() => project?.dispose());

const write = (n: number) => builderWrites({ 'src/a.ts': `export const a = ${n};\n` });
const stop = (reason = 'all done') => {
  const { builder: _none, ...rest } = task({ task_id: 'DONE' });
  return { ...rest, control: { action: 'stop', reason } };
};

describe('relais loop', () => {
  it('runs tasks until a control stop, one summary line per tick and a final summary (exit 0), in the sandbox', () => {
    // The product's default: every orchestrator, builder and check of the loop runs in bubblewrap.
    project = TestProject.create(undefined);
    const base = project.head();
    project.scenario({
      orchestrator: [
        { result_json: task({ task_id: 'T1' }) },
        { result_json: task({ task_id: 'T2' }) },
        { result_json: stop('the goal is met') },
      ],
      builder: [write(2), write(3)],
    });
    const run = project.cliSync(['loop', '--mode', 'milestone']);
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toMatch(/Tick 1: SUCCESS T1 \[M1\]/);
    expect(run.stdout).toMatch(/Tick 2: SUCCESS T2 \[M1\]/);
    expect(run.stdout).toMatch(/Tick 3: SUCCESS DONE \[M1\] .* control stop/);
    expect(run.stdout).toMatch(
      /Loop finished \(milestone\): 3 tick\(s\) \[3 SUCCESS\], 5 agent call\(s\), \$0\.0500; stopped because control stop: the goal is met/,
    );
    expect(project.git('rev-list', '--count', `${base}..HEAD`).trim()).toBe('2');
    expect(project.report()).toMatchObject({
      code: 'SUCCESS',
      sandbox: 'bwrap',
      control: { action: 'stop', reason: 'the goal is met' },
      agents: { builder: { calls: 0 } },
    });
    expect(run.stdout).not.toContain('sandbox is "off"');
    for (const call of project.calls()) expect(call.home).toMatch(/relais-sandbox-[\w.-]+\/home$/);
  });

  it('--json gives NDJSON with loop events', () => {
    project = TestProject.create();
    project.scenario({ orchestrator: [{ result_json: stop() }] });
    const run = project.cliSync(['loop', '--json']);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.find((e) => e.type === 'loop.tick')).toMatchObject({
      tick: 1,
      code: 'SUCCESS',
      control: 'stop',
    });
    expect(events.at(-1)).toMatchObject({
      type: 'loop.finished',
      ticks: 1,
      exit: 'success',
      reason: 'control stop: all done',
    });
  });

  it('milestone mode stops, before building, when the orchestrator moves to another milestone', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2', milestone_id: 'M2' }) }],
      builder: [write(2), write(3)],
    });
    const run = project.cliSync(['loop', '--mode', 'milestone']);
    expect(run.code).toBe(1);
    expect(project.report()).toMatchObject({
      code: 'STOP_MILESTONE_CHANGED',
      detail: 'the orchestrator moved from milestone M1 to M2',
    });
    expect(project.calls().filter((c) => c.role === 'builder')).toHaveLength(1);
    expect(project.state().milestone_id).toBe('M1');
  });

  it('milestone mode holds to the ledger milestone from the first tick', () => {
    project = TestProject.create();
    const state = project.state();
    state.milestone_id = 'M1';
    project.write('relais/STATE.json', JSON.stringify(state));
    project.scenario({ orchestrator: [{ result_json: task({ milestone_id: 'M2' }) }], builder: [write(2)] });
    const run = project.cliSync(['loop', '--mode', 'milestone']);
    expect(run.code).toBe(1);
    expect(project.report()).toMatchObject({
      code: 'STOP_MILESTONE_CHANGED',
      detail: 'the orchestrator moved from milestone M1 to M2',
    });
    expect(project.state().milestone_id).toBe('M1');
  });

  it('autonomous mode archives each finished milestone, but the run-wide cap still ends the run', () => {
    project = TestProject.create();
    project.commitConfig((c) => {
      c.loop.max_calls_per_run = 7; // 3 ticks of 2 calls, then the 4th cannot reserve 3 more
    });
    project.scenario({
      orchestrator: [1, 2, 3, 4].map((n) => ({
        result_json: task({ task_id: `T${n}`, milestone_id: `M${n}` }),
      })),
      builder: [write(2), write(3), write(4), write(5)],
    });
    const run = project.cliSync(['loop', '--mode', 'autonomous']);
    expect(run.code, run.stdout).toBe(3);
    expect(project.report()).toMatchObject({ code: 'BLOCKED_BUDGET_CAP' });
    expect(project.report().detail).toContain('this loop: run calls: 6 used + 3 worst-case tick > cap 7');
    const state = project.state();
    expect(state.milestone_id).toBe('M3');
    expect(state.budgets).toMatchObject({ ticks: 1, builder_calls: 1 });
    expect(state.archived_milestones.map((m: any) => m.milestone_id)).toEqual(['M1', 'M2']);
    expect(state.totals).toMatchObject({ ticks: 3, builder_calls: 3 });
    expect(readdirSync(join(project.root, 'relais/history/milestones')).sort()).toEqual([
      expect.stringMatching(/^M1-/),
      expect.stringMatching(/^M2-/),
    ]);
  });

  it('stops on the budget cap: preflight blocks the next tick with BLOCKED_BUDGET_CAP (seed 001 acceptance 1)', () => {
    project = TestProject.create();
    project.budgetUsed('ticks', 1, 1);
    project.scenario({ orchestrator: [{ result_json: task() }], builder: [write(2)] });
    const run = project.cliSync(['loop']);
    expect(run.code).toBe(3);
    expect(project.report()).toMatchObject({
      code: 'BLOCKED_BUDGET_CAP',
      detail: 'milestone M1: ticks: 1 used, cap 1',
    });
    expect(project.calls()).toEqual([]);
    const status = JSON.parse(project.cliSync(['status', '--json']).stdout);
    expect(status).toMatchObject({ ledger: { ticks: 1 }, caps: { max_ticks: 1 } });
  });

  it('the budget warning is a soft stop after the tick that crossed it (exit 0)', () => {
    project = TestProject.create();
    project.budgetUsed('builder_calls', 5, 3);
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
      builder: [write(2), write(3)],
    });
    const run = project.cliSync(['loop']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('stopped because budget warning (soft stop)');
    expect(project.calls().filter((c) => c.role === 'builder')).toHaveLength(1);
  });

  it('--max-ticks ends the run after that many ticks', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
      builder: [write(2), write(3)],
    });
    const run = project.cliSync(['loop', '--max-ticks', '1']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('stopped because --max-ticks 1 reached');
    expect(project.cliSync(['loop', '--mode', 'sideways']).code).toBe(2);
    expect(project.cliSync(['loop', '--max-ticks', '0']).code).toBe(2);
  });
});

/** Resolves when `name` appears in `dir` (fs.watch: an event, not a timer). */
/** Polled: /proc tells when a process has started, nothing announces it. */
async function twoSleeps(scenarioPath: string): Promise<void> {
  while (liveProcessesOf(scenarioPath, 'sleep 300').length < 2)
    await new Promise((resolve) => setTimeout(resolve, 20));
}

function appears(dir: string, name: string): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(dir, () => {
      if (existsSync(join(dir, name))) {
        watcher.close();
        resolve();
      }
    });
    if (existsSync(join(dir, name))) {
      watcher.close();
      resolve();
    }
  });
}

describe('interrupts (seed 001 acceptance 2)', () => {
  it('SIGINT during orchestration: report, released lock, clean repo, no child left, exit 130', async () => {
    project = TestProject.create();
    project.scenario({ orchestrator: [{ hang: true, background_sleeper: true }] });
    const cli = project.cli(['loop']);
    await appears(project.harness, 'scenario.json.sleeper.pid');
    cli.signal('SIGINT');
    const run = await cli.done;
    expect(run.code).toBe(130);
    expect(project.report()).toMatchObject({
      code: 'STOP_INTERRUPTED',
      detail: 'orchestrator: interrupted by signal',
    });
    expect(project.exists('relais/lock.json')).toBe(false);
    expect(project.status()).toBe('');
    expect(survivorsOf(project.scenarioPath)).toEqual([]);
    expect(run.stdout).toContain('stopped because interrupted during a tick');
  });

  it('SIGINT during verification: the verification is killed, the builder edit rolled back, exit 130', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' }, (config) => {
      config.verification.templates.push({
        id: 'hang',
        cmd: 'node',
        args: [
          '-e',
          'require("fs").writeFileSync("../harness/verify.pid", String(process.pid)); setInterval(() => {}, 1000)',
        ],
      });
    });
    project.scenario({
      orchestrator: [{ result_json: task({ verification: { fast: ['hang'], slow: [] } }) }],
      builder: [write(2)],
    });
    const cli = project.cli(['run']);
    await appears(project.harness, 'verify.pid');
    cli.signal('SIGINT');
    const run = await cli.done;
    expect(run.code).toBe(130);
    expect(project.report()).toMatchObject({
      code: 'STOP_INTERRUPTED',
      detail: 'verification: interrupted by signal',
      rollback: { clean: true },
    });
    expect(project.read('src/a.ts')).toBe('a\n');
    expect(project.exists('relais/lock.json')).toBe(false);
    expect(survivorsOf(project.scenarioPath)).toEqual([]);
  });

  it('a second SIGINT quits at once (130) and the next run recovers cleanly, losing nothing', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.scenario({
      orchestrator: [
        {
          result_json: task({
            scope: {
              allowed_globs: ['src/**'],
              forbidden_globs: [],
              allow_new_files: true,
              allow_lockfile_changes: false,
            },
          }),
        },
        { result_json: task({ task_id: 'T2' }) },
      ],
      builder: [
        {
          actions: [
            { write: 'src/a.ts', content: 'half\n' },
            { write: 'src/new.ts', content: 'new\n' },
          ],
          say: 'busy',
          hang: true,
        },
        write(7),
      ],
    });
    const cli = project.cli(['run']);
    await cli.waitFor('builder: busy');
    cli.signal('SIGINT');
    // Signals of one kind sent together merge into one: the second goes once the first is handled.
    await cli.waitFor('SIGINT received');
    cli.signal('SIGINT');
    const forced = await cli.done;
    expect(forced.code).toBe(130);
    expect(survivorsOf(project.scenarioPath)).toEqual([]);
    // PR3: the milestone named by the orchestrator survived the forced quit.
    expect(project.state().milestone_id).toBe('M1');
    expect(project.exists('relais/INFLIGHT.json')).toBe(true);
    const next = project.cliSync(['run']);
    expect(next.code, next.stdout).toBe(0);
    const runId = /relais run (\S+) in/.exec(forced.stdout)?.[1];
    expect(next.stdout).toContain(`recovered interrupted run ${runId}: the branch is back on the run's base`);
    expect(project.read(`relais/recovered/${runId}/worktree.patch`)).toContain('+half');
    expect(project.read(`relais/recovered/${runId}/untracked/src/new.ts`)).toBe('new\n');
    expect(project.read('src/a.ts')).toBe('export const a = 7;\n');
    expect(project.exists('relais/INFLIGHT.json')).toBe(false);
  });

  // Issue 15: the forced exit of `relais loop` (not only `relais run`) kills the whole tree before
  // it returns: the builder, a grandchild in its group, and a setsid daemon that left the group and
  // was re-parented to init. Checked the moment the CLI has exited, with no grace.
  it('relais loop: a second SIGINT quits at once (130) with the builder, its grandchild and its setsid daemon dead', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [
        {
          actions: [{ write: 'src/a.ts', content: 'half\n' }],
          say: 'busy',
          background_sleeper: true,
          daemon: true,
          // The graceful stop of the first SIGINT cannot end them: the forced exit must.
          ignore_sigterm: true,
          hang: true,
        },
      ],
    });
    const cli = project.cli(['loop']);
    await cli.waitFor('builder: busy');
    // Both sleeps run: the grandchild in the builder's group, and the daemon setsid re-parented.
    await twoSleeps(project.scenarioPath);
    cli.signal('SIGINT');
    await cli.waitFor('SIGINT received');
    cli.signal('SIGINT');
    const forced = await cli.done;
    expect(forced.code).toBe(130);
    expect(liveProcessesOf(project.scenarioPath)).toEqual([]);
    expect(project.exists('relais/INFLIGHT.json')).toBe(true);
    // The next loop recovers the interrupted tick before anything else.
    project.scenario({ orchestrator: [{ result_json: stop() }] });
    const next = project.cliSync(['loop']);
    expect(next.code, next.stdout).toBe(0);
    expect(next.stdout).toContain('recovered interrupted run');
    expect(project.read('src/a.ts')).toBe('a\n');
  });

  it('a runner killed outright (SIGKILL) mid-build is recovered by the next run too', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
      builder: [{ actions: [{ write: 'src/a.ts', content: 'half\n' }], say: 'busy', hang: true }, write(9)],
    });
    const cli = project.cli(['run']);
    await cli.waitFor('builder: busy');
    cli.signal('SIGKILL');
    await cli.done;
    killProcessesOf(project.scenarioPath);
    expect(project.status()).not.toBe('');
    const next = project.cliSync(['run']);
    expect(next.code, next.stdout).toBe(0);
    expect(next.stdout).toContain('reclaimed a stale lock');
    expect(project.read('src/a.ts')).toBe('export const a = 9;\n');
  });
});
