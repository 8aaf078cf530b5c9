import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineBus } from '../../source/engine/events.js';
import { waitUntilDeadSync } from '../../source/engine/supervise/process-tree.js';
import { runLoop } from '../../source/engine/tick/loop.js';
import { liveHostPidOf, liveProcessesOf, survivorsOf } from '../support/host-pid.js';
import { builderWrites, isAlive, TestProject, task, unsandboxed } from '../support/project.js';

// Recovery after a run was killed mid-tick (seed 001 PR2: "the next run still recovers cleanly"):
// lossless, and never on the word of anything the builder could have written.

let project: TestProject;
afterEach(() => project?.dispose());

const sh = (script: string) => ({ exec: ['sh', '-c', script] });
const write = (n: number) => builderWrites({ 'src/a.ts': `export const a = ${n};\n` });

/**
 * Starts `relais run`, waits until the builder says `busy`, then kills the runner outright. The
 * builder's host pid is found while it runs (the pid it wrote is its sandbox's, see host-pid.ts).
 */
async function killDuringBuild(
  p: TestProject,
  killBuilderToo = true,
): Promise<{ runId: string; builderPid: number }> {
  const cli = p.cli(['run']);
  await cli.waitFor('builder: busy');
  const builderPid = liveHostPidOf(p.scenarioPath, 'builder');
  cli.signal('SIGKILL');
  const out = await cli.done;
  if (killBuilderToo && isAlive(builderPid)) process.kill(builderPid, 'SIGKILL');
  return { runId: /relais run (\S+) in/.exec(out.stdout)?.[1] as string, builderPid };
}

/** These builders attack from outside the task's scope: the judge is the fence under test. */
const judgeOnly = (config: any) => {
  unsandboxed('the builders attack from outside the task scope: the judge is the fence under test')(config);
};

