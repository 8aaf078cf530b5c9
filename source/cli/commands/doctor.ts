import { resolve } from 'node:path';
import { runDoctor } from '../../engine/index.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';

const MARK = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' } as const;

/** `relais doctor [project] [--json]`: exits 1 when any check fails. */
export async function doctorCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: { json: boolean },
): Promise<number> {
  const root = resolve(io.cwd, projectArg ?? '.');
  const checks = await runDoctor(root, io.env);
  const failed = checks.some((c) => c.status === 'fail');
  if (flags.json) {
    println(io.stdout, JSON.stringify({ ok: !failed, checks }));
  } else {
    for (const c of checks) {
      println(io.stdout, `${MARK[c.status]}  ${c.name.padEnd(12)} ${c.detail}`);
      if (c.fix) println(io.stdout, `      ${''.padEnd(12)} fix: ${c.fix}`);
    }
  }
  return failed ? EXIT.STOP : EXIT.SUCCESS;
}
