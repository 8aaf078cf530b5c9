import { rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { AgentRunner } from '../agents/agent-run.js';
import type { TickPhase } from '../events.js';
import { effectiveFenceLine } from '../judge/config-fence.js';
import { snapshotIgnored } from '../judge/ignored-files.js';
import { guardWorkspace, type ProtectedGuard, RepositoryReplacedError } from '../judge/protected-files.js';
import { readRepoFacts } from '../judge/repo.js';
import type { Code } from '../protocol/codes.js';
import { type BuildTask, isBuildTask } from '../protocol/task.js';
import { warnIfSandboxOff } from '../sandbox/off-warning.js';
import { writableInTree } from '../sandbox/sandbox.js';
import { acquireLock, loadSetup, newRunId, roleRoutedRunner, type TickSetup } from '../session/index.js';
import { type BuildGuards, judgeTick, takeBuildGuards, writeDiffPatch } from '../session/judge-phase.js';
import { type Block, checkStartConditions, type StartCheck } from '../session/preflight.js';
import {
  agentFile,
  clearInflight,
  markInflight,
  recordTickHead,
  recoverInterruptedRun,
} from '../session/recover.js';
import { runnerFilesBytes } from '../workspace/crash-recovery.js';
import { ensureRunHistoryDir } from '../workspace/history.js';
import { ownRunCreated } from '../workspace/history-tally.js';
import { reserveCall, settleCall } from '../workspace/ledger.js';
import { readState } from '../workspace/state-store.js';
import { build } from './build.js';
import { finishTick, finishUnlocked, finishWithoutTick } from './finish.js';
import { checkIntegrityAfterVerify, type TreeBeforeVerify, treeBeforeVerify } from './integrity-phase.js';
import { proposeTask } from './orchestrate-phase.js';
import {
  changesLeftUnbuilt,
  discardPrestartedBuilder,
  ignoredTakenAhead,
  prestartBuilderOnAnswer,
  prestartOrchestrator,
} from './prestart-agents.js';
import { rollBack, settle } from './settle.js';
import { relativeToRoot, type TickContext, type TickOptions, type TickResult } from './tick-context.js';
import { ledgerEvent, TickLedger } from './tick-ledger.js';
import { newTickRecord, type TickRecord } from './tick-record.js';
import { checkAfterVerify, verify } from './verify-phase.js';

export type { TickOptions, TickResult } from './tick-context.js';

/**
 * An agent call's own timeout ends it this long before the tick's deadline aborts everything, so
 * a CLI still retrying a 429 at the end is read as timed out (rate-limited: a wait, issue 15) and
 * not as interrupted by the tick; both timers firing at once made that reading a race.
 */
const AGENT_DEADLINE_MARGIN_MS = 2000;

/**
 * One judged tick (seed 000 §7): LOCK → PREFLIGHT → ORCHESTRATE → BUILD → JUDGE → VERIFY →
 * REPORT → END. Every decision is a row of Appendix A, taken in priority order; the first STOP or
 * BLOCKED wins and the tick goes straight to rollback (when the builder ran) and REPORT.
 */
export async function runTick(options: TickOptions): Promise<TickResult> {
  const now = options.now ?? (() => new Date());
  const record = newTickRecord(newRunId(now()), now());
  const { bus } = options;
  bus.emit({
    type: 'run.started',
    run_id: record.runId,
    command: options.command ?? 'run',
    project: options.root,
  });

  bus.emit({ type: 'phase.changed', phase: 'LOCK' });
  const loaded = await loadSetup(options.root, options.env);
  if (!loaded.ok) return finishUnlocked(record, loaded.block, options);
  const setup = loaded.setup;
  record.baseCommit = setup.facts.head;
  record.headCommit = setup.facts.head;
  if (options.lockHeld) return lockedTick(setup, record, options, now);
  const lock = await acquireLock(setup.paths.lock, `relais ${options.command ?? 'run'}`);
  // A1 row 3. Without the lock nothing is written: the holder's files are not ours to touch.
  if (!lock.ok) return finishUnlocked(record, { code: 'BLOCKED_LOCK_HELD', detail: lock.detail }, options);
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
  found: TickSetup,
  record: TickRecord,
  options: TickOptions,
  now: () => Date,
): Promise<TickResult> {
  options.bus.emit({ type: 'phase.changed', phase: 'PREFLIGHT' });
  const recovered = await recover(found, record, options);
  if (!recovered.ok) return finishWithoutTick(found, record, recovered.block, null, options, now);
  const setup = recovered.setup;
  record.sandbox = setup.sandbox.kind;
  warnIfSandboxOff(setup.sandbox, options.bus);
  // Orchestrator and builder each run on their own role's provider (agents.<role>.provider);
  // wrapRunner lets a caller watch every agent call (the limit waits of `relais run` and `loop`).
  const runner = (options.wrapRunner ?? ((r: AgentRunner) => r))(
    options.agentRunner?.(setup) ??
      roleRoutedRunner(setup.config, { env: options.env, root: setup.facts.root, sandbox: setup.sandbox }),
  );
  // Started once the tree is found clean, while the last start conditions are read (about 20 ms:
  // history, the runner's files, the ledger): the command is the committed config's (a dirty
  // tree, its config included, starts nothing), and a tick those conditions refuse ends it before
  // any call, so it never gets a prompt.
  const orchestrator = new PrestartedOrchestrator();
  const prestart = () => orchestrator.start(prestartOrchestrator(setup, runner, options.signal));
  try {
    const start = await checkStartConditions(setup, true, options.env, options.runCaps, () => {
      if (runnerFilesBytes(setup.paths) <= EARLY_ORCHESTRATOR_MAX_JSON_BYTES) prestart();
    });
    if (!start.ok) {
      await orchestrator.discard();
      return finishWithoutTick(setup, record, start.block, start.state, options, now);
    }
    if (!orchestrator.started) prestart();
    // Asked for before the call is prepared (its spawn goes on meanwhile): the call adopts it.
    await orchestrator.asked();
    return await startedAfterPreflight(setup, runner, record, start, options, now);
  } finally {
    // An orchestrator started for a call that never came (a stop before it).
    await orchestrator.discard();
  }
}

/**
 * Up to this many bytes of runner JSON files, the orchestrator's CLI starts before they are
 * parsed (preflight's row 6). Their parse is synchronous, and a prestarted process is ended by
 * a timer once it has waited 2 s for its call (run-process.ts), before Claude Code stops waiting
 * for its stdin (3 s) and runs without a prompt: a parse long enough would hold that timer back.
 * A few kilobytes is what the runner writes; past this bound the CLI starts after the parse.
 */
const EARLY_ORCHESTRATOR_MAX_JSON_BYTES = 1024 * 1024;

/** The orchestrator's prestarted CLI, until a call adopts it or the tick ends it unused. */
class PrestartedOrchestrator {
  private ending: Promise<() => Promise<void>> | null = null;

  /** Whether it was started (and not discarded since). */
  get started(): boolean {
    return this.ending !== null;
  }

  start(ending: Promise<() => Promise<void>>): void {
    // A prestart that failed left nothing to end: the call starts its own process.
    this.ending = ending.catch(() => async () => undefined);
  }

  /** Once the runner has been asked for it (its prompt file read); the spawn may go on. */
  async asked(): Promise<void> {
    await this.ending;
  }

  /** Ends it if no call adopted it; once (an adopted process is the call's to end). */
  async discard(): Promise<void> {
    const ending = this.ending;
    this.ending = null;
    await (await ending)?.();
  }
}

async function startedAfterPreflight(
  setup: TickSetup,
  runner: AgentRunner,
  record: TickRecord,
  start: Extract<StartCheck, { ok: true }>,
  options: TickOptions,
  now: () => Date,
): Promise<TickResult> {
  record.historyKnown = start.history;
  if (start.removedTmp.length > 0)
    options.bus.emit({
      type: 'log',
      level: 'info',
      message: `removed ${start.removedTmp.length} stale .tmp file(s)`,
    });
  if (start.prunedHistory.length > 0)
    options.bus.emit({
      type: 'log',
      level: 'info',
      message: `history above history.max_mb: removed the ${start.prunedHistory.length} oldest run folder(s)`,
    });

  const maxMs = setup.config.runner.max_tick_seconds * 1000;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), maxMs);
  timer.unref();
  const deadlineAt = Date.now() + maxMs;
  const ctx: TickContext = {
    setup,
    record,
    options,
    now,
    ledger: new TickLedger(setup.paths, start.state, now, (state) =>
      options.bus.emit(ledgerEvent(state, setup.config.budgets.per_milestone)),
    ),
    runner,
    signal: AbortSignal.any([options.signal, deadline.signal]),
    remainingMs: () => Math.max(1, deadlineAt - Date.now() - AGENT_DEADLINE_MARGIN_MS),
    interruption: () =>
      deadline.signal.aborted
        ? `tick exceeded runner.max_tick_seconds (${setup.config.runner.max_tick_seconds}s)`
        : options.signal.aborted
          ? 'interrupted by signal'
          : null,
    verifyIgnored: null,
    builderAhead: null,
  };
  try {
    return await startedTick(ctx);
  } finally {
    clearTimeout(timer);
  }
}