describe('recovery after a killed run', () => {
  it('a commit made while the builder could still run is never moved: recovery asks, and does what the user answers', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n', 'README.md': 'readme\n' }, judgeOnly);
    const base = project.head();
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
      builder: [
        {
          actions: [{ write: 'README.md', content: 'hostile\n' }, sh('git commit -qam "Relais-Run: forged"')],
          say: 'busy',
          hang: true,
        },
        write(2),
      ],
    });
    const { runId } = await killDuringBuild(project);
    const forged = project.head();
    const asked = project.cliSync(['run']);
    expect(asked.code, asked.stdout).toBe(3);
    expect(project.report().code).toBe('BLOCKED_CRASH_RECOVERY_REQUIRED');
    expect(project.report().detail).toContain('cannot tell the builder');
    expect(project.head()).toBe(forged);
    // The user says the commit is the run's: the exact command from the detail, then run again.
    expect(project.report().detail).toContain(`git reset --hard ${base.slice(0, 12)}`);
    project.git('branch', `relais-dropped-${runId}`, 'HEAD');
    project.git('reset', '-q', '--hard', base);
    const next = project.cliSync(['run']);
    expect(next.code, next.stdout).toBe(0);
    expect(project.report()).toMatchObject({ code: 'SUCCESS', base_commit: base });
    expect(project.git('rev-parse', 'HEAD~1').trim()).toBe(base);
    expect(project.read('README.md')).toBe('readme\n');
  });

  it('a global git config planted before the kill never runs in the recovery or the next tick', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' }, judgeOnly);
    const marker = join(project.base, 'pwned');
    const filter = `[filter "pwn"]\n\tclean = sh -c "touch ${marker}; cat"\n\tsmudge = sh -c "touch ${marker}; cat"\n`;
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
      builder: [
        {
          actions: [
            { write: join(project.home, '.gitconfig'), content: filter },
            { write: '.gitattributes', content: '* filter=pwn\n' },
            { write: 'src/a.ts', content: 'x\n' },
          ],
          say: 'busy',
          hang: true,
        },
        write(3),
      ],
    });
    await killDuringBuild(project);
    const next = project.cliSync(['run']);
    expect(next.code, next.stdout).toBe(0);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(project.home, '.gitconfig'))).toBe(false);
  });

  it('unsandboxed, the orphaned builder is ended by the recovery', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' }, judgeOnly);
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
      builder: [{ say: 'busy', hang: true }, write(4)],
    });
    const { builderPid } = await killDuringBuild(project, false);
    expect(isAlive(builderPid)).toBe(true);
    const next = project.cliSync(['run']);
    expect(next.code, next.stdout).toBe(0);
    expect(isAlive(builderPid)).toBe(false);
  });

  it('sandboxed, the builder dies with the killed runner (--die-with-parent) and the next run recovers', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
      builder: [{ say: 'busy', hang: true, background_sleeper: true }, write(4)],
    });
    const cli = project.cli(['run']);
    await cli.waitFor('builder: busy');
    const builderPid = liveHostPidOf(project.scenarioPath, 'builder');
    const sleeperPid = liveHostPidOf(project.scenarioPath, 'sleeper');
    cli.signal('SIGKILL');
    await cli.done;
    // The kernel ends the PID namespace with its init, shortly after the runner died.
    waitUntilDeadSync([builderPid, sleeperPid], 5000);
    expect(isAlive(builderPid)).toBe(false);
    expect(isAlive(sleeperPid)).toBe(false);
    const next = project.cliSync(['run']);
    expect(next.code, next.stdout).toBe(0);
    expect(project.report().code).toBe('SUCCESS');
    expect(project.read('src/a.ts')).toBe('export const a = 4;\n');
  });

  /**
   * In a temp folder of the test's own (what is in it is exactly what these runs made): starts
   * `relais run`, kills it outright once it has printed `at`, and returns the folder and its pid.
   */
  async function killedWithTmpAt(at: string, builderToo = false): Promise<{ tmp: string; pid: number }> {
    const tmp = mkdtempSync(join(tmpdir(), 'relais-recovery-tmp-'));
    const cli = project.cli(['run'], { env: { TMPDIR: tmp } });
    await cli.waitFor(at);
    const builderPid = builderToo ? liveHostPidOf(project.scenarioPath, 'builder') : null;
    cli.signal('SIGKILL');
    await cli.done;
    if (builderPid !== null) waitUntilDeadSync([builderPid], 5000);
    return { tmp, pid: cli.pid };
  }

  /** The next run, in the same temp folder: it succeeds and leaves the folder empty. */
  function nextRunSweeps(tmp: string): void {
    const next = project.cliSync(['run'], { TMPDIR: tmp });
    expect(next.code, next.stdout).toBe(0);
    expect(project.report().code).toBe('SUCCESS');
    expect(readdirSync(tmp)).toEqual([]);
  }

  it("a SIGKILL of the runner leaves its agents' temp folders to the next run, which removes them", async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
      builder: [{ say: 'busy', hang: true }, write(4)],
    });
    const { tmp, pid } = await killedWithTmpAt('builder: busy', true);
    try {
      const left = readdirSync(tmp);
      // The builder's scratch HOME and its scope hook, named for the killed runner.
      expect(left.filter((n) => n.startsWith('relais-sandbox-')).length).toBeGreaterThan(0);
      expect(left.filter((n) => n.startsWith('relais-scope-hook-')).length).toBeGreaterThan(0);
      for (const n of left)
        expect(n).toMatch(new RegExp(`^relais-(sandbox|scope-hook)-[0-9a-f]{8}\\.${pid}\\.\\d+-`));
      nextRunSweeps(tmp);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('a next run without the sandbox sweeps them too, at its end', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.scenario({ orchestrator: [{ hang: true }] });
    // Killed while its orchestrator runs (its scratch HOME made before its call is shown): no
    // build began, so there is nothing to recover and the config can change before the next run.
    const { tmp } = await killedWithTmpAt('orchestrator started');
    try {
      expect(readdirSync(tmp).filter((n) => n.startsWith('relais-sandbox-')).length).toBeGreaterThan(0);
      // A tick whose agents run unsandboxed makes no scratch folder: only its end starts the sweep.
      // (Its scenario afresh, each answer twice: the killed orchestrator, dying, may still log a call.)
      project.scenario({
        orchestrator: [{ result_json: task() }, { result_json: task() }],
        builder: [write(4), write(4)],
      });
      project.commitConfig(unsandboxed('this run must start no sandboxed process at all'));
      nextRunSweeps(tmp);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  // Sandboxed only: unsandboxed verifications run with a cleaned environment, invisible to the
  // host-side lookup (test/integration/first-hour.test.ts covers that case by its argv).
  it('a verification orphaned by a SIGKILL of the runner dies with it (sandbox): nothing of the run is left alive', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' }, (config) => {
      config.verification.templates.push({
        id: 'hang',
        cmd: 'node',
        args: ['-e', 'console.log("verifying"); setInterval(() => {}, 1000)'],
      });
    });
    project.scenario({
      orchestrator: [
        { result_json: task({ verification: { fast: ['hang'], slow: [] } }) },
        { result_json: task({ task_id: 'T2' }) },
      ],
      builder: [write(2), write(3)],
    });
    const cli = project.cli(['run']);
    await cli.waitFor('Verify hang');
    // The verification really runs, and is one of the run's processes ("Verify hang" is printed
    // just before it starts: polled until its process exists, bounded).
    const deadline = Date.now() + 10_000;
    while (liveProcessesOf(project.scenarioPath, 'setInterval').length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(liveProcessesOf(project.scenarioPath, 'setInterval').length).toBeGreaterThan(0);
    cli.signal('SIGKILL');
    await cli.done;
    const next = project.cliSync(['run']);
    expect(next.code, next.stdout).toBe(0);
    expect(project.read('src/a.ts')).toBe('export const a = 3;\n');
    expect(survivorsOf(project.scenarioPath)).toEqual([]);
  });

  it('whatever the killed runner started and left alive is ended by its mark, and only its mark (a sandbox init that missed its parent death)', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
      builder: [{ say: 'busy', hang: true }, write(5)],
    });
    await killDuringBuild(project);
    const recorded = JSON.parse(project.read('relais/INFLIGHT.agent.json'));
    expect(recorded.runner_mark).toMatch(/^\d+\.[0-9a-f]{8}$/);
    // Stand-ins for what the kernel did not end: in no recorded group, parent gone (setsid). One
    // carries the dead runner's mark; the other a live runner's that reused its pid (same pid,
    // another random part): it must survive.
    const [pid] = recorded.runner_mark.split('.');
    const leftover = (mark: string) => {
      const child = spawn('node', ['-e', 'setInterval(() => {}, 1000)'], {
        detached: true,
        stdio: 'ignore',
        env: { ...project.env, RELAIS_PROCESS_MARK: `${mark}-x` },
      });
      child.unref();
      return child.pid as number;
    };
    const orphan = leftover(recorded.runner_mark);
    const stranger = leftover(`${pid}.00000000`);
    try {
      const next = project.cliSync(['run']);
      expect(next.code, next.stdout).toBe(0);
      expect(project.read('src/a.ts')).toBe('export const a = 5;\n');
      expect(isAlive(orphan)).toBe(false);
      expect(isAlive(stranger)).toBe(true);
    } finally {
      for (const p of [orphan, stranger]) if (isAlive(p)) process.kill(p, 'SIGKILL');
    }
  });

  it('a killed builder call still counts at its --max-budget-usd', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.scenario({ orchestrator: [{ result_json: task() }], builder: [{ say: 'busy', hang: true }] });
    await killDuringBuild(project);
    // 0.01 reported by the orchestrator, 1.5 reserved for the builder that never reported.
    expect(project.state().budgets.estimated_cost_usd).toBeCloseTo(1.51, 6);
    // Issue 4: that 1.5 is marked as held for a call of unknown cost, and shown so, not as spend.
    expect(project.state().budgets).toMatchObject({ unreported_usd: 1.5, unreported_calls: 1 });
    const status = project.cliSync(['status']);
    expect(status.stdout).toContain('$0.0100 spent + $1.50 held for 1 call of unknown cost, milestone cap');
  });

  it('a changed ignored file cannot be restored: the next run blocks until a human has looked', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n', '.gitignore': 'node_modules/\n' }, judgeOnly);
    project.write('node_modules/dep/index.js', 'module.exports = 1;\n');
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
      builder: [
        { actions: [{ write: 'node_modules/dep/index.js', content: 'trojan\n' }], say: 'busy', hang: true },
        write(5),
      ],
    });
    await killDuringBuild(project);
    const blocked = project.cliSync(['run']);
    expect(blocked.code).toBe(3);
    expect(project.report()).toMatchObject({
      code: 'BLOCKED_CRASH_RECOVERY_REQUIRED',
      detail: expect.stringContaining('node_modules/dep/index.js'),
    });
    expect(project.status()).toBe('');
    project.write('node_modules/dep/index.js', 'module.exports = 1;\n');
    rmSync(join(project.root, 'relais/INFLIGHT.json'));
    expect(project.cliSync(['run']).code).toBe(0);
  });

  it('an ignored file beside the sources (a row of INFLIGHT.json) changed by the killed builder blocks the next run', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n', '.gitignore': '*.o\n' }, judgeOnly);
    project.write('src/a.o', 'object code\n');
    project.write('src/kept.o', 'kept\n');
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
      builder: [{ actions: [{ write: 'src/a.o', content: 'trojan\n' }], say: 'busy', hang: true }, write(5)],
    });
    await killDuringBuild(project);
    // The fingerprints are rows of one string now; nothing is left in the arrays older runs wrote.
    const inflight = JSON.parse(project.read('relais/INFLIGHT.json'));
    expect(inflight.ignored).toEqual([]);
    expect(inflight.ignored_rows_nul.split('\0').filter((_: string, i: number) => i % 5 === 1)).toEqual([
      'src/a.o',
      'src/kept.o',
    ]);
    const blocked = project.cliSync(['run']);
    expect(blocked.code).toBe(3);
    expect(project.report()).toMatchObject({ code: 'BLOCKED_CRASH_RECOVERY_REQUIRED' });
    expect(project.report().detail).toContain('src/a.o');
    expect(project.report().detail).not.toContain('src/kept.o');
  });

  it('work done by hand after the crash is not lost: the commit stays on the branch once the user vouches for it, files are moved aside', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task({ task_id: 'T2' }) }],
      builder: [{ say: 'busy', hang: true }, write(6)],
    });
    const { runId } = await killDuringBuild(project);
    project.write('notes.md', 'my notes\n');
    project.git('add', 'notes.md');
    project.git('commit', '-qm', 'my own work');
    const mine = project.head();
    project.write('scratch.txt', 'scratch\n');
    const asked = project.cliSync(['run']);
    expect(asked.code, asked.stdout).toBe(3);
    expect(project.head()).toBe(mine);
    expect(project.report().detail).toContain(`git update-ref refs/relais/keep/${runId} HEAD`);
    project.git('update-ref', `refs/relais/keep/${runId}`, 'HEAD');
    const next = project.cliSync(['run']);
    expect(next.code, next.stdout).toBe(0);
    expect(project.git('rev-parse', 'HEAD~1').trim()).toBe(mine);
    expect(project.read('notes.md')).toBe('my notes\n');
    expect(project.read(`relais/recovered/${runId}/untracked/scratch.txt`)).toBe('scratch\n');
    expect(next.stdout).toContain(`relais/recovered/${runId}/untracked/`);
    expect(project.git('for-each-ref', 'refs/relais/keep/')).toBe('');
  });

  it('a rollback that could not finish keeps INFLIGHT.json, so the next run does not start on a dirty state', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n', '.gitignore': 'node_modules/\n' }, judgeOnly);
    project.write('node_modules/runner/index.js', 'real\n');
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task() }],
      builder: [builderWrites({ 'node_modules/runner/index.js': 'fake\n' }), write(7)],
    });
    project.cliSync(['run']);
    expect(project.report().rollback.clean).toBe(false);
    // Issue 14: never called "rolled back" when it was not.
    expect(project.report().code).toBe('STOP_ROLLBACK_FAILED');
    expect(project.read('relais/REPORT.md')).toContain('did NOT finish');
    expect(project.exists('relais/INFLIGHT.json')).toBe(true);
    expect(project.cliSync(['run']).code).toBe(3);
    expect(project.report().detail).toContain('node_modules/runner/index.js');
  });
});

describe('loop interrupted between ticks', () => {
  it('writes a STOP_INTERRUPTED report although nothing was running', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    const controller = new AbortController();
    controller.abort();
    const events: string[] = [];
    const bus = new EngineBus();
    bus.subscribe((e) => events.push(e.type));
    const result = await runLoop({
      root: project.root,
      bus,
      signal: controller.signal,
      env: project.env,
      mode: 'milestone',
      maxTicks: null,
    });
    expect(result).toMatchObject({ exit: 'interrupted', ticks: 0 });
    expect(project.report()).toMatchObject({
      code: 'STOP_INTERRUPTED',
      detail: 'interrupted between ticks of relais loop; nothing was running',
      task: null,
    });
    expect(events.at(-1)).toBe('loop.finished');
    expect(project.exists('relais/lock.json')).toBe(false);
  });
});
