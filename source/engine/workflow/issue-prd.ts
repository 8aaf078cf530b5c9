import { findRunnerTool } from '../agents/find-executable.js';
import { type GhRun, viewIssue } from '../planner/github.js';
import { handoffText } from '../planner/handoff.js';
import type { Session } from '../planner/schemas.js';
import { issueSessionId, plannerPaths, readLearnings, readSession } from '../planner/store.js';
import type { RelaisConfig } from '../protocol/config.js';
import type { Prd } from '../session/prd.js';
import type { WorkspacePaths } from '../workspace/paths.js';

/**
 * `ralphy start --issue <n>` (seed 004's handoff, "when a proceed-signal arrives, proceed to spec
 * generation handoff"): once `relais plan --issue <n>` has brought the issue's planning to "ready
 * for spec" (its session's status `ready`, with the planner's `ready_for_spec_generation`
 * handoff), the issue itself becomes the PRD: its title, its body as gh shows it now, the
 * planner's summary as the objective, the humans' words in the thread, and the gaps planning
 * closed (answers verbatim, assumptions as stated). Planning that is not ready is refused with
 * the command that moves it on; nothing is started.
 */

export type IssuePrd = { ok: true; prd: Prd } | { ok: false; detail: string; fix: string };

/** The thread is context for the spec-agent, not an archive: the newest words win when it is long. */
const MAX_THREAD_CHARS = 60_000;

export async function issuePrd(input: {
  readonly issue: number;
  readonly paths: WorkspacePaths;
  readonly config: RelaisConfig;
  readonly root: string;
  readonly env: NodeJS.ProcessEnv;
  readonly signal: AbortSignal;
}): Promise<IssuePrd> {
  const { issue } = input;
  const pp = plannerPaths(input.paths);
  const planAgain = `Run relais plan --issue ${issue} (again after each human reply on the issue) until it says "ready for the spec", then ralphy start --issue ${issue}.`;
  const read = await readSession(pp, issueSessionId(issue));
  if (read.kind === 'missing')
    return {
      ok: false,
      detail: `issue #${issue} has not been planned in this project (no ${pp.relDir}/sessions/${issueSessionId(issue)}.json)`,
      fix: planAgain,
    };
  if (read.kind === 'invalid')
    return {
      ok: false,
      detail: `${pp.relDir}/sessions/${issueSessionId(issue)}.json is unreadable (${read.reason})`,
      fix: `Move it aside and plan the issue again: ${planAgain}`,
    };
  const session = read.value;
  if (session.status !== 'ready' || session.handoff === null)
    return { ok: false, detail: notReady(issue, session), fix: planAgain };
  const gh = await findRunnerTool(input.config.pr.gh_command, input.env, input.root);
  if (!gh)
    return {
      ok: false,
      detail: `the GitHub CLI (${input.config.pr.gh_command}) is not installed or not on PATH: the workflow reads the issue and reports back on it through gh`,
      fix: 'Install it (https://cli.github.com) and run gh auth login, or set pr.gh_command in relais.config.json.',
    };
  const run: GhRun = { gh, cwd: input.root, env: input.env, signal: input.signal };
  const thread = await viewIssue(run, issue);
  if (!thread.ok) return thread;
  const learnings = await readLearnings(pp);
  const text = renderIssuePrd({
    issue,
    title: thread.value.title,
    body: thread.value.body,
    session,
    decisions: handoffText(session, learnings.ok ? learnings.file.learnings : []),
  });
  return { ok: true, prd: { title: thread.value.title.trim() || `Issue ${issue}`, text, issue } };
}

function notReady(issue: number, session: Session): string {
  const open = session.gaps.filter((g) => g.status === 'open').length;
  const asked = session.discussion.filter((m) => m.from === 'relay').at(-1)?.kind === 'proceed_gate';
  const where = asked
    ? 'the planner asked to proceed and waits for a reporter or assignee to say so'
    : `${open} question(s) are still open`;
  return `issue #${issue}'s planning is not ready for the spec yet: ${where}`;
}

export function renderIssuePrd(input: {
  issue: number;
  title: string;
  body: string;
  session: Session;
  decisions: string;
}): string {
  const { session } = input;
  const summary = session.handoff?.context_summary.trim() ?? '';
  const humans = session.discussion
    .filter((m) => m.from === 'human')
    .map((m) => `- @${m.author}${m.role && m.role !== 'other' ? ` (${m.role})` : ''}: ${m.text.trim()}`);
  let thread = humans.join('\n');
  if (thread.length > MAX_THREAD_CHARS)
    thread = `… (earlier comments left out)\n${thread.slice(-MAX_THREAD_CHARS)}`;
  return [
    `# ${input.title.trim() || `Issue ${input.issue}`}`,
    '',
    '## Objective',
    summary || input.title.trim(),
    '',
    `## The issue (GitHub issue #${input.issue}${session.reporter ? `, opened by @${session.reporter}` : ''})`,
    input.body.trim() || '(no description)',
    '',
    '## The thread (what the humans said while planning)',
    thread || '(no comments)',
    '',
    input.decisions,
    '',
  ].join('\n');
}