async function startedTick(ctx: TickContext): Promise<TickResult> {
  const { setup, record, options, ledger } = ctx;
  const phase = (p: TickPhase) => options.bus.emit({ type: 'phase.changed', phase: p });
  const finish = async () => {
    // A builder started for a build that never came: ended before anything is reported. Every
    // way out of the tick passes here (the catch below ends it first, before its rollback).
    await discardPrestartedBuilder(ctx);
    const left = await changesLeftUnbuilt(ctx);
    if (left.length > 0) {
      const note = `the builder's CLI, started ahead for a build that did not run, was ended with ${left.length} path(s) changed in its folders (${left.slice(0, 5).join(', ')}${left.length > 5 ? ', …' : ''}); nothing was put back: undo them, or the next run is refused (BLOCKED_DIRTY_WORKTREE)`;
      record.notes.push(note);
      options.bus.emit({ type: 'log', level: 'warn', message: note });
    }
    if (record.code !== 'SUCCESS' && record.orchestrator.calls > 0 && options.endedByLimit?.()) {
      record.limitRefunded = true;
      await ledger.add({ ticks: -1 });
    }
    return finishTick(setup, record, ledger.state, options, ctx.now);
  };
  let guards: BuildGuards | null = null;
  let verifiedTree: TreeBeforeVerify | null = null;
  record.started = true;
  try {
    phase('ORCHESTRATE');
    await ledger.add({ ticks: 1 });
    // Every tick that may spend gets a history snapshot, even when the orchestrator fails.
    record.historyDir = setup.config.history.enabled
      ? await ensureRunHistoryDir(setup.paths, record.runId)
      : null;
    // Read at once: any later change to history's folder during the tick means no tally at its end.
    record.historyOwnRun = record.historyDir ? ownRunCreated(setup.paths, record.runId) : null;
    record.historyPointer = record.historyDir ? relativeToRoot(setup, record.historyDir) : null;
    const task = await proposeTask(ctx, (answer) => prestartBuilderOnAnswer(ctx, answer));
    if (task === null) return await finish();
    const refused = options.refusePlan?.(task) ?? null;
    if (refused !== null) {
      record.code = 'STOP_PLAN_REPEATED';
      record.detail = refused;
      return await finish();
    }

    phase('BUILD');
    const built = await prepareBuild(ctx, task);
    guards = built;
    await buildAndJudge(ctx, task, built);
    const stop = firstStop(ctx);
    if (stop) {
      record.code = stop.code;
      record.detail = stop.detail;
    } else {
      phase('VERIFY');
      // The guards of the after-VERIFY checks are taken only when a verification command will
      // run: with none, nothing but the runner runs between JUDGE and the commit, the builder's
      // processes having ended with BUILD (its process group, and the sandbox when on).
      let armed: VerifyGuards | null = null;
      const ran = await verify(ctx, task, async () => {
        armed = await takeVerifyGuards(ctx, built);
      });
      const taken = armed as VerifyGuards | null;
      verifiedTree = taken?.tree ?? null;
      const after =
        ran && taken
          ? ((await checkAfterVerify(ctx, guards, taken.workspace, task)) ??
            (await checkIntegrityAfterVerify(ctx, guards, verifiedTree)))
          : null;
      if (after && record.code === 'SUCCESS') {
        record.code = after.code;
        record.detail = after.detail;
      }
    }
    await settle(ctx, task, guards, verifiedTree?.judged);
    await settleInflight(ctx);
    return await finish();
  } catch (error) {
    // Nothing of the tick's but the runner may run while it rolls back.
    await discardPrestartedBuilder(ctx);
    record.code = 'STOP_INTERRUPTED';
    record.detail = `${ctx.interruption() ?? 'runner error'}: ${(error as Error).message}`;
    if (error instanceof RepositoryReplacedError) {
      // No git command may run in a git folder the builder swapped: report, do not roll back. The
      // in-flight marker stays, so the next run refuses to start until a human has looked.
      record.rollback = {
        performed: false,
        clean: false,
        notes: ['rollback skipped: the git folder was replaced'],
      };
    } else if (guards) {
      // Anything unexpected after BUILD started still ends in a rollback and a report (Appendix B).
      await rollBack(ctx, guards);
      await settleInflight(ctx);
    }
    return await finish();
  } finally {
    await record.judge?.touched.index.dispose();
    await verifiedTree?.disk.dispose();
  }
}

