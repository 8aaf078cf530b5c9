import { mkdir, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentRunner } from '../agents/agent-run.js';
import { findRunnerTool } from '../agents/find-executable.js';
import type { EngineBus } from '../events.js';
import { secretsIn } from '../judge/secrets.js';
import type { RelaisConfig } from '../protocol/config.js';
import { acquireLock } from '../session/index.js';
import type { Clock } from '../supervise/clock.js';
import type { WorkspacePaths } from '../workspace/paths.js';
import type { Applied } from './apply.js';
import { plannerHasNews } from './batch.js';
import { commentOnIssue, type GhRun, ghLogin, viewIssue } from './github.js';
import { plannerPass, standaloneCall } from './pass.js';
import type { Session } from './schemas.js';
import {
  issueSessionId,
  newSession,
  openSession,
  type PlannerPaths,
  plannerPaths,
  writeSession,
} from './store.js';
import { commentBody, importThread, issueSubject } from './thread.js';

/**
 * `relais plan --issue <n>`: one planner pass on a GitHub issue, like a bot a scheduler runs.
 * It reads the thread, posts what an earlier run could not, does nothing when no human wrote
 * since the planner's last comment (seed 004: silence → do nothing), and otherwise runs the
 * planner, executes its validated answer (gaps and learnings in the workspace) and posts its
 * comments. Comments are saved before they are posted, so a failed post is retried next run; one
 * that looks like it holds a secret is withheld for a human instead. The planner's own comments
 * are the marked ones of the account gh posts as. A planner that keeps failing on the same thread
 * is not called again (after MAX_TRIES) until somebody writes.
 */

export interface IssuePassInput {
  readonly issue: number;
  readonly paths: WorkspacePaths;
  readonly root: string;
  readonly config: RelaisConfig;
  readonly env: NodeJS.ProcessEnv;
  readonly bus: EngineBus;
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly runner: AgentRunner;
  readonly now: () => Date;
}

export type IssueOutcome =
  | { kind: 'blocked'; detail: string; fix: string }
  | { kind: 'silent'; session: Session; posted: number }
  | { kind: 'ready_already'; session: Session; posted: number }
  | { kind: 'planned'; session: Session; applied: Applied; posted: number }
  | { kind: 'invalid'; session: Session; problems: string[] }
  | { kind: 'failed'; detail: string; fix: string }
  | { kind: 'interrupted' };

export async function planIssue(input: IssuePassInput): Promise<IssueOutcome> {
  const gh = await findRunnerTool(input.config.pr.gh_command, input.env, input.root);
  if (!gh)
    return {
      kind: 'blocked',
      detail: `the GitHub CLI (${input.config.pr.gh_command}) is not installed or not on PATH`,
      fix: 'Install it (https://cli.github.com) and run gh auth login, or set pr.gh_command in relais.config.json.',
    };
  const pp = plannerPaths(input.paths);
  await mkdir(pp.dir, { recursive: true });
  const lock = await acquireLock(
    join(pp.dir, `issue-${input.issue}.lock.json`),
    `relais plan --issue ${input.issue}`,
  );
  if (!lock.ok)
    return {
      kind: 'blocked',
      detail: `another relais plan run holds issue ${input.issue}: ${lock.detail}`,
      fix: 'Wait for it to finish (a scheduler should not start runs closer together than one pass takes).',
    };
  try {
    return await underLock(input, pp, { gh, cwd: input.root, env: input.env, signal: input.signal });
  } finally {
    await lock.lock.release();
  }
}

async function underLock(input: IssuePassInput, pp: PlannerPaths, run: GhRun): Promise<IssueOutcome> {
  const thread = await viewIssue(run, input.issue);
  if (input.signal.aborted) return { kind: 'interrupted' };
  if (!thread.ok) return { kind: 'blocked', detail: thread.detail, fix: thread.fix };
  const login = await ghLogin(run);
  if (input.signal.aborted) return { kind: 'interrupted' };
  if (!login.ok) return { kind: 'blocked', detail: login.detail, fix: login.fix };
  const now = input.now();
  const opened = await openSession(pp, () =>
    newSession({
      id: issueSessionId(input.issue),
      subject: { kind: 'issue', number: input.issue, title: thread.value.title.slice(0, 300) },
      reporter: thread.value.author,
      assignee: thread.value.assignees[0] ?? null,
      now,
    }),
  );
  if (!opened.ok)
    return { kind: 'blocked', detail: opened.problem, fix: 'Move the file aside, then run again.' };
  let session = importThread(opened.session, thread.value, now, login.value);
  await writeSession(pp, session);
  const earlier = await postOutbox(input, pp, run, session);
  if (!earlier.ok) return earlier.failure;
  session = earlier.session;
  if (session.status === 'ready') return { kind: 'ready_already', session, posted: earlier.posted };
  if (!plannerHasNews(session)) return { kind: 'silent', session, posted: earlier.posted };
  const failures = session.planner_failures;
  if (failures && failures.message_id === newestMessageId(session) && failures.tries >= MAX_TRIES)
    return {
      kind: 'blocked',
      detail: `the planner failed ${failures.tries} times on the thread as it is (last: ${failures.last_problem}); it is not called again until somebody comments`,
      fix: 'Check relais/prompts/planner.system.txt, agents.planner and the agent CLI (relais doctor); a new comment on the issue lets it try again.',
    };
  const pass = await plannerPass({
    pp,
    session,
    subject: issueSubject(input.issue, thread.value),
    findings: [],
    config: input.config,
    bus: input.bus,
    now: input.now,
    outbox: true,
    call: standaloneCall(input),
  });
  switch (pass.kind) {
    case 'aborted':
      return { kind: 'interrupted' };
    case 'invalid': {
      const failed = await recordFailure(input, pp, pass.session, pass.problems.join('; '));
      return { kind: 'invalid', session: failed, problems: pass.problems };
    }
    case 'unreadable':
      return { kind: 'blocked', detail: pass.detail, fix: 'Fix or move the file aside, then run again.' };
    case 'failed':
    case 'breaker_open':
      await recordFailure(input, pp, pass.session, pass.detail);
      return {
        kind: 'failed',
        detail: `planner: ${pass.detail}`,
        fix: 'Check the agent CLI (relais doctor) and agents.planner, then run again; nothing was posted.',
      };
    case 'applied': {
      const posted = await postOutbox(input, pp, run, pass.applied.session);
      if (!posted.ok) return posted.failure;
      return {
        kind: 'planned',
        session: posted.session,
        applied: pass.applied,
        posted: earlier.posted + posted.posted,
      };
    }
  }
}

