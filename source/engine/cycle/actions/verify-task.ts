import { basename, join } from 'node:path';
import { writeJsonAtomic } from '../../workspace/atomic-write.js';
import { askForBlock } from '../agent-call.js';
import { type Criterion, type PlannedTask, parseVerdictBlock } from '../blocks.js';
import { runStage1, type Stage1Report, stage1Schema } from '../checks.js';
import type { ActionResult, CycleContext } from '../context.js';
import { diffStat, diffText } from '../git-ops.js';
import { notify } from '../notifications.js';
import { verifierPrompt } from '../prompts.js';
import type { CycleState } from '../state.js';
import { cycleTaskGlobs } from '../task-scope.js';
import { readPlan } from '../track-docs.js';
import { type Combined, type CriterionVerdict, combineVerdict, type Stage1 } from '../verdict.js';
import { failResult, okResult, pauseResult } from './common.js';
import { afterAttempt } from './progress.js';

/**
 * Seed 003 verify_task: stage 1 the six deterministic checks (JSON, kept in relais/cycle/verify/);
 * stage 2, only when they pass, one verifier per `LLM:` criterion with its own evidence bundle, in
 * parallel (DET: criteria are auto-passed by stage 1); stage 3 the combined-verdict table.
 */
export async function verifyTask(ctx: CycleContext, state: CycleState): Promise<ActionResult> {
  const taskId = state.task.id as string;
  const read = await readPlan(ctx, state.track.id as string);
  if (!read.ok) return pauseResult(ctx, state, 'CYCLE_REPLAN_REQUIRED', read.detail);
  const planned = read.plan.tasks.find((t) => t.taskId === taskId);
  if (!planned)
    return pauseResult(ctx, state, 'CYCLE_STATE_INCONSISTENT', `task ${taskId} is not in the plan`);
  // The files generate_task bound (adapted on drift), not the plan's: that is the planned scope now.
  const task: PlannedTask = { ...planned, files: state.task.files ?? planned.files };
  const base = state.task.base_commit as string;
  const stem = join(ctx.paths.verifyDir, `${taskId}-${state.loop.iteration + 1}`);
  const needsTests = task.acceptance.some((a) => a.kind === 'DET');
  const run = await runStage1(ctx, {
    base,
    estimatedDiff: task.estimatedDiff,
    logStem: stem,
    needsTests,
    writableGlobs: cycleTaskGlobs(ctx.config, task.files),
  });
  if (run.aborted) return interrupted(state);
  if (run.damaged)
    return pauseResult(
      ctx,
      state,
      'CYCLE_GIT_OBJECT_CORRUPTED',
      `the checks of ${taskId} damaged existing git objects: ${run.damaged.slice(0, 5).join('; ')}`,
    );
  const { report } = run;
  // A human's verdict is used by this verification or never (it was given for one commit).
  const human = state.task.human_verdict;
  const settled: CycleState = { ...state, task: { ...state.task, human_verdict: null } };
  const checked = stage1Schema.safeParse(report);
  const stage1: Stage1 = checked.success
    ? { kind: 'ok', pass: report.pass }
    : { kind: 'invalid', reason: checked.error.message };
  if (checked.success) await writeJsonAtomic(`${stem}.json`, stage1Schema, report);
  const llm = task.acceptance.filter((a) => a.kind === 'LLM');
  const passed = stage1.kind === 'ok' && stage1.pass;
  const byHuman = passed && human?.commit === report.head ? humanVerdicts(llm, human) : null;
  const judged = passed ? (byHuman ?? (await stage2(ctx, task, llm, report, base))) : null;
  if (ctx.signal.aborted) return interrupted(state);
  // A verifier that could not run (CLI missing, timeout, interrupt) judged nothing: verify again next cycle.
  if (judged && !judged.ok)
    return failResult(settled, `verifier for ${judged.id}: ${judged.detail}`, 'CYCLE_AGENT_FAILED');
  const verdicts = judged?.ok ? judged.verdicts : null;
  const result = combineVerdict(stage1, verdicts);
  ctx.bus.emit({
    type: 'cycle.verdict',
    task_id: taskId,
    checks: report.checks,
    failures: report.failures,
    criteria: criteriaLines(task, verdicts, report.pass),
    result,
  });
  // Tests or lint that cannot run as configured are no fault of the task: a human fixes the config.
  if (run.configProblem && !report.pass)
    return pauseResult(ctx, settled, 'CYCLE_VERIFY_UNCONFIGURED', `stage 1: ${run.configProblem}`);
  return apply(ctx, settled, result, report, verdicts ?? [], base);
}