interface VerifyGuards {
  readonly workspace: ProtectedGuard;
  readonly tree: TreeBeforeVerify | null;
}

/** Right before the first verification command: what the after-VERIFY checks compare with. */
async function takeVerifyGuards(ctx: TickContext, guards: BuildGuards): Promise<VerifyGuards> {
  const { setup, record } = ctx;
  // Re-armed after the runner's own writes of the judge phase; its ledger and logs are skipped.
  const workspace = await guardWorkspace(setup.paths, [
    setup.paths.state,
    setup.paths.historyDir,
    agentFile(setup.paths),
  ]);
  ctx.verifyIgnored = {
    // Only what the checks can write (their sandbox), the set the builder's snapshot was taken with.
    before: await snapshotIgnored(setup.git, setup.paths.relDir, guards.ignoredBefore.within),
    builderPaths: new Set(record.judge?.touched.files.map((f) => f.path) ?? []),
  };
  return { workspace, tree: await treeBeforeVerify(ctx) };
}

async function currentHead(setup: TickSetup): Promise<string | null> {
  const head = await setup.git.run(['rev-parse', '--verify', '-q', 'HEAD^{commit}']);
  return head.code === 0 ? head.stdout.toString('utf8').trim() : null;
}

/** The marker goes once the tick committed or rolled back cleanly; otherwise the next run recovers. */
async function settleInflight(ctx: TickContext): Promise<void> {
  const { rollback } = ctx.record;
  if (!rollback.performed || rollback.clean === true) await clearInflight(ctx.setup.paths);
}

