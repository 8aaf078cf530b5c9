import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { secretsIn } from '../judge/secrets.js';
import { scratchPrefix } from '../sandbox/leftover-scratch.js';
import { runProcess } from '../supervise/run-process.js';
import { runnerToolEnv } from '../workspace/tool-path.js';
import type { GateReply, GateWait } from './gate-wait.js';

/**
 * A gate answered by a comment on the run's GitHub issue or pull request (issue 20), through `gh`
 * (argv only, never a shell). When a gate starts to wait, the worker says so on the thread; then,
 * while it waits, it reads the thread's comments. A comment answers the gate when:
 *
 * - it was written after the gate started to wait (an older one answered an older gate, or none);
 * - its author may write to the repository: GitHub's author association is OWNER, MEMBER or
 *   COLLABORATOR (anyone else, a drive-by account or a bot without access, is not heard);
 * - its first line is one of these commands (case does not matter):
 *     /relais approve              approve a yes/no gate, or go on without answering a question
 *     /relais reject <reason>      reject (the reason goes to the agent's next attempt)
 *     /relais answer <text>        answer a question (the text may go on over the next lines)
 *
 * The first such comment wins; later ones answer nothing. A run has a thread when it was submitted
 * with --issue N (the issue), or once its pull request exists.
 */

export type Thread =
  | { readonly kind: 'issue'; readonly number: number }
  | { readonly kind: 'pr'; readonly url: string };

export const HEARD_ASSOCIATIONS = ['OWNER', 'MEMBER', 'COLLABORATOR'] as const;

export function threadOf(row: { issue: number | null; pr_url: string | null }): Thread | null {
  if (row.issue !== null) return { kind: 'issue', number: row.issue };
  if (row.pr_url) return { kind: 'pr', url: row.pr_url };
  return null;
}

export interface GateCommand {
  readonly decision: GateReply['decision'];
  readonly reason: string | null;
  readonly text: string | null;
}

export function parseGateComment(body: string): GateCommand | null {
  const match = /^\s*\/relais\s+(approve|reject|answer)\b[ \t]*(.*)$/is.exec(body.replace(/\r\n/g, '\n'));
  if (!match) return null;
  const verb = (match[1] as string).toLowerCase();
  const rest = (match[2] ?? '').trim().slice(0, 4000);
  if (verb === 'approve') return { decision: 'approve', reason: null, text: null };
  if (verb === 'reject') return { decision: 'reject', reason: rest || null, text: null };
  return rest ? { decision: 'answer', reason: null, text: rest } : null;
}

interface Comment {
  readonly author?: { readonly login?: string };
  readonly authorAssociation?: string;
  readonly body?: string;
  readonly createdAt?: string;
}

export interface GhCall {
  readonly gh: string;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
}

/** The first comment after `since` that answers `wait`, as its reply; null when there is none yet. */
export async function findGateComment(
  call: GhCall,
  thread: Thread,
  wait: GateWait,
  since: string,
): Promise<GateReply | null> {
  const target = thread.kind === 'issue' ? String(thread.number) : thread.url;
  const out = await gh(call, [thread.kind, 'view', target, '--json', 'comments']);
  if (out === null) return null;
  let comments: Comment[];
  try {
    comments = (JSON.parse(out) as { comments?: Comment[] }).comments ?? [];
  } catch {
    return null;
  }
  const after = Date.parse(since);
  for (const comment of comments) {
    if (!comment.createdAt || Date.parse(comment.createdAt) <= after) continue;
    if (!HEARD_ASSOCIATIONS.includes(comment.authorAssociation as (typeof HEARD_ASSOCIATIONS)[number]))
      continue;
    const command = parseGateComment(comment.body ?? '');
    if (!command) continue;
    // A question needs an answer or "go on"; a yes/no gate has no use for a text answer.
    if (wait.answer === 'yes_no' && command.decision === 'answer') continue;
    return { wait: wait.id, ...command, by: `@${comment.author?.login ?? 'someone'} on GitHub` };
  }
  return null;
}

/** Says on the thread that the gate waits, and how to answer it. */
export async function announceGate(
  call: GhCall,
  thread: Thread,
  runId: string,
  wait: GateWait,
): Promise<boolean> {
  const how =
    wait.answer === 'text'
      ? '`/relais answer <your answer>`, or `/relais approve` to let it go on without one'
      : '`/relais approve` or `/relais reject <reason>`';
  const body = [
    `**Relais run \`${runId}\` waits at its ${wait.gate} gate:** ${wait.title}`,
    '',
    ...wait.lines.slice(0, 20).map((l) => `> ${l}`),
    '',
    `Answer with a comment whose first line is ${how}. Only the repository's owners, members and collaborators are heard; \`relais approve ${runId}\` answers too.`,
  ].join('\n');
  // What a gate shows comes partly from agents: a body that looks like it holds a secret is not posted.
  if (secretsIn(body).length > 0) return false;
  const dir = await mkdtemp(join(tmpdir(), scratchPrefix('gate')));
  try {
    const file = join(dir, 'body.md');
    await writeFile(file, body);
    const target = thread.kind === 'issue' ? String(thread.number) : thread.url;
    return (await gh(call, [thread.kind, 'comment', target, '--body-file', file])) !== null;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** gh's stdout, or null when it failed; through the process port (argv only, its tree ended). */
async function gh(call: GhCall, args: string[]): Promise<string | null> {
  const MAX_BYTES = 16 * 1024 * 1024;
  const ran = await runProcess({
    cmd: call.gh,
    args,
    cwd: call.cwd,
    // The runner's own gh: never one a PATH folder inside the checkout could shadow.
    env: runnerToolEnv(call.env, call.cwd),
    timeoutMs: 60_000,
    keepTailBytes: MAX_BYTES,
  });
  // A reply cut at the cap would be read as another thread: none is better than part of one.
  if (ran.exitCode !== 0 || ran.stdoutBytes > MAX_BYTES) return null;
  return ran.stdoutTail;
}
