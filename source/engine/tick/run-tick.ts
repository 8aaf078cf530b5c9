import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { AgentOutcome, AgentRunner } from '../agents/agent-run.js';
import { claudeRunner } from '../agents/claude-code/run-claude.js';
import type { EngineBus, TickPhase } from '../events.js';
import { commitJudgedTree } from '../judge/commit.js';
import { rollback } from '../judge/rollback.js';
import { type Code, remediationOf, type Verdict, verdictOf } from '../protocol/codes.js';
import type { Report } from '../protocol/report.js';
import type { Ledger, WorkspaceState } from '../protocol/state.js';
import { emptyLedger } from '../protocol/state.js';
import { type Task, taskSchema } from '../protocol/task.js';
import { planVerification } from '../verify/plan.js';
import { runVerifications } from '../verify/run-verifications.js';
import { writeJsonAtomic } from '../workspace/atomic-write.js';
import { ensureRunHistoryDir } from '../workspace/history.js';
import { applyDelta, budgetWarnings, ensureMilestone } from '../workspace/ledger.js';
import { acquireLock } from '../workspace/lock.js';
import { oneLine } from '../workspace/printable.js';
import { writeState } from '../workspace/state-store.js';
import { build } from './build.js';
import {
  type BuildGuards,
  effectiveScopeFor,
  judgeTick,
  takeBuildGuards,
  writeDiffPatch,
} from './judge-phase.js';
import { orchestrate } from './orchestrate.js';
import { type Block, checkStartConditions, loadSetup, type TickSetup } from './preflight.js';
import { builderValues, fillTemplate, orchestratorValues, readPrompt } from './prompts.js';
import { buildReport, makeRunId, newTickRecord, type TickRecord } from './tick-record.js';
import {
  clearBlockedFile,
  writeBlockedFile,
  writeHistorySnapshot,
  writeReportFiles,
  writeWriteFailure,
} from './write-outputs.js';

/**
 * One judged tick (seed 000 §7): LOCK → PREFLIGHT → ORCHESTRATE → BUILD → JUDGE → VERIFY →
 * REPORT → END. Every decision is a row of Appendix A, taken in priority order; the first STOP or
 * BLOCKED wins and the tick goes straight to rollback (when the builder ran) and REPORT.
 */

export interface TickOptions {
  readonly root: string;
  readonly bus: EngineBus;
  /** Aborted on SIGINT/SIGTERM: children are killed, the tick rolls back and reports. */
  readonly signal: AbortSignal;
  readonly env: NodeJS.ProcessEnv;
  readonly command?: string;
  readonly now?: () => Date;
  /** The agent adapter; Claude Code unless a test or another provider says otherwise. */
  readonly agentRunner?: (setup: TickSetup) => AgentRunner;
}

export interface TickResult {
  readonly verdict: Verdict;
  readonly code: Code;
  readonly detail: string | null;
  readonly report: Report | null;
  /** True when the tick ended because of the abort signal (the CLI exits 130). */
  readonly interrupted: boolean;
}

export async function runTick(options: TickOptions): Promise<TickResult> {
  const now = options.now ?? (() => new Date());
  const record = newTickRecord(makeRunId(now(), randomBytes(3).toString('hex')), now());
  const { bus } = options;
  const phase = (p: TickPhase) => bus.emit({ type: 'phase.changed', phase: p });
  bus.emit({
    type: 'run.started',
    run_id: record.runId,
    command: options.command ?? 'run',
    project: options.root,
  });

  phase('LOCK');
  const loaded = await loadSetup(options.root, options.env);
  if (!loaded.ok) return finishUnlocked(record, loaded.block, bus);
  const setup = loaded.setup;
  record.baseCommit = setup.facts.head;
  record.headCommit = setup.facts.head;
  const lock = await acquireLock(setup.paths.lock, `relais ${options.command ?? 'run'}`);
  // A1 row 3. Without the lock nothing is written: the holder's files are not ours to touch.
  if (!lock.ok) return finishUnlocked(record, { code: 'BLOCKED_LOCK_HELD', detail: lock.detail }, bus);
  if (lock.reclaimed)
    bus.emit({
      type: 'log',
      level: 'warn',
      message: `reclaimed a stale lock left by pid ${lock.reclaimed.pid}`,
    });

  try {
    return await lockedTick(setup, record, options, now);
  } finally {
    await lock.lock.release();
  }
}

