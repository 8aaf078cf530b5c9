import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, TestProject, unsandboxed } from '../support/project.js';

// A newcomer's first hour with the built CLI: a missing folder, a subfolder, a typo in a flag,
// a fence outside the repository, a doctor that must fail what `start` refuses, `relais config`.

let project: TestProject | null = null;
let dirs: string[] = [];
afterEach(() => {
  project?.dispose();
  project = null;
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'relais-edges-'));
  dirs.push(dir);
  return dir;
}

function relais(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: options.cwd ?? tmpdir(),
    env: { ...process.env, CI: 'true', ...options.env },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A fresh repository with one commit and nothing of relais in it. */
function freshRepo(): string {
  const dir = tempDir();
  const git = (...args: string[]) => spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src/index.js'), 'export {};\n');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'first');
  return dir;
}

describe('a folder that does not exist (defect 15)', () => {
  it('is "no such folder" with exit 2 for every project command, never "spawn git ENOENT"', () => {
    const missing = join(tempDir(), 'nonexistent');
    for (const command of ['doctor', 'init', 'status', 'start', 'run', 'loop']) {
      const r = relais([command, missing]);
      expect(r.code, `${command}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`relais ${command}: no such folder: ${missing}`);
      expect(r.stdout + r.stderr).not.toMatch(/ENOENT|git init/);
    }
    expect(existsSync(missing)).toBe(false);
  });
});

describe('a subfolder of the repository (defect 18)', () => {
  it('status, doctor and init work on the repository root, said once on stderr', () => {
    project = TestProject.create();
    mkdirSync(join(project.root, 'src'), { recursive: true });
    const cwd = join(project.root, 'src');
    const env = project.env;
    const status = relais(['status'], { cwd, env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`Project:   ${project.root}`);
    expect(status.stderr).toContain(`src/ is inside the repository ${project.root}: working at its root`);
    const init = relais(['init'], { cwd, env });
    expect(init.code, init.stdout + init.stderr).toBe(0);
    expect(init.stdout).toMatch(/kept +relais\.config\.json/);
    expect(init.stdout + init.stderr).not.toContain('git init');
    expect(existsSync(join(cwd, 'relais.config.json'))).toBe(false);
  });

  it('a repository that is no Relais project is never walked up to: init in its subfolder sets nothing up', () => {
    // A home folder kept in git, and a new project in it before its own `git init`.
    project = TestProject.create();
    rmSync(join(project.root, 'relais.config.json'));
    const fresh = join(project.root, 'new-project');
    mkdirSync(fresh, { recursive: true });
    const init = relais(['init'], { cwd: fresh, env: project.env });
    expect(init.code).not.toBe(0);
    expect(init.stdout + init.stderr).toContain(`inside the repository ${project.root}`);
    expect(existsSync(join(project.root, 'relais.config.json'))).toBe(false);
    expect(existsSync(join(fresh, 'relais.config.json'))).toBe(false);
  });
});

describe('relais status with an invalid config (defect 19)', () => {
  it('names the invalid file (not "missing") and still shows the ledger; exit 3', () => {
    project = TestProject.create();
    project.write('relais.config.json', '{ "version": 1, ');
    const r = project.cliSync(['status']);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^Config: +invalid: /m);
    expect(r.stdout + r.stderr).not.toContain('BLOCKED_MISSING_CONFIG');
    // The counters without caps to count against (the caps are the config's).
    expect(r.stdout).toMatch(/^ +0 ticks, 0 orchestrator calls, 0 builder calls, 0 verify runs$/m);
    expect(r.stdout).toContain('(no caps: the config does not load)');
    const json = JSON.parse(project.cliSync(['status', '--json']).stdout);
    expect(json.config_problem).toEqual(expect.any(String));
    expect(json.ledger).toMatchObject({ ticks: 0 });
  });
});

describe('version and unknown options (defect 20)', () => {
  it('-v, -V, --version and `relais version` print the version; an unknown option is named', () => {
    const version = relais(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    for (const args of [['-v'], ['-V'], ['version']]) {
      const r = relais(args);
      expect(r, args.join(' ')).toMatchObject({ code: 0, stdout: version.stdout });
    }
    const unknown = relais(['-x']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/-x/);
    expect(unknown.stderr).toContain('relais --help');
    expect(unknown.stdout).not.toContain('Exit codes');
  });
});

describe('relais config (defect 21)', () => {
  it('says what is not set, refuses an unknown key without writing a file, names a bad value once', () => {
    const dir = tempDir();
    const env = { RELAIS_CONFIG_DIR: dir };
    const unset = relais(['config', 'get', 'theme'], { env });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain('theme is not set (relais config set theme <value>)');
    for (const action of [['get'], ['unset'], ['set']]) {
      const r = relais(['config', ...action, 'nope.key', ...(action[0] === 'set' ? ['1'] : [])], { env });
      expect(r.code, action[0]).toBe(2);
      expect(r.stderr).toContain('unknown key "nope.key"');
      expect(r.stderr).toContain('theme');
    }
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
    // Unsetting a known key that was never set writes nothing either.
    expect(relais(['config', 'unset', 'theme'], { env }).code).toBe(0);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
    const bad = relais(['config', 'set', 'theme', 'purple'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr.match(/theme:/g)).toHaveLength(1);
  });
});

describe('relais init on a fresh repository (defects 22, 23)', () => {
  it('refuses a fence outside the repository and writes nothing', () => {
    const dir = freshRepo();
    const r = relais(['init', '--allow', '../**,/etc/**'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /problem +scope\.default_allowed_globs +\(refused: "\.\.\/\*\*" .*"\/etc\/\*\*"/,
    );
    expect(existsSync(join(dir, 'relais.config.json'))).toBe(false);
    expect(existsSync(join(dir, 'relais'))).toBe(false);
  });

  it('says "created" for the PRD template it wrote and points at the README flow', () => {
    const dir = freshRepo();
    const first = relais(['init'], { cwd: dir });
    expect(first.code, first.stdout).toBe(0);
    expect(first.stdout).toMatch(/created +relais\/PRD\.template\.md/);
    expect(first.stdout).toMatch(
      /Next: relais doctor, commit relais\.config\.json, write PRD\.md, then ralphy start\.$/m,
    );
    const again = relais(['init'], { cwd: dir });
    expect(again.stdout).toMatch(/kept +relais\/PRD\.template\.md/);
  });

  it('a config whose fence reaches outside the repository does not load: doctor fails it', () => {
    project = TestProject.create();
    project.commitConfig((c) => {
      c.scope.default_allowed_globs = ['../**', '/etc/**'];
    });
    const r = project.cliSync(['doctor'], { IS_SANDBOX: '1', ANTHROPIC_API_KEY: 'test-key' });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL +config .*default_allowed_globs/);
    expect(r.stdout).toContain('the fence cannot reach outside the repository');
  });
});

describe('relais doctor fails what makes `ralphy start` refuse (defect 8)', () => {
  it('no login, root without IS_SANDBOX, and a corrupt WORKFLOW.json are FAIL (exit 1)', () => {
    project = TestProject.create();
    const ready = project.cliSync(['doctor'], { IS_SANDBOX: '1', ANTHROPIC_API_KEY: 'test-key' });
    expect(ready.code, ready.stdout).toBe(0);
    expect(ready.stdout).toMatch(/ok +claude login /);
    const noLogin = project.cliSync(['doctor'], { IS_SANDBOX: '1', ANTHROPIC_API_KEY: '' });
    expect(noLogin.code).toBe(1);
    expect(noLogin.stdout).toMatch(/FAIL +claude login +no sign of a Claude Code login/);
    expect(noLogin.stdout).toContain('fix: Run `claude` once and log in (/login)');
    // Claude Code's refusal is of root only: as another user there is nothing to check here.
    if (process.getuid?.() === 0) {
      const root = project.cliSync(['doctor'], { IS_SANDBOX: '', ANTHROPIC_API_KEY: 'test-key' });
      expect(root.code).toBe(1);
      expect(root.stdout).toMatch(/FAIL +permissions +running as root/);
    }
    project.write('relais/WORKFLOW.json', 'garbage{');
    const workflow = project.cliSync(['doctor'], { IS_SANDBOX: '1', ANTHROPIC_API_KEY: 'test-key' });
    expect(workflow.code).toBe(1);
    expect(workflow.stdout).toMatch(/FAIL +workflow +relais\/WORKFLOW\.json is unreadable/);
    expect(workflow.stdout).toContain('mv relais/WORKFLOW.json relais/WORKFLOW.json.bak');
  });
});

describe('relais loop refused before a tick (defect 31)', () => {
  it('counts no tick when preflight refuses', () => {
    const dir = freshRepo();
    const r = relais(['loop'], { cwd: dir });
    expect(r.code).toBe(3);
    expect(r.stdout + r.stderr).toMatch(/Loop finished \(milestone\): 0 tick\(s\)/);
    expect(r.stdout + r.stderr).toContain('refused before tick 1 started: BLOCKED_MISSING_CONFIG');
  });
});

describe('a symlink in the fence that leaves the repository, sandbox off (defect 14)', () => {
  it('doctor warns that writes through it are neither refused nor seen; with the sandbox on it says nothing', () => {
    project = TestProject.create(
      undefined,
      unsandboxed('the doctor\'s warning for "sandbox": "off" is under test'),
    );
    const outside = tempDir();
    mkdirSync(join(project.root, 'src'), { recursive: true });
    symlinkSync(outside, join(project.root, 'src/outlink'));
    symlinkSync('../README.md', join(project.root, 'src/inlink'));
    project.git('add', 'src/outlink', 'src/inlink');
    project.git('commit', '-q', '-m', 'links');
    const ready = { IS_SANDBOX: '1', ANTHROPIC_API_KEY: 'test-key' };
    const off = project.cliSync(['doctor'], ready);
    expect(off.stdout).toMatch(/WARN +links +src\/outlink -> .* lead out of the repository/);
    expect(off.stdout).not.toContain('src/inlink');
    project.commitConfig((c) => {
      c.sandbox = 'bwrap';
    });
    const on = project.cliSync(['doctor'], ready);
    expect(on.stdout).not.toMatch(/ links /);
  });
});
