import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyPatch } from '../../source/engine/agents/patch/apply-patch.js';
import { Git } from '../../source/engine/judge/git.js';
import { configSchema } from '../../source/engine/protocol/config.js';
import { resolveSandbox, verificationSandbox } from '../../source/engine/sandbox/sandbox.js';

// Issue 14 red team, patch apply: the task's patch is validated path by path before git runs
// (test/integration/builders.test.ts holds the corpus of hostile patches refused there). Should a
// patch ever get past both readings (ours and git's --numstat), `git apply` itself runs in the
// sandbox: these patches are handed to it directly, as if validation had been fooled.

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

async function repo() {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'relais-patch-')));
  const root = join(dir, 'repo');
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(join(root, 'docs'), { recursive: true });
  writeFileSync(join(root, 'src/a.ts'), 'a\n');
  writeFileSync(join(root, 'docs/guide.md'), 'guide\n');
  const git = (...args: string[]) => spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init');
  mkdirSync(join(root, 'relais'));
  const sandbox = await resolveSandbox(configSchema.parse({}), root, process.env);
  expect(sandbox.kind).toBe('bwrap');
  return { root, git: new Git(root, process.env), policy: verificationSandbox(sandbox, ['src/**']) };
}

const edit = (path: string, from: string, to: string) =>
  `diff --git a/${path} b/${path}\n--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-${from}\n+${to}\n`;

describe('red team: git apply in the sandbox', () => {
  it('a patch inside the task folders applies', async () => {
    const { root, git, policy } = await repo();
    expect(await applyPatch(git, edit('src/a.ts', 'a', 'b'), policy)).toEqual({ ok: true });
    expect(readFileSync(join(root, 'src/a.ts'), 'utf8')).toBe('b\n');
  });

  it('a path outside the task folders fails to write (read-only file system): the file is unchanged', async () => {
    const { root, git, policy } = await repo();
    const out = await applyPatch(git, edit('docs/guide.md', 'guide', 'pwned'), policy);
    expect(out.ok).toBe(false);
    expect(!out.ok && out.error).toMatch(/Read-only file system|unable to write|Permission denied/);
    expect(readFileSync(join(root, 'docs/guide.md'), 'utf8')).toBe('guide\n');
    // What the sandbox stood for: without it, the same fooled call writes the file.
    expect(await applyPatch(git, edit('docs/guide.md', 'guide', 'pwned'))).toEqual({ ok: true });
    expect(readFileSync(join(root, 'docs/guide.md'), 'utf8')).toBe('pwned\n');
  });

  it('a new file under relais/ (runner-owned) cannot be created', async () => {
    const { root, git, policy } = await repo();
    const out = await applyPatch(git, '--- /dev/null\n+++ b/relais/STATE.json\n@@ -0,0 +1 @@\n+{}\n', policy);
    expect(out.ok).toBe(false);
    expect(existsSync(join(root, 'relais/STATE.json'))).toBe(false);
  });

  it('.git/hooks and a path out of the repository are refused by git itself, in the sandbox or not', async () => {
    const { root, git, policy } = await repo();
    const hook = '--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+touch /tmp/pwned\n';
    const out = '--- /dev/null\n+++ b/../outside.txt\n@@ -0,0 +1 @@\n+x\n';
    for (const patch of [hook, out]) {
      expect((await applyPatch(git, patch, policy)).ok).toBe(false);
      expect((await applyPatch(git, patch)).ok).toBe(false);
    }
    expect(existsSync(join(root, '.git/hooks/pre-commit'))).toBe(false);
    expect(existsSync(join(dir, 'outside.txt'))).toBe(false);
  });
});
