import * as z from 'zod';
import { describeZodError } from '../protocol/model-json.js';
import { describeEnd, type ProcessResult, runProcess } from '../supervise/run-process.js';
import { runnerToolEnv } from '../workspace/tool-path.js';

/**
 * The issue thread through the GitHub CLI, argv only: `gh issue view <n> --json
 * title,body,author,assignees,comments` to read it, `gh issue comment <n> --body-file F` to
 * answer, `gh api user --jq .login` for the account that answers. Every failure comes back with what went wrong and how to fix it; nothing throws.
 */

export type Gh<T> = { ok: true; value: T } | { ok: false; detail: string; fix: string };

export interface GhComment {
  /** GitHub's id for it (or its URL, or when and by whom, for a gh that gives no id). */
  readonly id: string;
  readonly author: string;
  readonly body: string;
}

export interface GhIssue {
  readonly title: string;
  readonly body: string;
  readonly author: string | null;
  readonly assignees: string[];
  readonly comments: GhComment[];
}

/** gh's JSON has more fields than these; unknown ones are ignored, missing optional ones tolerated. */
const login = z.object({ login: z.string() }).nullable().optional();
const issueJson = z.object({
  title: z.string(),
  body: z.string().nullable().optional(),
  author: login,
  assignees: z
    .array(z.object({ login: z.string() }))
    .nullable()
    .optional(),
  comments: z
    .array(
      z.object({
        id: z.string().optional(),
        url: z.string().optional(),
        author: login,
        body: z.string().nullable().optional(),
        createdAt: z.string().optional(),
      }),
    )
    .nullable()
    .optional(),
});

const GH_TIMEOUT_MS = 60_000;
const MAX_THREAD_BYTES = 8 * 1024 * 1024;

export interface GhRun {
  readonly gh: string;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly signal: AbortSignal;
}

export async function viewIssue(run: GhRun, issue: number): Promise<Gh<GhIssue>> {
  const args = ['issue', 'view', String(issue), '--json', 'title,body,author,assignees,comments'];
  const result = await gh(run, args);
  if (!succeeded(result)) return failure(result, `gh issue view ${issue}`);
  if (result.stdoutBytes > MAX_THREAD_BYTES)
    return {
      ok: false,
      detail: `issue ${issue}'s thread is larger than ${MAX_THREAD_BYTES / 1024 / 1024} MB`,
      fix: 'Plan it from a shorter issue (or a PRD.md with relais plan).',
    };
  let value: unknown;
  try {
    value = JSON.parse(result.stdoutTail);
  } catch (error) {
    return {
      ok: false,
      detail: `gh issue view ${issue} printed something that is not JSON (${(error as Error).message})`,
      fix: 'Check that pr.gh_command is the GitHub CLI (gh --version), then try again.',
    };
  }
  const parsed = issueJson.safeParse(value);
  if (!parsed.success)
    return {
      ok: false,
      detail: `gh issue view ${issue} gave JSON of an unexpected shape: ${describeZodError(parsed.error)}`,
      fix: 'Update the GitHub CLI (gh), then try again.',
    };
  const data = parsed.data;
  return {
    ok: true,
    value: {
      title: data.title,
      body: data.body ?? '',
      author: data.author?.login ?? null,
      assignees: (data.assignees ?? []).map((a) => a.login),
      comments: (data.comments ?? []).map((c, i) => ({
        id: c.id ?? c.url ?? `${c.createdAt ?? i}-${c.author?.login ?? 'ghost'}`,
        author: c.author?.login ?? 'ghost',
        body: c.body ?? '',
      })),
    },
  };
}

export async function commentOnIssue(run: GhRun, issue: number, bodyFile: string): Promise<Gh<string>> {
  const result = await gh(run, ['issue', 'comment', String(issue), '--body-file', bodyFile]);
  if (!succeeded(result)) return failure(result, `gh issue comment ${issue}`);
  return { ok: true, value: result.stdoutTail.trim() };
}

/** The account gh is logged in as, which posts the planner's comments (asked once per run). */
export async function ghLogin(run: GhRun): Promise<Gh<string>> {
  const result = await gh(run, ['api', 'user', '--jq', '.login']);
  if (!succeeded(result)) return failure(result, 'gh api user');
  const login = result.stdoutTail.trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9-]*(?:\[bot\])?$/.test(login) || login.length > 100)
    return {
      ok: false,
      detail: `gh api user did not print a login (${JSON.stringify(login.slice(0, 80))})`,
      fix: 'Check that pr.gh_command is the GitHub CLI and that gh auth status shows an account.',
    };
  return { ok: true, value: login };
}

function gh(run: GhRun, args: string[]): Promise<ProcessResult> {
  return runProcess({
    cmd: run.gh,
    args,
    cwd: run.cwd,
    // gh starts git: never one found in a folder of the repository (workspace/tool-path.ts).
    env: runnerToolEnv(run.env, run.cwd),
    timeoutMs: GH_TIMEOUT_MS,
    signal: run.signal,
    keepTailBytes: MAX_THREAD_BYTES,
  });
}

function succeeded(result: ProcessResult): boolean {
  return result.exitCode === 0 && !result.timedOut && !result.aborted && result.spawnError === null;
}

const AUTH = /gh auth login|not logged in|authenticat|HTTP 401|bad credentials|GH_TOKEN|GITHUB_TOKEN/i;

function failure(result: ProcessResult, what: string): { ok: false; detail: string; fix: string } {
  const said = result.stderrTail.trim().split('\n').slice(-3).join(' ').slice(0, 500);
  if (result.spawnError === 'ENOENT')
    return {
      ok: false,
      detail: 'the GitHub CLI (gh) was not found',
      fix: 'Install it (https://cli.github.com) and run gh auth login, or set pr.gh_command in relais.config.json.',
    };
  if (AUTH.test(said))
    return {
      ok: false,
      detail: `gh is not logged in to GitHub (${what}: ${said})`,
      fix: 'Run gh auth login (for a scheduler or CI, set GH_TOKEN to a token that may read and comment on issues).',
    };
  return {
    ok: false,
    detail: `${what} ${describeEnd(result)}${said ? `: ${said}` : ''}`,
    fix: 'Check the issue number, and that this repository has a GitHub remote gh can reach (gh repo view).',
  };
}
