import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { survivorsOf } from '../support/host-pid.js';
import { builderWrites, TestProject, task } from '../support/project.js';

// Bad input gets a clear error and loses nothing.

let project: TestProject;
afterEach(() => project?.dispose());

const edit = builderWrites({ 'src/a.ts': 'export const a = 2;\n' });

describe('bad configuration', () => {
  it('a missing relais.config.json blocks with the init hint and writes nothing', () => {
    project = TestProject.create();
    project.git('rm', '-q', 'relais.config.json');
    project.git('commit', '-qm', 'drop config');
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('Result: BLOCKED_MISSING_CONFIG');
    expect(run.stdout).toContain('relais init');
    expect(project.exists('relais/REPORT.json')).toBe(false);
  });

  it('malformed JSON is reported with its line and column', () => {
    project = TestProject.create();
    project.write('relais.config.json', '{\n  "version": "1.0",\n  "runner": { oops }\n}\n');
    project.git('commit', '-qam', 'broken');
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/relais\.config\.json is not JSON: .* at line 3, column \d+/);
  });

  it.each([
    [(c: any) => (c.diff_limits.default_max_files_touched = 'ten'), 'diff_limits.default_max_files_touched'],
    [(c: any) => (c.verification.templates = [{ id: 'test', cmd: 'npm test' }]), 'never a shell string'],
    [(c: any) => (c.claude_code_cli.command = 'claude; rm -rf ~'), 'claude_code_cli.command'],
    [(c: any) => (c.budgets.per_milestone.max_tickz = 3), 'max_tickz'],
    [
      (c: any) => (c.verification.templates = [{ id: 't', cmd: 'x', args: ['{{p}}'] }]),
      'placeholder {{p}} has no entry in params',
    ],
  ])('an invalid field is named: %#', (edit, expected) => {
    project = TestProject.create();
    project.commitConfig(edit);
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('BLOCKED_MISSING_CONFIG');
    expect(run.stdout).toContain(expected);
  });

  it('a folder that is not a git repository is blocked', () => {
    project = TestProject.create();
    project.git('rev-parse', 'HEAD');
    rmSync(join(project.root, '.git'), { recursive: true, force: true });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('not a git repository');
  });
});