async function lockedTick(
  setup: TickSetup,
  record: TickRecord,
  options: TickOptions,
  now: () => Date,
): Promise<TickResult> {
  const { bus } = options;
  const phase = (p: TickPhase) => bus.emit({ type: 'phase.changed', phase: p });

  phase('PREFLIGHT');
  const start = await checkStartConditions(setup, true, options.env);
  if (!start.ok) return finishBlocked(setup, record, start.block, start.state, options, now);
  if (start.removedTmp.length > 0)
    bus.emit({
      type: 'log',
      level: 'info',
      message: `removed ${start.removedTmp.length} stale .tmp file(s)`,
    });

  const ledger = new TickLedger(setup, start.state, now);
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), setup.config.runner.max_tick_seconds * 1000);
  timer.unref();
  const deadlineAt = Date.now() + setup.config.runner.max_tick_seconds * 1000;
  const signal = AbortSignal.any([options.signal, deadline.signal]);
  const interruption = () =>
    deadline.signal.aborted
      ? `tick exceeded runner.max_tick_seconds (${setup.config.runner.max_tick_seconds}s)`
      : options.signal.aborted
        ? 'interrupted by signal'
        : null;
  const runner =
    options.agentRunner?.(setup) ??
    claudeRunner({
      command: start.agentCommand,
      extraEnv: setup.config.claude_code_cli.extra_env,
      env: options.env,
    });

  let guards: BuildGuards | null = null;
  try {
    // ORCHESTRATE (A2)
    phase('ORCHESTRATE');
    await ledger.add({ ticks: 1 });
    // Every tick that may spend gets a history snapshot, even when the orchestrator fails.
    record.historyDir = setup.config.history.enabled
      ? await ensureRunHistoryDir(setup.paths, record.runId)
      : null;
    record.historyPointer = record.historyDir ? relativeToRoot(setup, record.historyDir) : null;
    const historyDir = record.historyDir;
    const task = await proposeTask(setup, record, ledger, runner, options, signal, deadlineAt, interruption);
    if (task === null) return await finishTick(setup, record, ledger.state, options, now);

    // BUILD (A3): exactly one call.
    phase('BUILD');
    guards = await takeBuildGuards(setup, options.env);
    const scopeValues = builderValues(task, effectiveScopeFor(setup, task));
    const built = await build({
      config: setup.config,
      task,
      runner,
      bus,
      systemPrompt: await readPrompt(setup.paths, 'builder.system.txt'),
      userPrompt: fillTemplate(await readPrompt(setup.paths, 'builder.user.txt'), scopeValues),
      cwd: setup.facts.root,
      signal,
      timeoutMs: Math.max(1, deadlineAt - Date.now()),
    });
    record.builder = { calls: 1, costUsd: built.agent.costUsd, outcome: built };

    // JUDGE (A4) from git reality; protected files are restored before any git command.
    phase('JUDGE');
    record.judge = await judgeTick(setup, guards, task);
    record.notes.push(...record.judge.notes);
    await ledger.add({ builder_calls: 1, estimated_cost_usd: built.agent.costUsd });
    if (historyDir && setup.config.history.include_diff_patch) {
      const patch = join(historyDir, 'diff.patch');
      if (await writeDiffPatch(setup.git, setup.facts.head, record.judge.touched, patch))
        record.diffPatchPath = relativeToRoot(setup, patch);
    }
    bus.emit({
      type: 'judge.finished',
      code: record.judge.verdict.code,
      blast_radius: record.judge.blast,
      blast_radius_line: record.judge.blastLine,
      violations: record.judge.verdict.violations.slice(0, 50),
      touched_paths: record.judge.touched.files.slice(0, 200).map((f) => f.path),
    });

    const stop = builderOrJudgeStop(setup, record, built, interruption());
    if (stop) {
      record.code = stop.code;
      record.detail = stop.detail;
    } else {
      // VERIFY (A5), only after scope and diff passed.
      phase('VERIFY');
      await verify(setup, record, ledger, task, options, signal, interruption);
    }

    if (verdictOf(record.code) === 'success') {
      if (task.task_kind === 'execute' && setup.config.runner.commit_on_success) {
        const message = commitMessage(task, record);
        const committed = await commitJudgedTree(setup.git, setup.facts, record.judge.touched.index, message);
        record.commit = committed.commit;
        record.notes.push(...committed.notes);
      }
    } else {
      await rollBack(setup, record, guards);
    }
    await record.judge.touched.index.dispose();
    return await finishTick(setup, record, ledger.state, options, now);
  } catch (error) {
    // Anything unexpected after BUILD started still ends in a rollback and a report (Appendix B).
    record.code = 'STOP_INTERRUPTED';
    record.detail = `${interruption() ?? 'runner error'}: ${(error as Error).message}`;
    if (guards) await rollBack(setup, record, guards);
    await record.judge?.touched.index.dispose();
    return await finishTick(setup, record, ledger.state, options, now);
  } finally {
    clearTimeout(timer);
  }
}

