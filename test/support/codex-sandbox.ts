import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { REPO_ROOT } from './project.js';

/** The platform binary the npm `codex` launcher runs on this machine (linux x64 here). */
const CODEX_BINARY = join(
  REPO_ROOT,
  'node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex',
);

/**
 * A PATH on which Codex's own sandbox works where bubblewrap is installed. Codex 0.169 runs its
 * shell tool under bwrap through a helper it starts by name, `codex-linux-sandbox`, from PATH; the
 * npm package ships that helper as the codex binary itself (dispatched on argv[0]) but puts no such
 * name on PATH, so with bwrap present every command silently fails. The runner does not fix this
 * for the user yet (issue 14's Codex item); the e2e tests give Codex the helper this way.
 */
export function pathWithCodexSandboxHelper(dir: string, path = process.env.PATH ?? ''): string {
  mkdirSync(dir, { recursive: true });
  symlinkSync(realpathSync(CODEX_BINARY), join(dir, 'codex-linux-sandbox'));
  return `${dir}${delimiter}${path}`;
}
