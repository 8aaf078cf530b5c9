import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { installScopeHook, shellQuote } from '../../source/engine/agents/claude-code/scope-hook.js';

// The PreToolUse hook the runner gives Claude Code (issue 14, scope before the write), run as
// Claude Code runs it: its settings' command through sh, the event on stdin.

const base = mkdtempSync(join(tmpdir(), 'relais-hook-test-'));
const root = join(base, 'repo');
mkdirSync(join(root, 'src'), { recursive: true });
mkdirSync(join(root, '.git'), { recursive: true });
writeFileSync(join(root, 'src/a.ts'), 'a\n');
symlinkSync('/etc', join(root, 'src/out'));
const hook = installScopeHook(
  { allowed: [['src/**'], ['src/**', 'docs/**']], forbidden: ['.git', '.git/**', 'src/secret/**'] },
  root,
);
afterAll(() => {
  hook.dispose();
  rmSync(base, { recursive: true, force: true });
});

function decide(event: unknown): { code: number | null; stderr: string } {
  const settings = JSON.parse(hook.settings);
  const entry = settings.hooks.PreToolUse[0];
  expect(entry.matcher).toBe('Edit|Write|MultiEdit|NotebookEdit');
  const run = spawnSync('sh', ['-c', entry.hooks[0].command], {
    input: typeof event === 'string' ? event : JSON.stringify(event),
    encoding: 'utf8',
  });
  return { code: run.status, stderr: run.stderr };
}

const edit = (file_path: string, cwd = root) => ({
  hook_event_name: 'PreToolUse',
  tool_name: 'Edit',
  cwd,
  tool_input: { file_path, old_string: 'a', new_string: 'b' },
});

describe('the scope hook Relais installs in Claude Code', () => {
  it('lets an in-scope write through (absolute, relative, new file in a new folder)', () => {
    expect(decide(edit(join(root, 'src/a.ts'))).code).toBe(0);
    expect(decide(edit('src/a.ts')).code).toBe(0);
    expect(decide(edit('src/new/deep/b.ts')).code).toBe(0);
    expect(decide(edit('a.ts', join(root, 'src'))).code).toBe(0);
  });

  it('refuses out of scope with a reason the model can act on', () => {
    const out = decide(edit('package.json'));
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("package.json is outside this task's allowed paths (src/**)");
  });

  it('refuses what only one of the allowed sets allows (task AND config)', () => {
    expect(decide(edit('docs/x.md')).code).toBe(2);
  });

  it("names the fence the path is outside of, never the set that allows it (the newcomer's pass, defect 10)", () => {
    // Task scope [src/**, package.json], config fence [src/**, test/**]: package.json is allowed
    // by the task and refused by the config, and the refusal must say the config's fence.
    const named = installScopeHook(
      {
        allowed: [
          ['src/**', 'package.json'],
          ['src/**', 'test/**'],
        ],
        names: ["this task's scope.allowed_globs", "the config's scope.default_allowed_globs"],
        forbidden: ['.git', '.git/**'],
      },
      root,
    );
    try {
      const command = JSON.parse(named.settings).hooks.PreToolUse[0].hooks[0].command;
      const run = (file: string) =>
        spawnSync('sh', ['-c', command], { input: JSON.stringify(edit(file)), encoding: 'utf8' });
      const pkg = run('package.json');
      expect(pkg.status).toBe(2);
      expect(pkg.stderr).toContain(
        "package.json is outside the config's scope.default_allowed_globs (src/**, test/**)",
      );
      expect(pkg.stderr).not.toContain('src/**, package.json');
      const test = run('test/a.test.ts');
      expect(test.status).toBe(2);
      expect(test.stderr).toContain("outside this task's scope.allowed_globs (src/**, package.json)");
      expect(run('src/a.ts').status).toBe(0);
    } finally {
      named.dispose();
    }
  });

  it('refuses forbidden paths and git internals', () => {
    expect(decide(edit('src/secret/k.ts')).stderr).toContain('forbidden');
    expect(decide(edit('.git/hooks/pre-commit')).code).toBe(2);
  });

  it('refuses through a symlink and outside the repository', () => {
    expect(decide(edit('src/out/passwd')).stderr).toContain('outside the repository');
    expect(decide(edit('../elsewhere.txt')).code).toBe(2);
    expect(decide(edit('/tmp/x')).code).toBe(2);
  });

  it('NotebookEdit names its target as notebook_path', () => {
    const event = { tool_name: 'NotebookEdit', cwd: root, tool_input: { notebook_path: 'nb.ipynb' } };
    expect(decide(event).code).toBe(2);
  });

  it('fails closed on input it cannot read', () => {
    expect(decide('not json').code).toBe(2);
    expect(decide({ tool_name: 'Write', cwd: root, tool_input: {} }).code).toBe(2);
  });

  it('never puts a glob in the shell command', () => {
    const evil = installScopeHook({ allowed: [["src/'; touch /tmp/pwned; '"]], forbidden: [] }, root);
    expect(evil.settings).not.toContain('pwned');
    evil.dispose();
    expect(shellQuote("a'b")).toBe("'a'\\''b'");
  });
});
