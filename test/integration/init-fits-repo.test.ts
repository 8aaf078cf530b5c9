import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { initWorkspace } from '../../source/engine/workspace/init-workspace.js';
import { CLI } from '../support/project.js';

// Issue 21 item 4-5: `relais init` fits the repository, `relais doctor` says what the first tick
// would trip on. Real git repositories shaped like real packages, the real CLI, no lockfile.

let base: string;
afterEach(() => rmSync(base, { recursive: true, force: true }));

function repo(files: Record<string, string>): string {
  base = mkdtempSync(join(tmpdir(), 'relais-init-fit-'));
  const root = join(base, 'repo');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  mkdirSync(join(base, 'home'), { recursive: true });
  const git = (...args: string[]) => spawnSync('git', args, { cwd: root, encoding: 'utf8', env: env() });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'initial');
  return root;
}

function env(): NodeJS.ProcessEnv {
  return { ...process.env, HOME: join(base, 'home'), CI: 'true' };
}

function relais(root: string, ...args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { cwd: root, encoding: 'utf8', env: env() });
}

const FLAT = {
  'package.json': JSON.stringify({
    name: 'flat-thing',
    main: 'index.js',
    scripts: { test: 'node test.js' },
  }),
  'index.js': 'module.exports = (a, b) => a + b;\n',
  'test.js': "const add = require('./index.js');\nif (add(1, 2) !== 3) process.exit(1);\n",
  'readme.md': '# flat-thing\n',
  license: 'MIT\n',
};

describe('relais init fits the repository', () => {
  it('a flat package: the fence is its own files, shown; product_name is the package; a PRD template is offered', () => {
    const root = repo(FLAT);
    const init = relais(root, 'init');
    expect(init.status, init.stdout + init.stderr).toBe(0);
    expect(init.stdout).toContain('derived from the repository: index.js, readme.md, test.js');
    const config = JSON.parse(readFileSync(join(root, 'relais.config.json'), 'utf8'));
    expect(config.scope.default_allowed_globs).toEqual(['index.js', 'readme.md', 'test.js']);
    expect(config.product_name).toBe('flat-thing');
    expect(config.verification.templates.map((t: { id: string }) => t.id)).toEqual(['test']);
    // The checks run sandboxed, writing their task's paths plus the usual cache folders.
    expect(config.sandbox).toEqual({
      mode: 'bwrap',
      verification_writable: ['node_modules/.cache/**', 'node_modules/.vite/**'],
    });
    expect(readFileSync(join(root, 'relais/PRD.template.md'), 'utf8')).toMatch(
      /^# flat-thing\n\n## Objective/,
    );
    expect(init.stdout).toContain('cp relais/PRD.template.md PRD.md');
    // The template lives in the excluded workspace: only the config is new in the tree.
    const status = spawnSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' }).stdout;
    expect(status).toBe('?? relais.config.json\n');
  });

  it('--allow gives the fence outright (non-interactive)', () => {
    const root = repo(FLAT);
    const init = relais(root, 'init', '--allow', 'index.js, test.js');
    expect(init.status).toBe(0);
    expect(init.stdout).toContain('from --allow: index.js, test.js');
    const config = JSON.parse(readFileSync(join(root, 'relais.config.json'), 'utf8'));
    expect(config.scope.default_allowed_globs).toEqual(['index.js', 'test.js']);
  });

  it('a src/ + test/ layout with package.json files', () => {
    const root = repo({
      'package.json': JSON.stringify({ name: '@scope/lib', files: ['lib', 'index.d.ts'] }),
      'lib/index.js': '',
      'index.d.ts': '',
      'test/index.test.js': '',
      'README.md': '',
      '.github/workflows/ci.yml': '',
    });
    relais(root, 'init');
    const config = JSON.parse(readFileSync(join(root, 'relais.config.json'), 'utf8'));
    expect(config.scope.default_allowed_globs).toEqual(['README.md', 'index.d.ts', 'lib/**', 'test/**']);
    expect(config.product_name).toBe('@scope/lib');
  });

  it("a Rust crate: cargo's target/ is a cache its checks may write; a repository of nothing known keeps the bare default", () => {
    const root = repo({ 'Cargo.toml': '[package]\nname = "crab"\n', 'src/main.rs': 'fn main() {}\n' });
    expect(relais(root, 'init').status).toBe(0);
    const config = JSON.parse(readFileSync(join(root, 'relais.config.json'), 'utf8'));
    expect(config.sandbox).toEqual({ mode: 'bwrap', verification_writable: ['target/**'] });
    expect(relais(root, 'doctor').stdout).not.toContain('invalid');
    rmSync(base, { recursive: true, force: true });
    const plain = repo({ 'notes/a.md': '# a\n' });
    expect(relais(plain, 'init').status).toBe(0);
    expect(JSON.parse(readFileSync(join(plain, 'relais.config.json'), 'utf8')).sandbox).toBe('bwrap');
  });
});