/**
 * A run killed mid-tick left INFLIGHT.json: we hold the lock now, so it is ours to recover. The
 * repository facts are read again afterwards, since the recovery may have moved the branch.
 */
async function recover(
  setup: TickSetup,
  record: TickRecord,
  options: TickOptions,
): Promise<{ ok: true; setup: TickSetup } | { ok: false; block: Block }> {
  const recovery = await recoverInterruptedRun(setup.git, setup.facts, setup.paths);
  if (recovery.kind === 'none') return { ok: true, setup };
  // Whatever recovery moved aside is said, whether or not it finished (issue 21 item 2).
  record.notes.push(...recovery.notes);
  for (const note of recovery.notes) options.bus.emit({ type: 'log', level: 'warn', message: note });
  if (recovery.kind === 'failed')
    return { ok: false, block: { code: 'BLOCKED_CRASH_RECOVERY_REQUIRED', detail: recovery.detail } };
  const facts = await readRepoFacts(setup.git, setup.facts.root);
  if (!facts.ok)
    return {
      ok: false,
      block: { code: 'BLOCKED_CRASH_RECOVERY_REQUIRED', detail: `after recovery: ${facts.detail}` },
    };
  record.baseCommit = facts.facts.head;
  record.headCommit = facts.facts.head;
  return { ok: true, setup: { ...setup, facts: facts.facts } };
}