/** ORCHESTRATE: returns the task, or null after recording the STOP/BLOCKED outcome. */
async function proposeTask(
  setup: TickSetup,
  record: TickRecord,
  ledger: TickLedger,
  runner: AgentRunner,
  options: TickOptions,
  signal: AbortSignal,
  deadlineAt: number,
  interruption: () => string | null,
): Promise<Task | null> {
  const values = await orchestratorValues({
    config: setup.config,
    paths: setup.paths,
    git: setup.git,
    facts: setup.facts,
    state: ledger.state,
  });
  const outcome = await orchestrate({
    config: setup.config,
    runner,
    bus: options.bus,
    systemPrompt: await readPrompt(setup.paths, 'orchestrator.system.txt'),
    userPrompt: fillTemplate(await readPrompt(setup.paths, 'orchestrator.user.txt'), values),
    cwd: setup.facts.root,
    signal,
    timeoutMs: () => Math.max(1, deadlineAt - Date.now()),
    onCall: async (call: AgentOutcome) => {
      record.orchestrator.calls++;
      record.orchestrator.costUsd += call.costUsd;
      await ledger.add({ orchestrator_calls: 1, estimated_cost_usd: call.costUsd });
    },
  });
  if (outcome.kind === 'failed') {
    // A2 rows 1-2.
    record.code = 'STOP_INTERRUPTED';
    record.detail = `orchestrator: ${interruption() ?? outcome.failure}`;
    record.orchestrator.error = outcome.failure;
    return null;
  }
  if (outcome.kind === 'invalid') {
    // A2 rows 3-4: invalid after the one allowed retry.
    record.code = 'BLOCKED_ORCHESTRATOR_OUTPUT_INVALID';
    record.detail = `orchestrator output invalid after ${outcome.calls} attempt(s): ${outcome.reason}`;
    record.orchestrator.error = outcome.reason;
    return null;
  }
  record.task = outcome.task;
  await writeJsonAtomic(setup.paths.task, taskSchema, outcome.task);
  // Seed 001 PR3: the milestone is persisted as soon as the orchestrator named it.
  await ledger.enterMilestone(outcome.task.milestone_id);
  return outcome.task;
}

/** A3 rows 1-3, then A4: the first STOP that applies, or null to go on to VERIFY. */
function builderOrJudgeStop(
  setup: TickSetup,
  record: TickRecord,
  built: Awaited<ReturnType<typeof build>>,
  interrupted: string | null,
): { code: Code; detail: string } | null {
  if (interrupted) return { code: 'STOP_INTERRUPTED', detail: `builder: ${interrupted}` };
  if (built.failure) return { code: 'STOP_INTERRUPTED', detail: `builder: ${built.failure}` };
  if (built.invalidReason && setup.config.builder.claude_code.strict_builder_json) {
    return {
      code: 'STOP_BUILDER_OUTPUT_INVALID',
      detail: `builder answer is not a valid builder_result: ${built.invalidReason}`,
    };
  }
  if (built.invalidReason)
    record.warnings.push('builder output invalid (strict_builder_json=false): judged from git alone');
  const judged = record.judge?.verdict;
  if (judged?.code) return { code: judged.code, detail: judged.violations.slice(0, 5).join('; ') };
  return null;
}

