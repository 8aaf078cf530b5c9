import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import micromatch from 'micromatch';
import * as z from 'zod';
import { SECRET_SHAPES } from '../judge/secrets.js';
import { verificationSandbox } from '../sandbox/sandbox.js';
import { planVerification } from '../verify/plan.js';
import { refusedWriteHint, runVerifications } from '../verify/run-verifications.js';
import { CONFIG_FILE_NAME } from '../workspace/paths.js';
import type { CycleContext } from './context.js';
import { diffText, dirtyPaths, headOf, numstat } from './git-ops.js';
import { describeGuarded, restoreGuarded, takeCycleGuards } from './guards.js';
import { checkIntegrity, describeUndone, type IntegrityReport, takeIntegrityGuard } from './integrity.js';

/**
 * verify_task Stage 1: seed 003's verify.sh as six deterministic checks, reported as JSON with
 * `pass`, `checks`, `failures` and the excerpt fields the LLM evidence bundle quotes. Tests and
 * lint are verification templates of relais.config.json (argv, taint-checked, never a shell);
 * the diff is everything from the task's base commit to HEAD.
 */

export const stage1Schema = z.strictObject({
  pass: z.boolean(),
  checks: z.strictObject({
    tests: z.boolean(),
    lint: z.boolean(),
    diff: z.boolean(),
    paths: z.boolean(),
    secrets: z.boolean(),
    git_clean: z.boolean(),
  }),
  failures: z.array(z.string()),
  test_summary: z.string(),
  test_count: z.int().min(0).nullable(),
  lint_exit: z.int().nullable(),
  diff_lines: z.int().min(0),
  diff_limit: z.int().min(0),
  secrets_found: z.int().min(0),
  git_clean: z.boolean(),
  changed_files: z.array(z.string()),
  head: z.string(),
  test_output: z.string(),
});
export type Stage1Report = z.infer<typeof stage1Schema>;

/** Patterns of credentials in added lines; the value itself is never repeated in a report. */
/**
 * The shared credential shapes (judge/secrets.ts), plus a quoted literal assigned to a
 * secret-named setting. In a diff of code only a quoted value counts: `password = read()` is code.
 */
const SECRET_PATTERNS: ReadonlyArray<readonly [string, RegExp]> = [
  ...SECRET_SHAPES,
  ['assigned secret', /\b(?:api[_-]?key|secret|passw(?:or)?d|token)\b\s*[:=]\s*["'][^"'\s]{8,}["']/i],
];

export interface Stage1Input {
  readonly base: string;
  readonly estimatedDiff: number;
  /** Where the runs' output goes: `<logStem>.tests.log`, `<logStem>.lint.log` (relais/cycle/verify/). */
  readonly logStem: string;
  /** The task has DET: criteria, which stage 1 alone passes: then tests must really run. */
  readonly needsTests: boolean;
  /** Where the checks may write: the task's scope (task-scope.ts), plus `sandbox.verification_writable`. */
  readonly writableGlobs: readonly string[];
}

/**
 * The report, or nothing when the run was interrupted (an interrupt judges nothing).
 * `configProblem`: tests or lint could not run as configured, which is no fault of the task's.
 */
export type Stage1Run =
  | {
      readonly aborted: false;
      readonly damaged?: undefined;
      readonly report: Stage1Report;
      readonly configProblem: string | null;
    }
  | { readonly aborted: true }
  /** The checks damaged existing git objects: nothing about this repository can be judged now. */
  | { readonly aborted: false; readonly damaged: string[] };

const NO_TESTS =
  'no test command: cycle.verify.tests is empty and relais.config.json has no parameter-free verification template, so a DET: criterion cannot pass; list the template ids that run the tests in cycle.verify.tests';

/**
 * What stage 1 runs as the tests: `cycle.verify.tests`, or when it is empty every parameter-free
 * verification template of the config that is not a lint one (as the workflow's project checks).
 */
export function testTemplateIds(ctx: Pick<CycleContext, 'policy' | 'config'>): string[] {
  if (ctx.policy.verify.tests.length > 0) return [...ctx.policy.verify.tests];
  const lint = new Set(ctx.policy.verify.lint);
  return ctx.config.verification.templates
    .filter((t) => Object.keys(t.params).length === 0 && !lint.has(t.id))
    .map((t) => t.id);
}