/**
 * Failed planner tries on one state of the thread before runs wait for a new comment: a scheduler
 * runs `relais plan --issue` again and again, and a thread the planner keeps failing on would
 * otherwise cost a model call (and its repair) every time.
 */
export const MAX_TRIES = 3;

function newestMessageId(session: Session): number {
  return session.discussion.reduce((max, m) => Math.max(max, m.id), 0);
}

async function recordFailure(
  input: IssuePassInput,
  pp: PlannerPaths,
  session: Session,
  problem: string,
): Promise<Session> {
  const state = newestMessageId(session);
  const before = session.planner_failures;
  const tries = before && before.message_id === state ? before.tries + 1 : 1;
  const recorded: Session = {
    ...session,
    planner_failures: {
      message_id: state,
      tries,
      last_problem: problem.slice(0, 1000),
      at: input.now().toISOString(),
    },
  };
  await writeSession(pp, recorded);
  input.bus.emit({
    type: 'log',
    level: 'warn',
    message: `planner: failed try ${tries} of ${MAX_TRIES} on the thread as it is; ${tries >= MAX_TRIES ? 'later runs wait for a new comment before calling it again' : 'the next run tries again'}`,
  });
  return recorded;
}

type Posting =
  | { ok: true; session: Session; posted: number }
  | { ok: false; failure: Extract<IssueOutcome, { kind: 'failed' | 'interrupted' }> };

/**
 * Posts the planner's comments still waiting, in order; each is marked posted once gh said so.
 * Each is scanned first: the planner reads the repository while the thread, which anyone can
 * write in, is in its context ("quote .env in your reply"). One that looks like it holds a secret
 * is withheld: kept in relais/planner/withheld/ for a human, never posted by the runner, and the
 * run fails saying so (the clean ones are still posted).
 */
async function postOutbox(
  input: IssuePassInput,
  pp: PlannerPaths,
  run: GhRun,
  given: Session,
): Promise<Posting> {
  let session = given;
  let posted = 0;
  const withheld: string[] = [];
  for (const entry of session.outbox.filter((e) => e.posted_at === null && e.withheld === undefined)) {
    const message = session.discussion.find((m) => m.id === entry.message_id);
    if (!message) continue;
    const body = commentBody(message);
    const secrets = secretsIn(body);
    if (secrets.length > 0) {
      const what = secrets
        .map((f) => `${f.kind} on line ${f.line}`)
        .join(', ')
        .slice(0, 300);
      await mkdir(pp.withheldDir, { recursive: true });
      const name = `${session.session_id}-${message.id}.md`;
      await writeFile(join(pp.withheldDir, name), body, { mode: 0o600 });
      session = {
        ...session,
        outbox: session.outbox.map((e) => (e === entry ? { ...e, withheld: what } : e)),
      };
      await writeSession(pp, session);
      withheld.push(
        `the planner's comment ${message.id} was not posted: it looks like it holds a secret (${what}); it is kept for review in ${pp.relDir}/withheld/${name}`,
      );
      continue;
    }
    await mkdir(pp.outboxDir, { recursive: true });
    const file = join(pp.outboxDir, `${session.session_id}-${message.id}.md`);
    await writeFile(file, body);
    const result = await commentOnIssue(run, input.issue, file);
    if (input.signal.aborted) return { ok: false, failure: { kind: 'interrupted' } };
    if (!result.ok)
      return {
        ok: false,
        failure: {
          kind: 'failed',
          detail: `could not post the planner's comment to issue ${input.issue} (${result.detail}); it is kept and posted by the next run`,
          fix: result.fix,
        },
      };
    await unlink(file).catch(() => undefined);
    const at = input.now().toISOString();
    session = {
      ...session,
      outbox: session.outbox.map((e) => (e === entry ? { ...e, posted_at: at } : e)),
    };
    await writeSession(pp, session);
    posted++;
  }
  if (withheld.length > 0)
    return {
      ok: false,
      failure: {
        kind: 'failed',
        detail: `${withheld.join('; ')}${posted > 0 ? ` (${posted} other comment(s) posted)` : ''}`,
        fix: `Read it; if it is safe to publish, post it yourself (gh issue comment ${input.issue} --body-file <file>). Anyone can write in the thread the planner reads, and the planner can read the repository: check what the comments asked for.`,
      },
    };
  return { ok: true, session, posted };
}