describe('bad runner state', () => {
  it('a corrupt STATE.json blocks and is left untouched', () => {
    project = TestProject.create();
    project.write('relais/STATE.json', '{"schema_version": 1, "milestone_id": 5}');
    project.scenario({ orchestrator: [{ result_json: task() }], builder: [edit] });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(project.report().code).toBe('BLOCKED_CRASH_RECOVERY_REQUIRED');
    expect(project.read('relais/STATE.json')).toBe('{"schema_version": 1, "milestone_id": 5}');
  });

  it('a corrupt REPORT.json from an earlier crash blocks too', () => {
    project = TestProject.create();
    project.write('relais/REPORT.json', '{"run_id": ');
    project.scenario({ orchestrator: [{ result_json: task() }], builder: [edit] });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('relais/REPORT.json: not JSON');
  });

  it('a dirty worktree blocks and the uncommitted work is kept', () => {
    project = TestProject.create();
    project.write('src/wip.ts', 'my work in progress\n');
    project.scenario({ orchestrator: [{ result_json: task() }], builder: [edit] });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(project.report().code).toBe('BLOCKED_DIRTY_WORKTREE');
    expect(project.report().detail).toContain('src/wip.ts');
    expect(project.read('src/wip.ts')).toBe('my work in progress\n');
    expect(project.calls()).toEqual([]);
  });

  it('an exhausted milestone budget blocks before any call (worst-case reservation)', () => {
    project = TestProject.create();
    project.commitConfig((c) => {
      c.budgets.per_milestone.max_orchestrator_calls = 3;
    });
    const state = project.state();
    state.milestone_id = 'M1';
    state.budgets.orchestrator_calls = 2; // 2 used + 2 worst case (call + retry) > 3
    project.write('relais/STATE.json', JSON.stringify(state));
    project.scenario({ orchestrator: [{ result_json: task() }], builder: [edit] });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(project.report().code).toBe('BLOCKED_BUDGET_EXHAUSTED');
    expect(project.report().detail).toContain('orchestrator_calls: 2 used + 2 worst-case tick > cap 3');
    expect(project.report().budgets.orchestrator_calls).toBe(2);
    expect(project.calls()).toEqual([]);
  });

  it('history above its cap rotates: the oldest runs go, the newest stay, and the tick runs', () => {
    project = TestProject.create();
    project.commitConfig((c) => {
      c.history.max_mb = 0.01; // 10,485 bytes
    });
    project.write('relais/history/20200101T000000Z-aaaaaa/report.md', 'x'.repeat(6000));
    project.write('relais/history/20200102T000000Z-bbbbbb/report.md', 'y'.repeat(6000));
    project.write('relais/history/20200103T000000Z-cccccc/report.md', 'z'.repeat(3000));
    project.scenario({ orchestrator: [{ result_json: task() }], builder: [edit] });
    const run = project.cliSync(['run', '--json']);
    expect(project.report().code).toBe('SUCCESS');
    expect(run.code).toBe(0);
    // 15,000 bytes > cap: the oldest goes, which leaves 9,000 bytes and the two newer runs.
    expect(project.exists('relais/history/20200101T000000Z-aaaaaa')).toBe(false);
    expect(project.exists('relais/history/20200102T000000Z-bbbbbb/report.md')).toBe(true);
    expect(project.exists('relais/history/20200103T000000Z-cccccc/report.md')).toBe(true);
    expect(run.stdout).toContain('removed the 1 oldest run folder(s)');
    expect(project.json('relais/history/sizes.json').runs).toEqual({
      '20200102T000000Z-bbbbbb': 6000,
      '20200103T000000Z-cccccc': 3000,
    });
    // The next run measures the first tick's own folder once and keeps the total under the cap.
    const firstRun = project.report().run_id as string;
    project.scenario({ orchestrator: [{ result_json: task() }], builder: [edit] });
    project.cliSync(['run', '--json']);
    const runs = project.json('relais/history/sizes.json').runs as Record<string, number>;
    expect(Object.values(runs).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(0.01 * 1024 * 1024);
    expect(runs[firstRun] ?? 0).toBeGreaterThan(0);
    expect(project.exists('relais/history/20200102T000000Z-bbbbbb')).toBe(false);
  });

  it('an unreadable history size index is rebuilt by measuring, and rotation still happens', () => {
    project = TestProject.create();
    project.commitConfig((c) => {
      c.history.max_mb = 0.001;
    });
    project.write('relais/history/20200101T000000Z-aaaaaa/report.md', 'x'.repeat(5000));
    project.write('relais/history/sizes.json', '{ not json');
    const run = project.cliSync(['status', '--preflight']);
    // Without side effects nothing is deleted and nothing blocks.
    expect(run.stdout).not.toContain('BLOCKED_HISTORY_CAP_CLEANUP_REQUIRED');
    expect(project.exists('relais/history/20200101T000000Z-aaaaaa/report.md')).toBe(true);
    project.scenario({ orchestrator: [{ result_json: task() }], builder: [edit] });
    project.cliSync(['run']);
    expect(project.exists('relais/history/20200101T000000Z-aaaaaa')).toBe(false);
    expect(project.json('relais/history/sizes.json').version).toBe(1);
  });

  it('the 80% budget warning is recorded, emitted and handed to the next orchestrator', () => {
    project = TestProject.create();
    project.budgetUsed('builder_calls', 5, 3);
    project.scenario({
      orchestrator: [{ result_json: task() }, { result_json: task() }],
      builder: [edit, builderWrites({ 'src/a.ts': 'b\n' })],
    });
    const first = project.cliSync(['run']);
    expect(first.stdout).toContain('Budget warning: builder_calls 4/5 (80%)');
    expect(project.state().budget_warning).toBe(true);
    expect(project.report().budgets.warnings).toEqual(['builder_calls 4/5 (80%)']);
    // A warning is not a block (seed 000 §12): the next tick runs and its orchestrator is told.
    const second = project.cliSync(['run']);
    expect(second.code).toBe(0);
    expect(project.calls().filter((c) => c.role === 'orchestrator')[1]?.prompt).toContain('BUDGET CRITICAL');
  });
});

describe('bad agent behaviour', () => {
  it('a missing claude binary blocks with an install hint', () => {
    project = TestProject.create();
    project.commitConfig((c) => {
      c.claude_code_cli.command = '/nonexistent/bin/claude';
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(project.report().code).toBe('BLOCKED_AGENT_CLI_MISSING');
    expect(run.stdout).toContain('npm install -g @anthropic-ai/claude-code');
  });

  it('an orchestrator that exits non-zero without a result is STOP_INTERRUPTED, and the builder never runs', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ no_result: true, exit_code: 1, stderr: 'Error: connection refused\n' }],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(1);
    expect(project.report().code).toBe('STOP_INTERRUPTED');
    expect(project.report().detail).toContain('connection refused');
    expect(project.calls().map((c) => c.role)).toEqual(['orchestrator']);
  });

  it('a builder that exits non-zero with an API error is STOP_INTERRUPTED and its edits are rolled back', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [
        {
          actions: [{ write: 'src/a.ts', content: 'half done\n' }],
          is_error: true,
          api_error_status: 400,
          result: 'Prompt is too long',
          exit_code: 1,
        },
      ],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(1);
    const report = project.report();
    expect(report.code).toBe('STOP_INTERRUPTED');
    expect(report.detail).toContain('API status 400');
    expect(report.rollback).toMatchObject({ performed: true, clean: true });
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
  });

  it('a builder that answers prose is STOP_BUILDER_OUTPUT_INVALID (strict by default) and rolled back', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [{ actions: [{ write: 'src/a.ts', content: 'b\n' }], result: 'All done! I changed a.ts.' }],
    });
    project.cliSync(['run']);
    expect(project.report().code).toBe('STOP_BUILDER_OUTPUT_INVALID');
    expect(project.report().agents.builder.output_valid).toBe(false);
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
  });

  it('with strict_builder_json=false an invalid builder answer is judged from git alone', () => {
    project = TestProject.create();
    project.commitConfig((c) => {
      c.builder.claude_code.strict_builder_json = false;
    });
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [{ actions: [{ write: 'src/a.ts', content: 'b\n' }], result: 'All done!' }],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(0);
    expect(project.report().budgets.warnings.join()).toContain('builder output invalid');
    expect(project.report().agents.builder.output_valid).toBe(false);
  });

  it('a builder hanging past max_tick_seconds is killed with its whole process group and rolled back', async () => {
    project = TestProject.create();
    project.commitConfig((c) => {
      c.runner.max_tick_seconds = 3;
    });
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [
        { actions: [{ write: 'src/a.ts', content: 'partial\n' }], hang: true, background_sleeper: true },
      ],
    });
    const run = await project.cli(['run']).done;
    expect(run.code).toBe(1);
    const report = project.report();
    expect(report.code).toBe('STOP_INTERRUPTED');
    expect(report.detail).toContain('max_tick_seconds');
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
    // None of the run's processes (builder, its background sleeper) is alive.
    expect(survivorsOf(project.scenarioPath)).toEqual([]);
    expect(project.exists('relais/lock.json')).toBe(false);
  });

  it('a builder printing 50 MB keeps the runner bounded in memory', async () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [{ ...edit, print_bytes: 50_000_000, print_line_bytes: 20_000_000 }],
    });
    // A 64 MB heap cannot hold 50 MB of output as strings: finishing at all proves the bound.
    const run = await project.cli(['run'], { nodeArgs: ['--max-old-space-size=64'] }).done;
    expect(run.code, run.stderr.slice(0, 2000)).toBe(0);
    const meta = project.json(`${project.report().pointers.history_dir}/meta.json`);
    expect(project.report().pointers.history_dir).toMatch(/^relais\/history\//);
    expect(meta.max_rss_kb).toBeLessThan(250_000);
  });
});

