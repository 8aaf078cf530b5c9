import { resolve } from 'node:path';
import { worktreesEntry } from '../../engine/index.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';

/** `relais worktrees list|prune [dir]` (issue 19): the runner-owned worktrees of parallel lanes. */
export async function worktreesCommand(
  io: CommandIo,
  words: readonly string[],
  flags: { json: boolean },
): Promise<number> {
  const [action = 'list', projectArg] = words;
  if (action !== 'list' && action !== 'prune') {
    println(
      io.stderr,
      `relais worktrees: "${action}" is not list or prune\nSee \`relais worktrees --help\`.`,
    );
    return EXIT.USAGE;
  }
  const outcome = await worktreesEntry(resolve(io.cwd, projectArg ?? '.'), io.env, action);
  if (flags.json) {
    println(io.stdout, JSON.stringify(outcome));
    return outcome.ok ? EXIT.SUCCESS : EXIT.STOP;
  }
  if (!outcome.ok) {
    println(io.stderr, outcome.message);
    return EXIT.STOP;
  }
  for (const problem of outcome.problems) println(io.stderr, `unreadable lane record: ${problem}`);
  if (outcome.action === 'list') {
    if (outcome.rows.length === 0) println(io.stdout, 'No lane worktree.');
    for (const row of outcome.rows)
      println(
        io.stdout,
        `${row.name}  task ${row.task}  ${row.state}${row.present ? (row.dirty ? ', uncommitted changes' : '') : ', folder missing'}  ${row.path}${row.detail ? `\n    ${row.detail}` : ''}`,
      );
    return EXIT.SUCCESS;
  }
  if (outcome.removed.length === 0) println(io.stdout, 'No lane worktree to prune.');
  for (const r of outcome.removed) println(io.stdout, `removed ${r.name}; kept: ${r.kept}`);
  return EXIT.SUCCESS;
}