async function verify(
  setup: TickSetup,
  record: TickRecord,
  ledger: TickLedger,
  task: Task,
  options: TickOptions,
  signal: AbortSignal,
  interruption: () => string | null,
): Promise<void> {
  const plan = await planVerification(task.verification, setup.config.verification, setup.facts.root);
  if (!plan.ok) {
    // A5 rows 1-2: nothing is executed.
    record.code = 'STOP_VERIFY_TAINTED';
    record.detail = plan.problems.join('; ');
    return;
  }
  const logPath =
    record.historyDir && setup.config.history.include_verify_log
      ? join(record.historyDir, 'verify.log')
      : null;
  if (logPath) record.verifyLogPath = relativeToRoot(setup, logPath);
  const outcome = await runVerifications(plan.runs, {
    cwd: setup.facts.root,
    logPath,
    maxLogBytes: setup.config.verification.max_log_bytes_per_run,
    bus: options.bus,
    signal,
    env: options.env,
  });
  record.runs = outcome.runs;
  await ledger.add({ verify_runs: outcome.runs.length });
  if (outcome.aborted) {
    record.code = 'STOP_INTERRUPTED';
    record.detail = `verification: ${interruption() ?? 'interrupted'}`;
  } else if (outcome.failedPhase) {
    // A5 rows 3-4: the first failure stops; slow never runs after a fast failure.
    const failed = outcome.runs.at(-1);
    record.code = outcome.failedPhase === 'fast' ? 'STOP_VERIFY_FAILED_FAST' : 'STOP_VERIFY_FAILED_SLOW';
    record.detail = failed
      ? `${failed.template_id} ${failed.timed_out ? 'timed out' : `exited ${failed.exit_code}`}`
      : null;
  }
}

/** Appendix B; a rollback that cannot finish cleanly turns the outcome into STOP_INTERRUPTED. */
async function rollBack(setup: TickSetup, record: TickRecord, guards: BuildGuards): Promise<void> {
  record.rollback.performed = true;
  try {
    const result = await rollback({
      git: setup.git,
      facts: setup.facts,
      paths: setup.paths,
      gitGuard: guards.gitGuard,
      ignoredBefore: guards.ignoredBefore,
    });
    record.rollback.clean = result.clean;
    record.rollback.notes.push(...result.notes);
    if (!result.clean) {
      record.detail = `rollback left the tree unclean (original outcome ${record.code}: ${record.detail ?? ''})`;
      record.code = 'STOP_INTERRUPTED';
    }
  } catch (error) {
    record.rollback.clean = false;
    record.detail = `rollback failed: ${(error as Error).message} (original outcome ${record.code}: ${record.detail ?? ''})`;
    record.code = 'STOP_INTERRUPTED';
  }
}

function commitMessage(task: Task, record: TickRecord): string {
  const subject = oneLine(`relais(${task.task_id}): ${task.intent}`, 72);
  return `${subject}\n\n${task.intent}\n\nRelais-Run: ${record.runId}\nRelais-Blast-Radius: ${record.judge?.blastLine ?? ''}\n`;
}

function relativeToRoot(setup: TickSetup, path: string): string {
  return path.slice(setup.facts.root.length + 1);
}

/** REPORT and END for a tick that held the lock. */
async function finishTick(
  setup: TickSetup,
  record: TickRecord,
  stateIn: WorkspaceState,
  options: TickOptions,
  now: () => Date,
): Promise<TickResult> {
  const { bus } = options;
  bus.emit({ type: 'phase.changed', phase: 'REPORT' });
  record.headCommit =
    (await setup.git.run(['rev-parse', 'HEAD'])).stdout.toString('utf8').trim() || record.headCommit;
  const warnings = budgetWarnings(stateIn, setup.config);
  record.warnings.push(...warnings);
  if (warnings.length > 0) bus.emit({ type: 'budget.warning', warnings });
  const state: WorkspaceState = {
    ...stateIn,
    budget_warning: warnings.length > 0,
    last_run_id: record.runId,
    last_verdict: verdictOf(record.code),
    last_code: record.code,
    updated_at: now().toISOString(),
  };
  await writeState(setup.paths, state).catch((error: Error) =>
    bus.emit({ type: 'log', level: 'error', message: `STATE.json not written: ${error.message}` }),
  );
  return writeReports(setup, record, state, options, now);
}

