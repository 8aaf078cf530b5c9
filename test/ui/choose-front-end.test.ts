import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { chooseFrontEnd } from '../../source/cli/front-end/choose-front-end.js';
import { chooseGates } from '../../source/cli/front-end/choose-gates.js';
import { isCi } from '../../source/cli/front-end/is-ci.js';
import type { CommandIo } from '../../source/cli/io.js';
import { approveAll, denyAll } from '../../source/engine/gates.js';
import { FakeStdin } from './helpers.js';

// Which front end a command gets (docs/ARCHITECTURE.md "Flow of a run"), and the one CI rule it shares with
// Ink: when Ink believes it runs in CI it writes only the last frame, so the app must not start.

const tty = { isTTY: true, write: () => true };
const pipe = { isTTY: false, write: () => true };
const keyboard = { isTTY: true } as unknown as NodeJS.ReadStream;
const piped = { isTTY: false } as unknown as NodeJS.ReadStream;

const io = (
  stdout: { isTTY: boolean; write(text: string): unknown },
  env: NodeJS.ProcessEnv,
  stdin: NodeJS.ReadStream | null = keyboard,
) => ({ stdin: stdin ?? undefined, stdout, env });

const human = { TERM: 'xterm-256color' };

describe('chooseFrontEnd', () => {
  test.each([
    ['a terminal, CI unset', io(tty, human), false, 'ink'],
    ['--json on a terminal', io(tty, human), true, 'ndjson'],
    ['--json piped', io(pipe, human), true, 'ndjson'],
    ['stdout piped to a file', io(pipe, human), false, 'plain'],
    ['stdin not a terminal', io(tty, human, piped), false, 'plain'],
    ['no stdin at all', io(tty, human, null), false, 'plain'],
    ['TERM=dumb', io(tty, { TERM: 'dumb' }), false, 'plain'],
    ['no TERM (still a terminal)', io(tty, {}), false, 'ink'],
    ['CI=1', io(tty, { ...human, CI: '1' }), false, 'plain'],
    ['CI=true', io(tty, { ...human, CI: 'true' }), false, 'plain'],
    ['CI= (empty: Ink counts it)', io(tty, { ...human, CI: '' }), false, 'plain'],
    ['CI=0', io(tty, { ...human, CI: '0' }), false, 'ink'],
    ['CI=false', io(tty, { ...human, CI: 'false' }), false, 'ink'],
    ['CONTINUOUS_INTEGRATION=1', io(tty, { ...human, CONTINUOUS_INTEGRATION: '1' }), false, 'plain'],
    ['CONTINUOUS_INTEGRATION=', io(tty, { ...human, CONTINUOUS_INTEGRATION: '' }), false, 'plain'],
    ['CONTINUOUS_INTEGRATION=false', io(tty, { ...human, CONTINUOUS_INTEGRATION: 'false' }), false, 'ink'],
    [
      'CI=false, CONTINUOUS_INTEGRATION=yes',
      io(tty, { CI: 'false', CONTINUOUS_INTEGRATION: 'yes' }),
      false,
      'plain',
    ],
    ['CI=1 with --json', io(tty, { ...human, CI: '1' }), true, 'ndjson'],
  ] as const)('%s', (_, target, json, expected) => {
    expect(chooseFrontEnd(target, json)).toBe(expected);
  });
});

describe('isCi agrees with Ink (is-in-ci)', () => {
  // Ink's own package, run with exactly this environment: exit 0 means "in CI".
  const isInCiCli = join(dirname(createRequire(import.meta.url).resolve('is-in-ci')), 'cli.js');
  const inkSays = (env: Record<string, string>) =>
    spawnSync(process.execPath, [isInCiCli], { env: { PATH: process.env.PATH ?? '', ...env } }).status === 0;

  test.each([
    {},
    { CI: '1' },
    { CI: 'true' },
    { CI: '' },
    { CI: '0' },
    { CI: 'false' },
    { CI: 'FALSE' },
    { CONTINUOUS_INTEGRATION: '' },
    { CONTINUOUS_INTEGRATION: '1' },
    { CONTINUOUS_INTEGRATION: '0' },
    { CI: '0', CONTINUOUS_INTEGRATION: 'true' },
  ] as Record<string, string>[])('%o', (env) => {
    expect(isCi(env)).toBe(inkSays(env));
  });
});

describe('chooseGates uses the same CI rule', () => {
  const gatesIo = (env: NodeJS.ProcessEnv): CommandIo => ({
    cwd: '/tmp',
    stdin: new FakeStdin() as unknown as NodeJS.ReadStream,
    stdout: tty,
    stderr: { write: () => true },
    env,
  });

  test.each([
    [{ CI: '' }, denyAll],
    [{ CONTINUOUS_INTEGRATION: 'true' }, denyAll],
    [{ CI: '1' }, denyAll],
  ] as const)('%o: nobody answers (gates refused)', (env, expected) => {
    const chosen = chooseGates(gatesIo(env), { json: false, yes: false, appGates: null });
    expect(chosen.gates).toBe(expected);
    chosen.close();
  });

  test.each([{ CI: 'false' }, { CI: '0' }, {}])('%o: a human at the terminal gets a prompt', (env) => {
    const chosen = chooseGates(gatesIo(env), { json: false, yes: false, appGates: null });
    expect(chosen.gates).not.toBe(denyAll);
    expect(chosen.gates).not.toBe(approveAll);
    chosen.close();
  });
});
