import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builderWrites, CLI, REPO_ROOT, TestProject, task } from '../support/project.js';

let project: TestProject;
afterEach(() => project?.dispose());

describe('relais init', () => {
  it('is idempotent and never overwrites a user file without --force', () => {
    project = TestProject.create();
    project.write('relais/prompts/builder.user.txt', 'my own prompt {{TASK_JSON}}\n');
    const config = project.read('relais.config.json');
    const again = project.cliSync(['init']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/kept +relais\.config\.json/);
    expect(again.stdout).toMatch(/kept +relais\/prompts\/builder\.user\.txt {2}\(customised\)/);
    expect(again.stdout).toMatch(/kept +\.git\/info\/exclude/);
    expect(project.read('relais.config.json')).toBe(config);
    expect(project.read('relais/prompts/builder.user.txt')).toBe('my own prompt {{TASK_JSON}}\n');
    expect(project.read('.git/info/exclude').match(/\/relais\//g)).toHaveLength(1);
  });

  it('--force replaces edited prompts (kept as .bak) but leaves a valid, committed config alone', () => {
    project = TestProject.create();
    project.write('relais/prompts/builder.user.txt', 'mine\n');
    const config = project.read('relais.config.json');
    const forced = project.cliSync(['init', '--force']);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/kept +relais\.config\.json {2}\(valid, so --force leaves it alone/);
    expect(project.read('relais.config.json')).toBe(config);
    // The tree stays clean: the next start is not refused for a dirty worktree.
    expect(project.status()).toBe('');
    const promptDir = readFileSync(join(project.root, 'relais/prompts/builder.user.txt'), 'utf8');
    expect(promptDir).toContain('Execute this TASK.');
  });

  it('--force replaces a config that does not load, and keeps it as .bak', () => {
    project = TestProject.create();
    project.write('relais.config.json', '{ not json');
    const forced = project.cliSync(['init', '--force']);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/replaced +relais\.config\.json/);
    expect(() => JSON.parse(project.read('relais.config.json'))).not.toThrow();
    const backups = project
      .status()
      .split('\n')
      .filter((l) => l.includes('relais.config.json.'));
    expect(backups).toHaveLength(1);
  });

  it('a corrupt STATE.json is reported, not reset; --reset-ledger starts a fresh one and touches nothing else', () => {
    project = TestProject.create();
    project.write('relais/STATE.json', 'garbage{');
    const plain = project.cliSync(['init']);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toMatch(/problem +relais\/STATE\.json +\(corrupt/);
    expect(plain.stdout).toContain('relais init --reset-ledger');
    expect(project.read('relais/STATE.json')).toBe('garbage{');
    const config = project.read('relais.config.json');
    const start = project.cliSync(['status', '--preflight']);
    expect(start.stdout + start.stderr).toContain('relais init --reset-ledger');
    const reset = project.cliSync(['init', '--reset-ledger']);
    expect(reset.code, reset.stdout + reset.stderr).toBe(0);
    expect(reset.stdout).toMatch(
      /replaced +relais\/STATE\.json +\(corrupt file kept as STATE\.json\.\d{8}T\d{6}Z\.corrupt/,
    );
    expect(reset.stdout).not.toContain('relais.config.json');
    expect(project.state().budgets.ticks).toBe(0);
    expect(project.read('relais.config.json')).toBe(config);
    expect(project.status()).toBe('');
    const both = project.cliSync(['init', '--reset-ledger', '--force']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--reset-ledger touches only the ledger');
  });

  it('--reset-ledger never writes through a linked workspace, nor guesses the folder of a config that does not load', () => {
    project = TestProject.create();
    const outside = mkdtempSync(join(tmpdir(), 'relais-outside-'));
    try {
      // The workspace moved away and a link left in its place: the fresh ledger would land outside.
      renameSync(join(project.root, 'relais'), join(outside, 'relais'));
      symlinkSync(join(outside, 'relais'), join(project.root, 'relais'));
      const linked = project.cliSync(['init', '--reset-ledger']);
      expect(linked.code).not.toBe(0);
      expect(linked.stdout + linked.stderr).toContain('symbolic link');
      expect(existsSync(join(outside, 'relais', 'STATE.json'))).toBe(true);
      expect(readdirSync(join(outside, 'relais')).filter((n) => n.includes('.bak'))).toEqual([]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
    project.write('relais.config.json', '{ "version": 1, ');
    const invalid = project.cliSync(['init', '--reset-ledger']);
    expect(invalid.code).not.toBe(0);
    expect(invalid.stdout + invalid.stderr).toContain('fix it first');
  });

  it('detects the project scripts as verification templates', () => {
    const dir = mkdtempSync(join(tmpdir(), 'relais-init-'));
    try {
      spawnSync('git', ['init', '-q'], { cwd: dir });
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({ scripts: { test: 'vitest', lint: 'biome check', build: 'tsc' } }),
      );
      writeFileSync(join(dir, 'pnpm-lock.yaml'), '');
      const r = spawnSync(process.execPath, [CLI, 'init'], { cwd: dir, encoding: 'utf8' });
      expect(r.status).toBe(0);
      const config = JSON.parse(readFileSync(join(dir, 'relais.config.json'), 'utf8'));
      expect(config.$schema).toBe('./relais/schemas/config.schema.json');
      expect(config.verification.templates.map((t: any) => [t.id, t.cmd, ...t.args])).toEqual([
        ['lint', 'pnpm', 'run', 'lint'],
        ['test', 'pnpm', 'run', 'test'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a folder that is not a git repository', () => {
    const dir = mkdtempSync(join(tmpdir(), 'relais-init-'));
    try {
      mkdirSync(join(dir, 'x'));
      const r = spawnSync(process.execPath, [CLI, 'init', 'x'], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, GIT_CEILING_DIRECTORIES: dir },
      });
      expect(r.status).toBe(1);
      expect(r.stdout).toContain('git init');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('relais status', () => {
  it('shows the ledger against caps, the lock and the last report; --json is machine-readable', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'b\n' })],
    });
    project.cliSync(['run']);
    const text = project.cliSync(['status']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Milestone: M1');
    // The ledger in words, against its caps (no config keys such as estimated_cost_usd).
    expect(text.stdout).toContain('1/200 ticks, 1/260 orchestrator calls, 1/200 builder calls');
    expect(text.stdout).toMatch(/^ {11}\$0\.\d{4}, milestone cap \$80\.00$/m);
    expect(text.stdout).not.toContain('estimated_cost_usd');
    expect(text.stdout).toContain('Lock:      free');
    expect(text.stdout).toMatch(/Last run: +\S+ SUCCESS \(1 file, /);
    const json = JSON.parse(project.cliSync(['status', '--json']).stdout);
    expect(json).toMatchObject({
      milestone: 'M1',
      ledger: { ticks: 1 },
      caps: { max_ticks: 200 },
      lock: { held: false },
      last_report: { code: 'SUCCESS' },
    });
  });

  it('--preflight has no side effects and exits 3 with the code when a run would be blocked', () => {
    project = TestProject.create();
    project.write('relais/STATE.json.tmp', 'stale');
    const clean = project.cliSync(['status', '--preflight']);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain('Preflight: OK');
    expect(project.exists('relais/STATE.json.tmp')).toBe(true);
    project.write('src/dirty.ts', 'x');
    const blocked = project.cliSync(['status', '--preflight', '--json']);
    expect(blocked.code).toBe(3);
    expect(JSON.parse(blocked.stdout).preflight).toMatchObject({ ok: false, code: 'BLOCKED_DIRTY_WORKTREE' });
    expect(project.exists('relais/BLOCKED.json')).toBe(false);
    expect(project.exists('relais/REPORT.json')).toBe(false);
  });

  // `relais status | head`: a real pipe whose reader is gone before the first line is written, so
  // every write of the command fails with EPIPE (deterministic, where `head -1` would race).
  it.each(['relais', 'ralphy'])(
    '%s status into a pipe closed early exits quietly with its own code',
    async (name) => {
      project = TestProject.create();
      // The bin name a user types: npm links both to the same file.
      const bin = join(project.base, name);
      symlinkSync(CLI, bin);
      for (const args of [['status'], ['status', '--json'], ['--help']]) {
        const child = spawn(process.execPath, [bin, ...args], {
          cwd: project.root,
          env: project.env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        child.stdout.destroy();
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
        });
        const [code, signal] = await new Promise<[number | null, string | null]>((done) =>
          child.on('close', (c, s) => done([c, s])),
        );
        expect({ args, code, signal, stderr }).toEqual({ args, code: 0, signal: null, stderr: '' });
      }
    },
  );
});

describe('relais doctor', () => {
  it('checks every prerequisite and gives the fix for what fails', () => {
    project = TestProject.create();
    // A login and IS_SANDBOX (tests may run as root): without them the doctor fails, as it should.
    const ready = { IS_SANDBOX: '1', ANTHROPIC_API_KEY: 'test-key' };
    const good = project.cliSync(['doctor'], ready);
    expect(good.code, good.stdout).toBe(0);
    for (const name of [
      'node',
      'git',
      'repository',
      'config',
      'claude',
      'workspace',
      'prompts',
      'schemas',
      'git exclude',
      'ledger',
      'lock',
    ]) {
      expect(good.stdout).toMatch(new RegExp(`(ok|WARN) +${name} `));
    }
    expect(good.stdout).toContain('9.9.9 (Fake Claude Code)');
    rmSync(join(project.root, 'relais/prompts/builder.system.txt'));
    project.commitConfig((c) => {
      c.claude_code_cli.command = 'definitely-not-installed-claude';
    });
    const bad = project.cliSync(['doctor', '--json'], ready);
    expect(bad.code).toBe(1);
    const checks = JSON.parse(bad.stdout).checks;
    expect(checks.find((c: any) => c.name === 'claude')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('npm install -g @anthropic-ai/claude-code'),
    });
    expect(checks.find((c: any) => c.name === 'prompts')).toMatchObject({
      status: 'fail',
      detail: 'missing: builder.system.txt',
    });
  });
});

describe('usage', () => {
  it('an unknown command or flag is a usage error (exit 2)', () => {
    const unknown = spawnSync(process.execPath, [CLI, 'deploy'], { encoding: 'utf8' });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('Unknown command: deploy');
    const flag = spawnSync(process.execPath, [CLI, 'run', '--yolo'], { encoding: 'utf8' });
    expect(flag.status).toBe(2);
    const none = spawnSync(process.execPath, [CLI], { encoding: 'utf8' });
    expect(none.status).toBe(2);
    expect(none.stdout).toContain('Exit codes');
  });

  it('status on a folder that does not exist says so (exit 2) instead of advising relais init', () => {
    const missing = spawnSync(process.execPath, [CLI, 'status', 'no-such-folder'], {
      encoding: 'utf8',
      cwd: REPO_ROOT,
    });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain(`relais status: no such folder: ${join(REPO_ROOT, 'no-such-folder')}`);
    expect(missing.stdout + missing.stderr).not.toContain('relais init');
  });

  it('--json on run prints only NDJSON engine events', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'b\n' })],
    });
    const run = project.cliSync(['run', '--json']);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events[0].type).toBe('run.started');
    expect(events.at(-1)).toMatchObject({ type: 'tick.finished', verdict: 'success', code: 'SUCCESS' });
    expect(events.filter((e) => e.type === 'phase.changed').map((e) => e.phase)).toEqual([
      'LOCK',
      'PREFLIGHT',
      'ORCHESTRATE',
      'BUILD',
      'JUDGE',
      'VERIFY',
      'REPORT',
      'END',
    ]);
    expect(events.every((e) => typeof e.at === 'string')).toBe(true);
  });
});