describe('interrupts', () => {
  it('SIGINT during BUILD ends the builder, rolls back, reports STOP_INTERRUPTED, releases the lock and exits 130', async () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [
        {
          actions: [{ write: 'src/a.ts', content: 'partial\n' }],
          say: 'working on it',
          hang: true,
          background_sleeper: true,
        },
      ],
    });
    const cli = project.cli(['run']);
    await cli.waitFor('builder: working on it');
    cli.signal('SIGINT');
    const run = await cli.done;
    expect(run.code).toBe(130);
    expect(project.report()).toMatchObject({
      code: 'STOP_INTERRUPTED',
      detail: 'builder: interrupted by signal',
      rollback: { clean: true },
    });
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
    expect(project.exists('relais/lock.json')).toBe(false);
    expect(project.exists('../harness/scenario.json.sleeper.pid')).toBe(true);
    expect(survivorsOf(project.scenarioPath)).toEqual([]);
  });
});

describe('the lock', () => {
  it('a lock held by a live process blocks and nothing is written', () => {
    project = TestProject.create();
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${process.pid}/stat`, 'utf8');
    const ticks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    const lock = {
      pid: process.pid,
      started_at: new Date().toISOString(),
      boot_id: boot,
      hostname: hostname(),
      pid_start_ticks: ticks,
      command: 'relais run',
    };
    writeFileSync(join(project.root, 'relais/lock.json'), JSON.stringify(lock));
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('BLOCKED_LOCK_HELD');
    expect(run.stdout).toContain(`held by running pid ${process.pid}`);
    // `relais status` says it once ("held by running pid ..."), not "held, held by ...".
    const status = project.cliSync(['status']);
    expect(status.stdout).toContain(`Lock:      held by running pid ${process.pid}`);
    expect(project.exists('relais/REPORT.json')).toBe(false);
    expect(project.exists('relais/BLOCKED.json')).toBe(false);
  });

  it.each([
    ['a dead pid', { pid: spawnSync('true').pid as number }],
    ['another boot', { pid: process.pid, boot_id: 'some-other-boot' }],
  ])('a stale lock left by %s is reclaimed', (_name, overrides) => {
    project = TestProject.create();
    const lock = {
      started_at: new Date().toISOString(),
      boot_id: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
      hostname: hostname(),
      pid_start_ticks: null,
      command: 'relais run',
      ...overrides,
    };
    writeFileSync(join(project.root, 'relais/lock.json'), JSON.stringify(lock));
    project.scenario({ orchestrator: [{ result_json: task() }], builder: [edit] });
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toContain('reclaimed a stale lock');
    expect(project.exists('relais/lock.json')).toBe(false);
  });
});
