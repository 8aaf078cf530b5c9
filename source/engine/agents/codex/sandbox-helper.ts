import { existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { scratchPrefix } from '../../sandbox/leftover-scratch.js';
import { findExecutable } from '../find-executable.js';

/**
 * Codex's own sandbox, made to work (issue 14, Codex item). Codex 0.169 runs its shell tool under
 * bubblewrap through a helper it starts BY NAME from PATH, `codex-linux-sandbox`; the npm package
 * ships that helper as the native codex binary itself (it dispatches on argv[0]) but puts no such
 * name on PATH, so where bwrap is installed every command Codex runs silently fails. The runner
 * gives each Codex run a private bin folder holding that name, first on the child's PATH.
 */

const TRIPLES: Record<string, { readonly pkg: string; readonly triple: string }> = {
  x64: { pkg: '@openai/codex-linux-x64', triple: 'x86_64-unknown-linux-musl' },
  arm64: { pkg: '@openai/codex-linux-arm64', triple: 'aarch64-unknown-linux-musl' },
};

/**
 * The native codex binary behind `command`: the command itself when it is native, or the
 * platform package's binary when it is the npm launcher (`codex.js`). Null off Linux or when
 * it cannot be found (Codex then runs as before; its own sandbox may not work).
 */
export async function nativeCodex(
  command: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<string | null> {
  if (process.platform !== 'linux') return null;
  const found = await findExecutable(command, env, cwd);
  if (!found) return null;
  const real = realpathSync(found);
  if (!real.endsWith('.js')) return real;
  const target = TRIPLES[process.arch];
  if (!target) return null;
  try {
    const pkg = createRequire(real).resolve(`${target.pkg}/package.json`);
    const binary = join(dirname(pkg), 'vendor', target.triple, 'bin', 'codex');
    return existsSync(binary) ? binary : null;
  } catch {
    return null;
  }
}

export interface CodexHelperPath {
  /** The child's environment, its PATH led by the helper's folder. */
  readonly env: NodeJS.ProcessEnv;
  readonly dispose: () => void;
}

export async function withCodexSandboxHelper(
  command: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<CodexHelperPath> {
  const binary = await nativeCodex(command, env, cwd);
  if (!binary) return { env, dispose: () => undefined };
  const dir = mkdtempSync(join(tmpdir(), scratchPrefix('codex-bin')));
  symlinkSync(binary, join(dir, 'codex-linux-sandbox'));
  return {
    env: { ...env, PATH: env.PATH ? `${dir}${delimiter}${env.PATH}` : dir },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
