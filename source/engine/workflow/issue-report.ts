import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findRunnerTool } from '../agents/find-executable.js';
import { secretsIn } from '../judge/secrets.js';
import { commentOnIssue } from '../planner/github.js';
import { RELAY_MARKER } from '../planner/thread.js';
import { remediationOfFailure, type WorkflowFile } from '../protocol/workflow.js';
import { writeFileAtomic } from '../workspace/atomic-write.js';
import type { WorkflowContext } from './context.js';
import { agentSpend } from './pr-body.js';
import { describeRuns } from './project-checks.js';

/**
 * The end of `ralphy start --issue <n>`: one comment on the issue with the pull request and a QA
 * summary made only of the runner's verdicts (issue 16 item 1: a task the runner did not verify
 * never reads as done, whatever an agent claimed), through `gh issue comment <n> --body-file F`
 * (argv only). The body is kept in the workspace first, so a failed post can be retried by hand;
 * one that looks like it holds a secret is not posted at all. It carries the planner's marker, so
 * a later `relais plan --issue` reads it as the runner's, never as a human's answer.
 */

export type IssueReport =
  | { kind: 'posted'; url: string }
  | { kind: 'not_posted'; detail: string; nextStep: string };

export async function reportOnIssue(ctx: WorkflowContext, issue: number): Promise<IssueReport> {
  const { paths, config, facts } = ctx.setup;
  const dir = join(paths.dir, 'issues');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `issue-${issue}-report.md`);
  const rel = `${paths.relDir}/issues/issue-${issue}-report.md`;
  const body = `${issueReportBody(ctx.workflow).trim()}\n\n${RELAY_MARKER}\n`;
  const by = `gh issue comment ${issue} --body-file ${rel}`;
  const secrets = secretsIn(body);
  if (secrets.length > 0) {
    await writeFile(file, body, { mode: 0o600 });
    const what = secrets.map((f) => `${f.kind} on line ${f.line}`).join(', ');
    return {
      kind: 'not_posted',
      detail: `the report for issue #${issue} looks like it holds a secret (${what.slice(0, 200)}), so it was not posted`,
      nextStep: `Review ${rel}, remove the secret, then post it: ${by}`,
    };
  }
  await writeFileAtomic(file, body);
  const gh = await findRunnerTool(config.pr.gh_command, ctx.options.env, facts.root);
  if (!gh)
    return {
      kind: 'not_posted',
      detail: `the GitHub CLI (${config.pr.gh_command}) is not on PATH`,
      nextStep: `Post the report yourself: ${by}`,
    };
  // A report is worth posting even after Ctrl-C stopped the run: it gets its own signal.
  const posted = await commentOnIssue(
    { gh, cwd: facts.root, env: ctx.options.env, signal: new AbortController().signal },
    issue,
    file,
  );
  if (!posted.ok)
    return {
      kind: 'not_posted',
      detail: `${posted.detail}`,
      nextStep: `${posted.fix} Then post the report: ${by}`,
    };
  return { kind: 'posted', url: posted.value };
}

/** What the runner knows, in the issue's words: the ending, the PR, and each task's verdict. */
export function issueReportBody(w: WorkflowFile): string {
  const verified = w.tasks.filter((t) => t.verdict === 'verified').length;
  const ending =
    w.state === 'COMPLETED'
      ? 'Ralphy finished the workflow for this issue.'
      : w.state === 'REJECTED'
        ? 'The specification for this issue was rejected at the first human gate; nothing was implemented.'
        : `The workflow for this issue stopped in ${w.failure_reason === null ? 'FAILED' : `FAILED (${w.failure_reason})`}: ${w.failure_detail ?? 'no detail'}`;
  const lines = [
    ending,
    '',
    w.pr_url ? `Pull request: ${w.pr_url}` : 'No pull request was opened.',
    '',
    `QA summary (the runner's verdicts, not the agents' claims): ${verified}/${w.tasks.length} task(s) verified by the runner.`,
    ...w.tasks.map(
      (t) =>
        `- [${t.verdict === 'verified' ? 'x' : ' '}] ${t.number}. ${t.title}: ${t.verdict === 'verified' ? 'verified' : t.verdict === 'rejected' ? 'not accepted' : 'not verified'}${t.verified ? ` (${t.verified.slice(0, 200)})` : ''}`,
    ),
    w.verification
      ? `Checks the runner ran on ${w.verification.commit.slice(0, 12)}: ${describeRuns(w.verification.runs)}.`
      : 'The runner ran no project checks on the final tree.',
    ...(w.state === 'FAILED' && w.failure_reason
      ? ['', `Next: ${remediationOfFailure(w.failure_reason)}`]
      : []),
    '',
    `${w.engine} engine · agent spend ${agentSpend(w)} · branch ${w.feature_branch ?? '(none)'}`,
  ];
  return lines.join('\n');
}