export async function runStage1(ctx: CycleContext, input: Stage1Input): Promise<Stage1Run> {
  const failures: string[] = [];
  const head = await headOf(ctx.git);
  const logs = { tests: `${input.logStem}.tests.log`, lint: `${input.logStem}.lint.log` };
  await keepOnlyNewLogs(dirname(input.logStem));
  for (const log of Object.values(logs)) await writeFile(log, '');
  // The project's own commands run here: they may not touch what the runner reads back (the plan,
  // STATE.json), relais.config.json, or git's control files; anything they change is restored.
  const guards = await takeCycleGuards(ctx, Object.values(logs));
  const integrityGuard = await takeIntegrityGuard(ctx, { branchMayMove: false, stamps: true });
  const testIds = testTemplateIds(ctx);
  const tests =
    testIds.length === 0 && input.needsTests
      ? templateRun({ ok: false, configProblem: true, detail: NO_TESTS, summary: 'not run' })
      : await runTemplates(ctx, testIds, logs.tests, input.writableGlobs);
  const lint = tests.aborted
    ? tests
    : await runTemplates(ctx, ctx.policy.verify.lint, logs.lint, input.writableGlobs);
  const guarded = await restoreGuarded(ctx, guards);
  const integrity = await checkIntegrity(ctx, integrityGuard);
  if (integrity.damaged.length > 0) return { aborted: false, damaged: integrity.damaged };
  if (tests.aborted || lint.aborted) return { aborted: true };
  failures.push(...integrityFailures(integrity));
  if (!tests.ok) failures.push(`tests: ${tests.detail}`);
  if (!lint.ok) failures.push(`lint: ${lint.detail}`);

  const files = await numstat(ctx.git, input.base, head);
  const diffLines = files.reduce((sum, f) => sum + f.added + f.deleted, 0);
  const limit = Math.floor(ctx.policy.verify.diff_factor * input.estimatedDiff);
  const diffOk = diffLines <= limit;
  if (!diffOk)
    failures.push(
      `diff: ${diffLines} lines changed, more than ${limit} (${ctx.policy.verify.diff_factor}x ESTIMATED_DIFF ${input.estimatedDiff})`,
    );

  const changed = files.map((f) => f.path);
  // Besides the policy's globs, what the runner owns is always blocked: its workspace and its config.
  const blocked = changed.filter(
    (p) =>
      micromatch.isMatch(p, ctx.policy.verify.blocked_globs, { dot: true, nocase: true }) ||
      p === CONFIG_FILE_NAME ||
      p === ctx.config.workspace_dir ||
      p.startsWith(`${ctx.config.workspace_dir}/`),
  );
  for (const p of blocked) failures.push(`paths: ${p} is a blocked path`);
  if (guarded.changed.length > 0)
    failures.push(
      `paths: the test or lint run changed ${describeGuarded(guarded)} (runner-owned or git control files; restored)`,
    );

  const secrets = findSecrets(await diffText(ctx.git, input.base, head, [], 0));
  for (const s of secrets) failures.push(`secrets: ${s}`);

  const dirty = await dirtyPaths(ctx.git, ctx.config.workspace_dir);
  if (dirty.length > 0) failures.push(`git_clean: uncommitted files: ${dirty.slice(0, 10).join(', ')}`);

  const testCount = countTests(tests.output, ctx.policy.verify.test_count_regex);
  const checks = {
    tests: tests.ok,
    lint: lint.ok,
    diff: diffOk,
    paths: blocked.length === 0 && guarded.changed.length === 0 && describeUndone(integrity) === null,
    secrets: secrets.length === 0,
    git_clean: dirty.length === 0 && integrity.rewritten.length === 0,
  };
  const report = {
    pass: Object.values(checks).every(Boolean),
    checks,
    // A path can hold a credential too; what a human or a prompt reads never repeats one.
    failures: failures.map(maskSecrets),
    test_summary: tests.summary,
    test_count: testCount,
    lint_exit: lint.exitCode,
    diff_lines: diffLines,
    diff_limit: limit,
    secrets_found: secrets.length,
    git_clean: dirty.length === 0,
    changed_files: changed,
    head,
    test_output: tests.output.slice(-4000),
  };
  const configProblem = [tests, lint].flatMap((t) => (t.configProblem ? [t.detail] : [])).join('; ');
  return { aborted: false, report, configProblem: configProblem || null };
}

/**
 * Issue 14 around the checks: refs they moved and files git cannot judge (put back, removed), and
 * tracked files rewritten while they ran (the verdict is about the committed tree: the tests ran
 * on other bytes, even when the file was put back).
 */
function integrityFailures(integrity: IntegrityReport): string[] {
  const undone = describeUndone(integrity);
  return [
    ...(undone ? [`paths: the test or lint run changed ${undone}`] : []),
    ...(integrity.rewritten.length > 0
      ? [`git_clean: rewritten while the checks ran: ${integrity.rewritten.slice(0, 10).join(', ')}`]
      : []),
  ];
}

interface TemplateRun {
  readonly ok: boolean;
  readonly aborted: boolean;
  /** The templates could not be run as configured (none, unknown, a bad parameter). */
  readonly configProblem: boolean;
  readonly detail: string;
  readonly summary: string;
  readonly exitCode: number | null;
  readonly output: string;
}

function templateRun(run: Partial<TemplateRun> & Pick<TemplateRun, 'ok' | 'summary'>): TemplateRun {
  return { aborted: false, configProblem: false, detail: '', exitCode: null, output: '', ...run };
}

/**
 * Verification templates run as the tick engine runs them (verify/run-verifications.ts: argv, one
 * after another, each with its timeout, the first failure ends them, an interrupt stops them),
 * their output kept in `log`.
 */
