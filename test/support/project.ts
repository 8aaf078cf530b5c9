import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A real git repository in a temp folder, initialised with the real `relais init`, whose agent
 * CLI is the scripted fake-claude. Every relais command runs as a child process of the built CLI:
 * exactly what a user runs.
 */

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = join(REPO_ROOT, 'dist/cli/main.cjs');
export const FAKE_CLAUDE = join(REPO_ROOT, 'test/support/fake-claude.mjs');

export interface CliRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunningCli {
  readonly done: Promise<CliRun>;
  readonly pid: number;
  waitFor(text: string): Promise<void>;
  signal(name: NodeJS.Signals): void;
}

export interface Scenario {
  orchestrator?: unknown[];
  builder?: unknown[];
  /** The Ralphy workflow's agents (the fake tells them apart by the system prompt they append). */
  spec?: unknown[];
  dev?: unknown[];
  qa?: unknown[];
  /** The Relay planner (seed 004): one JSON answer per call. */
  planner?: unknown[];
  /** The codebase mapper of `relais cycle init` (seed 003 P12): one JSON answer per call. */
  mapper?: unknown[];
}

export class TestProject {
  readonly root: string;
  readonly home: string;
  readonly scenarioPath: string;
  /**
   * Where the fake agents keep their scenario, call log and pid files: outside the repository, so
   * the sandbox makes it writable for them (`sandbox.writable_outside`) without opening the repo.
   */
  readonly harness: string;

  private constructor(readonly base: string) {
    this.root = join(base, 'repo');
    this.home = join(base, 'home');
    this.harness = join(base, 'harness');
    this.scenarioPath = join(this.harness, 'scenario.json');
  }

  /** A committed repository with `files`, relais initialised and configured, config committed. */
  static create(
    files: Record<string, string> = { 'src/a.ts': 'export const a = 1;\n' },
    configure?: (config: any) => void,
  ): TestProject {
    const project = new TestProject(mkdtempSync(join(tmpdir(), 'relais-test-')));
    mkdirSync(project.root, { recursive: true });
    mkdirSync(project.home, { recursive: true });
    mkdirSync(project.harness, { recursive: true });
    project.git('init', '-q', '-b', 'main');
    for (const [path, content] of Object.entries(files)) project.write(path, content);
    project.git('add', '-A');
    project.git('commit', '-q', '--allow-empty', '-m', 'initial');
    const init = project.cliSync(['init']);
    if (init.code !== 0) throw new Error(`relais init failed: ${init.stdout}${init.stderr}`);
    project.editConfig((config) => {
      config.claude_code_cli.command = FAKE_CLAUDE;
      config.scope.default_allowed_globs = [
        'src/**',
        'tests/**',
        'README.md',
        'package.json',
        'pnpm-lock.yaml',
        'docs/**',
      ];
      config.verification.templates = [
        { id: 'ok', cmd: 'node', args: ['-e', 'process.exit(0)'] },
        { id: 'fail', cmd: 'node', args: ['-e', 'process.exit(3)'] },
        {
          id: 'echo',
          cmd: 'node',
          args: ['-e', 'console.log(process.argv[1])', '{{word}}'],
          params: { word: { kind: 'string_token' } },
        },
        {
          id: 'cat',
          cmd: 'node',
          args: ['-e', 'console.log(require("fs").readFileSync(process.argv[1], "utf8"))', '{{file}}'],
          params: { file: { kind: 'path' } },
        },
      ];
      // The product's default: every agent and verification runs inside the OS sandbox
      // (bubblewrap). The fake agents keep their scenario, call log and pid files in the harness
      // folder, which is outside the repository and made writable for them here. A test that
      // proves the judge (the second fence) with a fake doing what the sandbox refuses opts out
      // with `unsandboxed(reason)` (below).
      config.sandbox = { mode: 'bwrap', writable_outside: [project.harness] };
      configure?.(config);
    });
    project.git('add', 'relais.config.json');
    project.git('commit', '-q', '-m', 'relais config');
    return project;
  }

