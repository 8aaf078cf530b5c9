import { appendFileSync, chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The demo's `gh`: GitHub is a local bare repository there, so no real `gh` may run (a user's
 * own would try to reach github.com, and answer differently on every machine). This stand-in is
 * put first on the demo's PATH; it records every call (argv and the body file's text) in a JSON
 * lines file and answers `gh pr create` with a URL on the reserved `.invalid` domain, which no
 * one can mistake for a pull request that exists.
 */

export const DEMO_PR_URL = 'https://github.invalid/relais-demo/demo-project/pull/1';

export interface GhCall {
  readonly args: string[];
  /** The text of `--body-file`, when the call had one. */
  readonly body: string | null;
}

/** Writes `<dir>/gh`, a shell wrapper that runs this file with node and logs to `log`. */
export function installGhStandIn(dir: string, log: string): string {
  const gh = join(dir, 'gh');
  const script = fileURLToPath(import.meta.url);
  writeFileSync(
    gh,
    `#!/bin/sh\nRELAIS_DEMO_GH_LOG=${sh(log)} exec ${sh(process.execPath)} ${sh(script)} "$@"\n`,
  );
  chmodSync(gh, 0o755);
  return gh;
}

export function readGhCalls(log: string): GhCall[] {
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as GhCall);
}

function sh(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

function standIn(args: string[], log: string): number {
  const bodyAt = args.indexOf('--body-file');
  const bodyFile = bodyAt >= 0 ? args[bodyAt + 1] : undefined;
  const body = bodyFile ? readFileSync(bodyFile, 'utf8') : null;
  appendFileSync(log, `${JSON.stringify({ args, body } satisfies GhCall)}\n`);
  if (args[0] === 'pr' && args[1] === 'create') {
    process.stdout.write(`${DEMO_PR_URL}\n`);
    return 0;
  }
  process.stderr.write('gh (relais demo stand-in): only `gh pr create` is simulated offline\n');
  return 1;
}

// Run as the `gh` command (through the wrapper), not when the demo imports it.
const log = process.env.RELAIS_DEMO_GH_LOG;
if (log && process.argv[1] === fileURLToPath(import.meta.url))
  process.exitCode = standIn(process.argv.slice(2), log);