async function runTemplates(
  ctx: CycleContext,
  ids: readonly string[],
  log: string,
  writableGlobs: readonly string[],
): Promise<TemplateRun> {
  if (ids.length === 0) return templateRun({ ok: true, summary: 'no command configured' });
  const plan = await planVerification({ fast: [...ids], slow: [] }, ctx.config.verification, ctx.root);
  if (!plan.ok)
    return templateRun({
      ok: false,
      configProblem: true,
      detail: plan.problems.join('; '),
      summary: 'not run',
    });
  const outcome = await runVerifications(plan.runs, {
    cwd: ctx.root,
    logPath: log,
    maxLogBytes: ctx.config.verification.max_log_bytes_per_run,
    bus: ctx.bus,
    signal: ctx.signal,
    env: ctx.env,
    sandbox: verificationSandbox(ctx.sandbox, writableGlobs),
  });
  const output = await readTail(log, 64 * 1024);
  const last = outcome.runs.at(-1);
  const ran = { exitCode: last ? last.exit_code : null, output };
  if (outcome.aborted || ctx.signal.aborted)
    return templateRun({ ...ran, ok: false, aborted: true, detail: 'interrupted', summary: 'interrupted' });
  if (outcome.failedPhase && last)
    return templateRun({
      ...ran,
      ok: false,
      detail: `${last.template_id} ${last.timed_out ? 'timed out' : `exited ${last.exit_code}`}${refusedWriteHint(outcome.refused)}`,
      summary: `${last.template_id} failed`,
    });
  return templateRun({
    ...ran,
    ok: true,
    summary: `${plan.runs.map((r) => r.templateId).join(', ')} passed`,
  });
}

/**
 * The last verification's logs are all that is kept (each up to max_log_bytes_per_run): the
 * workspace guard holds a copy of every file of relais/ while a run goes on.
 */
async function keepOnlyNewLogs(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const name of await readdir(dir))
    if (/\.(tests|lint)\.log$/.test(name)) await rm(join(dir, name), { force: true });
}

async function readTail(path: string, maxBytes: number): Promise<string> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.length > maxBytes ? text.slice(-maxBytes) : text;
}

/**
 * `file:line kind` for every added line that looks like a credential. File headers (`+++ b/path`)
 * are read only between `diff --git` and the first `@@` of that file: inside a hunk, a line
 * starting with `+++ ` is an added line whose content starts with `++ `, scanned like any other.
 * Nothing a pattern matched is ever repeated, not even in a file name.
 */
export function findSecrets(unifiedDiff: string): string[] {
  const found: string[] = [];
  let file = '';
  let inHeader = false;
  let line = 0;
  for (const text of unifiedDiff.split('\n')) {
    if (text.startsWith('diff --git ')) {
      inHeader = true;
      file = pathOfDiffLine(text) ?? '(unknown file)';
      continue;
    }
    if (inHeader) {
      const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)/.exec(text);
      if (hunk) {
        inHeader = false;
        line = Number(hunk[1]);
      } else if (text.startsWith('+++ ') && text !== '+++ /dev/null') {
        file = unquotePath(text.slice(4)).replace(/^b\//, '');
      }
      continue;
    }
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)/.exec(text);
    if (hunk) {
      line = Number(hunk[1]);
      continue;
    }
    if (text.startsWith(' ')) {
      line++;
      continue;
    }
    if (text.startsWith('+')) {
      const kind = secretKind(text);
      if (kind) found.push(`${maskSecrets(file)}:${line} looks like a ${kind}`);
      line++;
    }
  }
  return found;
}

function secretKind(text: string): string | null {
  return SECRET_PATTERNS.find(([, pattern]) => pattern.test(text))?.[0] ?? null;
}

/** Every credential-looking run of `text` cut to its first four characters and stars. */
export function maskSecrets(text: string): string {
  let out = text;
  for (const [, pattern] of SECRET_PATTERNS) {
    const global = new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`);
    out = out.replace(global, (m) => `${m.slice(0, 4)}${'*'.repeat(Math.min(8, Math.max(4, m.length - 4)))}`);
  }
  return out;
}

/** `diff --git a/p b/p`: the path when both sides are the same (always so with --no-renames). */
function pathOfDiffLine(text: string): string | null {
  const rest = text.slice('diff --git '.length);
  if (rest.startsWith('"')) return null;
  const half = (rest.length - 1) / 2;
  const a = rest.slice(0, half);
  const b = rest.slice(half + 1);
  return a.startsWith('a/') && b.startsWith('b/') && a.slice(2) === b.slice(2) ? b.slice(2) : null;
}

/** Git quotes unusual paths C-style ("b/a\tb"); enough of it to name the file. */
function unquotePath(text: string): string {
  if (!text.startsWith('"') || !text.endsWith('"')) return text;
  return text
    .slice(1, -1)
    .replace(/\\([\\"tn])/g, (_m, c: string) => (c === 't' ? '\t' : c === 'n' ? '\n' : c));
}

export function countTests(output: string, pattern: string): number | null {
  const regex = new RegExp(pattern, 'g');
  let last: string | null = null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are stripped before counting
  const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
  for (const match of plain.matchAll(regex)) last = match[1] ?? null;
  return last === null ? null : Number(last);
}