describe('relais doctor on the first hour', () => {
  it('warns when the fence matches nothing, and runs the verification once: green is said, red is said', () => {
    const root = repo(FLAT);
    relais(root, 'init', '--allow', 'src/**,README.md');
    spawnSync('git', ['add', 'relais.config.json'], { cwd: root });
    spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'relais'], { cwd: root });
    const doctor = relais(root, 'doctor', '--json');
    const checks = JSON.parse(doctor.stdout).checks as Array<{
      name: string;
      status: string;
      detail: string;
    }>;
    const scope = checks.find((c) => c.name === 'scope');
    expect(scope?.status).toBe('warn');
    expect(scope?.detail).toContain('match none of the 6 tracked files');
    expect(checks.find((c) => c.name === 'verify test')).toMatchObject({ status: 'ok' });

    writeFileSync(join(root, 'test.js'), 'console.error("expected 3, got 4"); process.exit(1);\n');
    spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qam', 'red'], { cwd: root });
    const red = JSON.parse(relais(root, 'doctor', '--json').stdout).checks as typeof checks;
    const verify = red.find((c) => c.name === 'verify test');
    expect(verify?.status).toBe('warn');
    expect(verify?.detail).toContain('already red on a clean tree');
    expect(verify?.detail).toContain('expected 3, got 4');
  });

  it('does not run the verification on a dirty tree', () => {
    const root = repo(FLAT);
    relais(root, 'init');
    const marker = join(root, 'ran');
    writeFileSync(join(root, 'test.js'), `require('fs').writeFileSync(${JSON.stringify(marker)}, '');\n`);
    const checks = JSON.parse(relais(root, 'doctor', '--json').stdout).checks as Array<{
      name: string;
      detail: string;
    }>;
    expect(checks.find((c) => c.name === 'verify')?.detail).toContain('uncommitted changes');
    expect(existsSync(marker)).toBe(false);
  });
});

describe('a fence typed at the terminal (defect 22)', () => {
  // The terminal's question is the injected ConfirmFence port: answered here without a tty.
  it('a fence outside the repository is refused with the reason and asked again', async () => {
    const root = repo({ 'src/index.js': 'export {};\n' });
    const asked: Array<string | null> = [];
    const answers = [['../**', '/etc/**'], ['src/**']];
    const result = await initWorkspace(root, {
      force: false,
      env: env(),
      now: new Date('2026-11-28T10:00:00Z'),
      confirmFence: async (_derived, refused) => {
        asked.push(refused);
        return answers.shift() ?? [];
      },
    });
    expect(result.ok).toBe(true);
    expect(asked[0]).toBeNull();
    expect(asked[1]).toMatch(
      /refused: "\.\.\/\*\*" must be a glob relative to the repository root.*"\/etc\/\*\*"/,
    );
    expect(
      JSON.parse(readFileSync(join(root, 'relais.config.json'), 'utf8')).scope.default_allowed_globs,
    ).toEqual(['src/**']);
  });

  it('after three refused answers nothing is written', async () => {
    const root = repo({ 'src/index.js': 'export {};\n' });
    let asks = 0;
    const result = await initWorkspace(root, {
      force: false,
      env: env(),
      now: new Date('2026-11-28T10:00:00Z'),
      confirmFence: async () => {
        asks++;
        return ['~/**'];
      },
    });
    expect(result.ok).toBe(false);
    expect(asks).toBe(3);
    expect(existsSync(join(root, 'relais.config.json'))).toBe(false);
    expect(existsSync(join(root, 'relais'))).toBe(false);
  });
});