  get env(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      HOME: this.home,
      XDG_CONFIG_HOME: join(this.home, '.config'),
      RELAIS_FAKE_SCENARIO: this.scenarioPath,
      CI: 'true',
    };
  }

  scenario(scenario: Scenario): void {
    writeFileSync(this.scenarioPath, JSON.stringify(scenario));
    rmSync(`${this.scenarioPath}.calls.jsonl`, { force: true });
    rmSync(`${this.scenarioPath}.starts`, { force: true });
  }

  /** The pid of every fake agent process started, prompt or not, in order. */
  starts(): number[] {
    const log = `${this.scenarioPath}.starts`;
    if (!existsSync(log)) return [];
    return readFileSync(log, 'utf8').split('\n').filter(Boolean).map(Number);
  }

  /** Every agent call the fake CLI received, in order. */
  calls(): Array<{ role: string; argv: string[]; prompt: string; home: string; cwd: string }> {
    const log = `${this.scenarioPath}.calls.jsonl`;
    if (!existsSync(log)) return [];
    return readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  }

  editConfig(edit: (config: any) => void): void {
    const path = join(this.root, 'relais.config.json');
    const config = JSON.parse(readFileSync(path, 'utf8'));
    edit(config);
    writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`);
  }

  /** Edits and commits the config, keeping the worktree clean for the next tick. */
  commitConfig(edit: (config: any) => void): void {
    this.editConfig(edit);
    this.git('commit', '-q', '-am', 'config change');
  }

  /**
   * A committed per-milestone cap (`max_<counter>`) and a ledger, milestone M1, that has used
   * `used` of it: at the cap the next tick is refused with BLOCKED_BUDGET_CAP ("milestone M1:
   * ticks: 1 used, cap 1"); past 80% it warns.
   */
  budgetUsed(counter: 'ticks' | 'builder_calls', cap: number, used: number): void {
    this.commitConfig((config) => {
      config.budgets.per_milestone[`max_${counter}`] = cap;
    });
    const state = this.state();
    state.milestone_id = 'M1';
    state.budgets[counter] = used;
    this.write('relais/STATE.json', JSON.stringify(state));
  }

  write(path: string, content: string): void {
    const full = join(this.root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }

  read(path: string): string {
    return readFileSync(join(this.root, path), 'utf8');
  }

  exists(path: string): boolean {
    return existsSync(join(this.root, path));
  }

  json<T = any>(path: string): T {
    return JSON.parse(this.read(path)) as T;
  }

  report(): any {
    return this.json('relais/REPORT.json');
  }

  state(): any {
    return this.json('relais/STATE.json');
  }

  git(...args: string[]): string {
    const r = spawnSync('git', args, { cwd: this.root, env: this.env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  }

  head(): string {
    return this.git('rev-parse', 'HEAD').trim();
  }

  /** `git status --porcelain` including untracked files: empty means clean. */
  status(): string {
    return this.git('status', '--porcelain', '--untracked-files=all');
  }

  cliSync(args: string[], extraEnv: NodeJS.ProcessEnv = {}): CliRun {
    const r = spawnSync(process.execPath, [CLI, ...args], {
      cwd: this.root,
      env: { ...this.env, ...extraEnv },
      encoding: 'utf8',
    });
    return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
  }

  /** Runs the CLI asynchronously (so a test can wait on events while it runs). */
  cli(args: string[], options: { env?: NodeJS.ProcessEnv; nodeArgs?: string[] } = {}): RunningCli {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI, ...args], {
      cwd: this.root,
      env: { ...this.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const waiters: Array<{ text: string; resolve: () => void }> = [];
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      for (const w of waiters.filter((w) => stdout.includes(w.text))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const done = new Promise<CliRun>((resolvePromise) => {
      child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
    });
    return {
      done,
      pid: child.pid as number,
      // Resolves when the CLI has printed `text` (an event, not a timer).
      waitFor: (text: string) =>
        new Promise<void>((resolveWait, reject) => {
          if (stdout.includes(text)) return resolveWait();
          waiters.push({ text, resolve: resolveWait });
          void done.then(() =>
            reject(new Error(`CLI exited before printing "${text}":\n${stdout}\n${stderr}`)),
          );
        }),
      signal: (name: NodeJS.Signals) => child.kill(name),
    };
  }

  dispose(): void {
    rmSync(this.base, { recursive: true, force: true });
  }
}

/** A valid task with overridable parts. */
export function task(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    task_id: 'T1',
    milestone_id: 'M1',
    task_kind: 'execute',
    intent: 'Change a',
    scope: {
      allowed_globs: ['src/**'],
      forbidden_globs: [],
      allow_new_files: false,
      allow_lockfile_changes: false,
    },
    diff_limits: { max_files_touched: 5, max_lines_changed: 100 },
    verification: { fast: ['ok'], slow: [] },
    builder: { mode: 'claude_code', max_turns: 4, instructions: 'Change a' },
    ...overrides,
  };
}

export const BUILDER_OK = { summary: 'did it', files_intended: ['src/a.ts'], commands_ran: [], notes: [] };

/** A builder step that writes files and answers a valid builder_result. */
export function builderWrites(
  files: Record<string, string>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    actions: Object.entries(files).map(([write, content]) => ({ write, content })),
    result_json: BUILDER_OK,
    ...extra,
  };
}

/** A process is alive when it exists and is not a zombie waiting to be reaped. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Opts a harness project out of the OS sandbox: only for a test that proves the judge (the second
 * fence) with a fake that does exactly what the sandbox would refuse (writing `.git/`, `relais/`,
 * outside the repository or the task's folders...), or one about `"sandbox": "off"` itself. The
 * reason is required and written where it is used, so every opt-out says why it is one.
 */
export function unsandboxed(reason: string): (config: any) => void {
  if (reason.trim().length < 12)
    throw new Error(`unsandboxed(reason): say why this test cannot run sandboxed ("${reason}")`);
  return (config) => {
    config.sandbox = 'off';
  };
}