/**
 * Before the builder runs: its call is counted, the guards are taken, and INFLIGHT.json is
 * written (between the git guard and the workspace guard, as the runner's last write).
 */
async function prepareBuild(ctx: TickContext, task: BuildTask): Promise<BuildGuards> {
  const { setup, record, ledger, options } = ctx;
  record.builder.calls = 1;
  // Claude Code's maximum is reserved now and replaced by its reported cost after the run.
  const reserved = reservedBuilderCost(ctx, task);
  record.builder = { ...record.builder, costUsd: reserved, unreportedUsd: reserved, unreportedCalls: 1 };
  await ledger.add({
    builder_calls: 1,
    ...reserveCall(reserved),
    ...(task.builder.mode === 'patch' ? { patch_attempts: 1 } : {}),
  });
  // The driver writes its answer during the build: in "cursor" mode, or as the builder's provider.
  const drives =
    task.builder.mode === 'cursor' ||
    (task.builder.mode === 'claude_code' && setup.config.agents.builder.provider === 'external');
  const driverOutput =
    drives && setup.config.builder.cursor
      ? resolve(setup.facts.root, setup.config.builder.cursor.output_file)
      : null;
  // A result file left by an earlier tick must never pass for this one's.
  if (driverOutput) await rm(driverOutput, { force: true });
  // In a sandbox the workspace is read-only: the driver's result file is made (empty, ours) and
  // bound writable on its own, before the guards take their picture.
  if (driverOutput && setup.sandbox.kind === 'bwrap')
    await writeFile(driverOutput, '', { mode: 0o600, flag: 'wx' });
  // Ignored paths no sandboxed process of this tick can write are not watched (issue 17).
  const writable = writableInTree(
    setup.sandbox,
    setup.facts.root,
    task.scope.allowed_globs,
    driverOutput ? [driverOutput] : [],
  );
  return takeBuildGuards(
    setup,
    options.env,
    (early) =>
      markInflight({
        paths: setup.paths,
        facts: setup.facts,
        runId: record.runId,
        gitGuard: early.gitGuard,
        side: early.sideBefore,
        ignored: early.ignoredBefore,
        env: options.env,
        now: ctx.now(),
      }),
    // Written by the runner during the build (the agent's process group), or by the driver.
    [agentFile(setup.paths), ...(driverOutput ? [driverOutput] : []), ...(options.runnerWrites ?? [])],
    record.historyDir,
    writable,
    // Taken before the builder's prestart, when there was one: it may have written since.
    await ignoredTakenAhead(ctx, writable),
  );
}

function reservedBuilderCost(ctx: TickContext, task: BuildTask): number {
  return task.builder.mode === 'claude_code' ? ctx.setup.config.builder.claude_code.max_budget_usd : 0;
}