/** `relais cycle --resume --verdict`: the human's answer for every LLM: criterion of the task. */
function humanVerdicts(
  criteria: Criterion[],
  human: NonNullable<CycleState['task']['human_verdict']>,
): { ok: true; verdicts: CriterionVerdict[] } {
  return {
    ok: true,
    verdicts: criteria.map((c) => ({
      id: c.id,
      kind: 'answer',
      answer: human.answer,
      reason: `human: ${human.reason}`,
    })),
  };
}

/** An interrupt is not an attempt (as in implement_task): nothing is counted, verified again next cycle. */
function interrupted(state: CycleState): ActionResult {
  return failResult(state, 'verification interrupted: the run was stopped', 'CYCLE_AGENT_FAILED');
}

async function apply(
  ctx: CycleContext,
  state: CycleState,
  result: Combined,
  report: Stage1Report,
  verdicts: CriterionVerdict[],
  base: string,
): Promise<ActionResult> {
  const loop = afterAttempt(state, base, report.head, report.test_count);
  switch (result) {
    case 'PASS':
      return okResult(
        {
          ...state,
          loop: { ...loop, stuck_count: 0 },
          task: { ...state.task, sub_step: 'reflect', retry_count: 0, failure_context: [] },
          last_cycle: {
            commit_hash: report.head,
            test_count: report.test_count,
            diff_lines: report.diff_lines,
          },
        },
        `verification PASS (${report.diff_lines} diff lines, tests: ${report.test_summary})`,
      );
    case 'FAIL': {
      const failures = [
        ...report.failures,
        ...verdicts.flatMap((v) =>
          v.kind === 'answer' && v.answer === 'NO' ? [`${v.id}: ${v.reason}`] : [],
        ),
      ];
      return failResult(
        {
          ...state,
          loop,
          task: {
            ...state.task,
            sub_step: 'implement',
            retry_count: state.task.retry_count + 1,
            failure_context: failures.slice(0, 20),
          },
        },
        `verification FAIL: ${failures.join('; ')}`,
        'CYCLE_VERIFY_FAILED',
      );
    }
    case 'PAUSE':
    case 'NEEDS_HUMAN': {
      const reasons = verdicts.map((v) =>
        v.kind === 'answer' ? `${v.id}: ${v.answer} ${v.reason}` : `${v.id}: unparsable (${v.error})`,
      );
      const code = result === 'PAUSE' ? 'CYCLE_VERIFY_NEEDS_HUMAN' : 'CYCLE_VERIFIER_OUTPUT_INVALID';
      await notify(
        ctx,
        state,
        'escalation',
        { title: `Verification of ${state.task.id} needs a human`, lines: reasons },
        'pause',
      );
      return pauseResult(ctx, { ...state, loop }, code, reasons.join('; '));
    }
    case 'CYCLE_FAIL':
      return failResult(
        state,
        'the deterministic verification report is invalid (runner bug)',
        'CYCLE_INTERNAL',
      );
  }
}

function criteriaLines(task: PlannedTask, verdicts: CriterionVerdict[] | null, pass: boolean) {
  return task.acceptance.map((a) => {
    if (a.kind === 'DET')
      return { id: a.id, kind: a.kind, answer: pass ? 'YES' : 'NO', reason: 'stage 1 checks' };
    const v = verdicts?.find((x) => x.id === a.id);
    if (!v) return { id: a.id, kind: a.kind, answer: 'not run', reason: '' };
    return v.kind === 'answer'
      ? { id: a.id, kind: a.kind, answer: v.answer, reason: v.reason }
      : { id: a.id, kind: a.kind, answer: 'UNPARSABLE', reason: v.error };
  });
}