async function writeReports(
  setup: TickSetup,
  record: TickRecord,
  state: WorkspaceState | null,
  options: TickOptions,
  now: () => Date,
): Promise<TickResult> {
  const { bus } = options;
  let report = buildReport(record, now(), state, relativeToRoot(setup, setup.paths.reportMd));
  const written = await writeReportFiles(report, setup.paths, setup.config, bus);
  if (!written.ok) {
    // A6 row 1.
    record.detail = `REPORT.json could not be written: ${written.error}`;
    record.code = 'STOP_INTERRUPTED';
    report = buildReport(record, now(), state, relativeToRoot(setup, setup.paths.reportMd));
    await writeWriteFailure(setup.paths, record.runId, written.error);
  } else {
    if (record.historyDir) await writeHistorySnapshot(report, record.historyDir, setup.config, bus);
    if (report.verdict === 'blocked') await writeBlockedFile(setup.paths, report);
    else await clearBlockedFile(setup.paths);
  }
  bus.emit({ type: 'phase.changed', phase: 'END' });
  return announce(record, written.ok ? report : null, options);
}

/** A1 rows 4-7 (and the agent CLI check): BLOCKED with the lock held, so the files are ours. */
async function finishBlocked(
  setup: TickSetup,
  record: TickRecord,
  block: Block,
  state: WorkspaceState | null,
  options: TickOptions,
  now: () => Date,
): Promise<TickResult> {
  record.code = block.code;
  record.detail = block.detail;
  options.bus.emit({ type: 'phase.changed', phase: 'REPORT' });
  return writeReports(setup, record, state, options, now);
}

/** A1 rows 1-3: no workspace we may write to, so the outcome is only announced. */
function finishUnlocked(record: TickRecord, block: Block, bus: EngineBus): TickResult {
  record.code = block.code;
  record.detail = block.detail;
  bus.emit({ type: 'phase.changed', phase: 'END' });
  return announce(record, null, { bus } as TickOptions);
}

function announce(
  record: TickRecord,
  report: Report | null,
  options: Pick<TickOptions, 'bus' | 'signal'>,
): TickResult {
  const verdict = verdictOf(record.code);
  options.bus.emit({
    type: 'tick.finished',
    run_id: record.runId,
    verdict,
    code: record.code,
    remediation: remediationOf(record.code),
    detail: record.detail,
    blast_radius_line: record.judge?.blastLine ?? '0 files, +0/-0, 0 new',
    commit: record.commit,
    report_path: report ? report.pointers.report_md_path : null,
  });
  return {
    verdict,
    code: record.code,
    detail: record.detail,
    report,
    interrupted: options.signal?.aborted === true,
  };
}

/**
 * The tick's view of STATE.json: every spend is written through immediately, so a crash never
 * forgets calls that were made (seed 000 §12 reservation, seed 001 PR1 ledger).
 */
class TickLedger {
  private tickSoFar: Ledger = emptyLedger();

  constructor(
    private readonly setup: TickSetup,
    public state: WorkspaceState,
    private readonly now: () => Date,
  ) {}

  async add(delta: Partial<Ledger>): Promise<void> {
    this.state = applyDelta(this.state, delta, this.now());
    for (const key of Object.keys(delta) as (keyof Ledger)[]) this.tickSoFar[key] += delta[key] ?? 0;
    await writeState(this.setup.paths, this.state);
  }

  async enterMilestone(milestoneId: string): Promise<void> {
    const moved = ensureMilestone(this.state, milestoneId, this.now(), this.tickSoFar);
    if (!moved.changed) return;
    this.state = moved.state;
    await writeState(this.setup.paths, this.state);
  }
}