/** BUILD (A3, exactly one run) and JUDGE (A4) from git reality. */
async function buildAndJudge(ctx: TickContext, task: BuildTask, guards: BuildGuards): Promise<void> {
  const { setup, record, ledger, options } = ctx;
  const built = await build(ctx, task);
  // Adopted by the build's call, or ended now: nothing but the runner runs while the judge reads.
  await discardPrestartedBuilder(ctx);
  const reserved = reservedBuilderCost(ctx, task);
  const unreported = built.costReported === false;
  const cost = unreported ? reserved : built.costUsd;
  record.builder = {
    calls: 1,
    costUsd: cost,
    unreportedUsd: unreported ? reserved : 0,
    unreportedCalls: unreported ? 1 : 0,
    outcome: built,
  };

  options.bus.emit({ type: 'phase.changed', phase: 'JUDGE' });
  // Protected files are restored from their snapshots before the ledger or git is touched again.
  record.judge = await judgeTick(setup, guards, task);
  record.notes.push(...record.judge.notes);
  const patch =
    record.historyDir && setup.config.history.include_diff_patch
      ? join(record.historyDir, 'diff.patch')
      : null;
  // The ledger's write, git's diff into history and the head's record are independent: side by
  // side, and all ended before anything goes on (a failed write is thrown once the rest is done).
  const [settled, patchWritten, headRecorded] = await Promise.allSettled([
    ledger.add(settleCall(reserved, built)),
    patch ? writeDiffPatch(setup.git, setup.facts.head, record.judge.touched, patch) : false,
    // The builder has ended: commits on top of this HEAD can only be someone else's (issue 21).
    // The judge read it already, after the build, and only the runner has run since.
    (record.judge.headAfter !== undefined
      ? Promise.resolve(record.judge.headAfter)
      : currentHead(setup)
    ).then((head) => recordTickHead(setup.paths, head)),
  ]);
  if (settled.status === 'rejected') throw settled.reason;
  if (patchWritten.status === 'rejected') throw patchWritten.reason;
  if (headRecorded.status === 'rejected') throw headRecorded.reason;
  if (patch && patchWritten.value) record.diffPatchPath = relativeToRoot(setup, patch);
  options.bus.emit({
    type: 'judge.finished',
    code: record.judge.verdict.code,
    blast_radius: record.judge.blast,
    blast_radius_line: record.judge.blastLine,
    sandbox: record.sandbox,
    violations: record.judge.verdict.violations.slice(0, 50),
    touched_paths: record.judge.touched.files.slice(0, 200).map((f) => f.path),
    refused_writes: record.refusedWrites.length,
  });
}

/** A3 rows 1-3, then A4: the first STOP that applies, or null to go on to VERIFY. */
function firstStop(ctx: TickContext): { code: Code; detail: string } | null {
  const { record, setup } = ctx;
  const built = record.builder.outcome;
  const interrupted = ctx.interruption();
  if (interrupted) return { code: 'STOP_INTERRUPTED', detail: `builder: ${interrupted}` };
  if (built?.failure) return { code: built.failure.code, detail: `builder: ${built.failure.detail}` };
  if (built?.invalidReason && setup.config.builder.claude_code.strict_builder_json) {
    return {
      code: 'STOP_BUILDER_OUTPUT_INVALID',
      detail: `builder answer is not a valid builder_result: ${built.invalidReason}`,
    };
  }
  if (built?.invalidReason)
    record.warnings.push('builder output invalid (strict_builder_json=false): judged from git alone');
  const judged = record.judge?.verdict;
  if (judged?.code === 'STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED' && record.task && isBuildTask(record.task)) {
    // The report shows what the builder could really touch (issue 21 item 4).
    const fence = effectiveFenceLine(
      record.task.scope.allowed_globs,
      setup.config.scope.default_allowed_globs,
    );
    return {
      code: judged.code,
      detail: `${judged.violations.slice(0, 5).join('; ')}; effective fence: ${fence}`,
    };
  }
  if (judged?.code) return { code: judged.code, detail: judged.violations.slice(0, 5).join('; ') };
  return null;
}

/**
 * An interrupt that lands between two ticks of a loop (seed 001 PR2): nothing was running, so
 * there is nothing to roll back, but the reports say the loop was interrupted.
 */
export async function reportInterruption(options: TickOptions, detail: string): Promise<void> {
  const now = options.now ?? (() => new Date());
  const record = newTickRecord(newRunId(now()), now());
  const loaded = await loadSetup(options.root, options.env);
  if (!loaded.ok) return;
  const lock = await acquireLock(loaded.setup.paths.lock, 'relais loop');
  if (!lock.ok) return;
  try {
    record.baseCommit = loaded.setup.facts.head;
    record.headCommit = loaded.setup.facts.head;
    const state = await readState(loaded.setup.paths);
    await finishWithoutTick(
      loaded.setup,
      record,
      { code: 'STOP_INTERRUPTED', detail },
      state.kind === 'ok' ? state.value : null,
      options,
      now,
    );
  } finally {
    await lock.lock.release();
  }
}