async function stage2(
  ctx: CycleContext,
  task: PlannedTask,
  criteria: Criterion[],
  report: Stage1Report,
  base: string,
): Promise<{ ok: true; verdicts: CriterionVerdict[] } | { ok: false; id: string; detail: string }> {
  const evidence = await evidenceFor(ctx, task, report, base);
  const verdicts: CriterionVerdict[] = new Array(criteria.length);
  let agentFailure: { id: string; detail: string } | null = null;
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < criteria.length; i = next++) {
      const criterion = criteria[i] as Criterion;
      const bundle = await evidence(criterion);
      const answer = await askForBlock(ctx, 'verifier', verifierPrompt(ctx.nonce, criterion, bundle), (t) =>
        parseVerdictBlock(t, ctx.nonce, criterion.id),
      );
      if (!answer.ok && answer.kind === 'agent') agentFailure ??= { id: criterion.id, detail: answer.detail };
      verdicts[i] = answer.ok
        ? { id: criterion.id, kind: 'answer', answer: answer.value.answer, reason: answer.value.reason }
        : { id: criterion.id, kind: 'unparsable', error: answer.detail };
    }
  };
  const workers = Math.min(ctx.policy.verify.max_parallel_verifiers, criteria.length);
  await Promise.all(Array.from({ length: workers }, worker));
  const failed = agentFailure as { id: string; detail: string } | null;
  return failed ? { ok: false, ...failed } : { ok: true, verdicts };
}

const MAX_HUNKS = 24_000;

/**
 * Seed 003 Stage 2 per-criterion evidence bundle (the criterion text is added by the prompt): the
 * verify.sh excerpt, `git show --stat` of every changed file, the hunks of files outside the plan
 * with the out-of-scope instruction, the diff hunks of the files relevant to this criterion (those
 * it names; the planned files when it names none), and the test output.
 */
async function evidenceFor(
  ctx: CycleContext,
  task: PlannedTask,
  report: Stage1Report,
  base: string,
): Promise<(criterion: Criterion) => Promise<string>> {
  const planned = new Set(task.files.map((f) => f.path));
  const outside = report.changed_files.filter((p) => !planned.has(p));
  const inside = report.changed_files.filter((p) => planned.has(p));
  const excerpt = {
    pass: report.pass,
    test_summary: report.test_summary,
    lint_exit: report.lint_exit,
    diff_lines: report.diff_lines,
    secrets_found: report.secrets_found,
    git_clean: report.git_clean,
  };
  const head = [
    '## verify.sh JSON excerpt',
    JSON.stringify(excerpt),
    '',
    '## git show --stat (all changed files)',
    (await diffStat(ctx.git, base, report.head)) || '(no changes)',
  ];
  if (outside.length > 0) {
    head.push(
      '',
      '## Files outside the planned scope',
      "Files outside the planned scope were modified. If any out-of-scope change is non-trivial (not just formatting/imports), answer NO with reason 'out-of-scope modification: {filename}'.",
      cap(await diffText(ctx.git, base, report.head, outside)),
    );
  }
  const plannedDiff =
    inside.length > 0
      ? ['', '## Diff of the planned files', cap(await diffText(ctx.git, base, report.head, inside))]
      : [];
  const tail = report.test_output.trim()
    ? ['', '## Test output (tail)', report.test_output.slice(-3000)]
    : [];
  return async (criterion) => {
    const named = filesNamedBy(criterion.text, report.changed_files);
    const relevant =
      named.length > 0
        ? [
            '',
            '## Diff hunks for files relevant to this criterion',
            cap(await diffText(ctx.git, base, report.head, named)),
          ]
        : plannedDiff;
    return [...head, ...relevant, ...tail].join('\n');
  };
}

/**
 * Changed files a criterion names: by path or file name; failing that, by the name's stem as a
 * whole word ("the farewell module").
 */
export function filesNamedBy(text: string, files: readonly string[]): string[] {
  const lower = text.toLowerCase();
  const asWord = (word: string) =>
    new RegExp(`(^|[^a-z0-9_])${word.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')}($|[^a-z0-9_])`).test(lower);
  const named = files.filter((path) => {
    const p = path.toLowerCase();
    return lower.includes(p) || asWord(basename(p));
  });
  if (named.length > 0) return named;
  return files.filter((path) => {
    const stem = basename(path.toLowerCase()).split('.')[0] ?? '';
    return stem.length >= 4 && asWord(stem);
  });
}

function cap(text: string): string {
  return text.length > MAX_HUNKS
    ? `${text.slice(0, MAX_HUNKS)}\n[... diff cut at ${MAX_HUNKS} characters]`
    : text;
}
