import type { EngineBus } from '../events.js';
import { compactLooseObjects } from '../judge/compact-objects.js';
import { compactLooseRefs, LOOSE_REFS_LIMIT } from '../judge/compact-refs.js';
import { remediationOf, verdictOf } from '../protocol/codes.js';
import type { Report } from '../protocol/report.js';
import type { WorkspaceState } from '../protocol/state.js';
import { sweepLeftoverScratchWithin } from '../sandbox/leftover-scratch.js';
import type { Block, TickSetup } from '../session/preflight.js';
import { NEWEST_RUNS_KEPT } from '../workspace/history.js';
import { keepHistoryTally } from '../workspace/history-tally.js';
import { budgetWarnings } from '../workspace/ledger.js';
import { writeState } from '../workspace/state-store.js';
import { relativeToRoot, type TickOptions, type TickResult } from './tick-context.js';
import { buildReport, type TickRecord } from './tick-record.js';
import {
  clearBlockedFile,
  writeBlockedFile,
  writeHistorySnapshot,
  writeReportFiles,
  writeWriteFailure,
} from './write-outputs.js';

/** How long a tick's end waits for the sweep of what killed runners left (the rest goes on without it). */
const LEFTOVER_SWEEP_WAIT_MS = 3000;

/** REPORT and END (seed 000 §7 states 6-7) for every way a tick can end. */

/** A tick that held the lock and got past preflight: ledger, reports, history. */
export async function finishTick(
  setup: TickSetup,
  record: TickRecord,
  stateIn: WorkspaceState,
  options: TickOptions,
  now: () => Date,
): Promise<TickResult> {
  const { bus } = options;
  bus.emit({ type: 'phase.changed', phase: 'REPORT' });
  // HEAD as git has it now, read while STATE.json is written (neither depends on the other).
  const head = setup.git.run(['rev-parse', '--verify', '-q', 'HEAD^{commit}']);
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
  const [read] = await Promise.all([
    head,
    writeState(setup.paths, state).catch((error: Error) =>
      bus.emit({ type: 'log', level: 'error', message: `STATE.json not written: ${error.message}` }),
    ),
  ]);
  record.headCommit = read.code === 0 ? read.stdout.toString('utf8').trim() : null;
  return writeReports(setup, record, state, options, now);
}

/**
 * Only after a tick that succeeded with a commit and was not interrupted: a STOP leaves the
 * repository as it was for whoever reads it (its code may come after the commit: a report that
 * could not be written, an error after it), and a stop the user asked for does not wait for a pack.
 */
export function packingDue(record: Pick<TickRecord, 'code' | 'commit'>, signal: AbortSignal): boolean {
  return verdictOf(record.code) === 'success' && record.commit !== null && !signal.aborted;
}

/**
 * With its reports written and the lock still held: the loose objects git's own auto-gc would
 * have packed (judge/compact-objects.ts). Never part of the verdict.
 */
async function packLooseObjects(setup: TickSetup, options: TickOptions): Promise<void> {
  const done = await compactLooseObjects(setup.git, setup.facts.commonDir, {
    signal: options.signal,
    onStart: (loose) =>
      options.bus.emit({
        type: 'log',
        level: 'info',
        message: `packing ${loose} loose git objects (git's auto-gc is off while Relais runs)`,
      }),
  }).catch((error: Error) => ({ loose: 0, packed: false, detail: error.message }));
  if (done.packed)
    options.bus.emit({ type: 'log', level: 'info', message: `packed ${done.loose} loose git objects` });
  else if (done.detail)
    options.bus.emit({
      type: 'log',
      level: 'warn',
      message: `loose git objects left unpacked: ${done.detail}`,
    });
}

/** The same, for loose ref files (judge/compact-refs.ts). Never part of the verdict. */
async function packLooseRefs(setup: TickSetup, options: TickOptions): Promise<void> {
  if (options.signal.aborted) return;
  const done = await compactLooseRefs(setup.git, setup.facts.commonDir, {
    onStart: () =>
      options.bus.emit({
        type: 'log',
        level: 'info',
        message: `packing more than ${LOOSE_REFS_LIMIT} loose git refs into packed-refs (git's auto-gc is off while Relais runs)`,
      }),
  }).catch((error: Error) => ({ loose: 0, packed: false, left: null, detail: error.message }));
  if (done.packed && (done.left ?? 0) > LOOSE_REFS_LIMIT)
    options.bus.emit({
      type: 'log',
      level: 'warn',
      message: `${done.left} ref files stay under .git/refs after git pack-refs: refs git does not pack (symbolic, per-worktree, unreadable, or naming a missing object) or files it could not remove`,
    });
  else if (done.packed)
    options.bus.emit({ type: 'log', level: 'info', message: 'packed the loose git refs' });
  else if (done.detail)
    options.bus.emit({ type: 'log', level: 'warn', message: `loose git refs left unpacked: ${done.detail}` });
}

/**
 * A tick that never started, with the lock held so the files are ours: A1 rows 4-7 (and the agent
 * CLI check) BLOCKED, or an interrupt between two ticks of a loop.
 */
export function finishWithoutTick(
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
export function finishUnlocked(record: TickRecord, block: Block, options: TickOptions): TickResult {
  record.code = block.code;
  record.detail = block.detail;
  options.bus.emit({ type: 'phase.changed', phase: 'END' });
  return announce(record, null, null, options);
}

async function writeReports(
  setup: TickSetup,
  record: TickRecord,
  state: WorkspaceState | null,
  options: TickOptions,
  now: () => Date,
): Promise<TickResult> {
  const { bus } = options;
  const mdPath = relativeToRoot(setup, setup.paths.reportMd);
  let report = buildReport(record, now(), state, mdPath);
  const written = await writeReportFiles(report, setup.paths, setup.config, bus);
  if (!written.ok) {
    // A6 row 1.
    record.detail = `REPORT.json could not be written: ${written.error}`;
    record.code = 'STOP_INTERRUPTED';
    report = buildReport(record, now(), state, mdPath);
    await writeWriteFailure(setup.paths, record.runId, written.error);
  } else {
    if (record.historyDir) await writeHistorySnapshot(report, record.historyDir, setup.config, bus);
    if (report.verdict === 'blocked') await writeBlockedFile(setup.paths, report);
    else await clearBlockedFile(setup.paths);
    // Before END: tick.finished stays the last event of a tick (what --json readers take as its result).
    if (packingDue(record, options.signal)) {
      await packLooseObjects(setup, options);
      await packLooseRefs(setup, options);
    }
    await keepTally(setup, record);
  }
  // What killed runners left in the temp folder (sandbox/leftover-scratch.ts): usually swept long
  // ago, beside the first sandboxed process; started here when nothing sandboxed ran.
  await sweepLeftoverScratchWithin(LEFTOVER_SWEEP_WAIT_MS);
  bus.emit({ type: 'phase.changed', phase: 'END' });
  return announce(record, written.ok ? report : null, state, options);
}

/**
 * Last of the tick's writes to history: the tally lets the next tick skip listing it. Not
 * written, or not readable later, it only costs the next tick that listing.
 */
async function keepTally(setup: TickSetup, record: TickRecord): Promise<void> {
  if (!record.historyKnown) return;
  // REPORT.json was written after the tick's last change to history's folder: the witness.
  const { paths } = setup;
  await keepHistoryTally(
    paths,
    record.historyKnown,
    record.historyOwnRun,
    NEWEST_RUNS_KEPT,
    paths.report,
  ).catch(() => false);
}

function announce(
  record: TickRecord,
  report: Report | null,
  state: WorkspaceState | null,
  options: { bus: EngineBus; signal: AbortSignal },
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
    sandbox: record.sandbox,
    commit: record.commit,
    report_path: report ? report.pointers.report_md_path : null,
  });
  return {
    started: record.started,
    verdict,
    code: record.code,
    detail: record.detail,
    report,
    interrupted: options.signal.aborted,
    control: record.control,
    milestone: state?.milestone_id ?? null,
    budgetWarning: state?.budget_warning ?? false,
    builderQuestion: record.builder.outcome?.question ?? null,
    orchestratorQuestion: record.orchestrator.question,
    refusedWrites: [...record.refusedWrites],
    spent: {
      ticks: record.orchestrator.calls > 0 && !record.limitRefunded ? 1 : 0,
      calls: record.orchestrator.calls + record.builder.calls,
      costUsd: record.orchestrator.costUsd + record.builder.costUsd,
      unreportedUsd: record.orchestrator.unreportedUsd + record.builder.unreportedUsd,
      unreportedCalls: record.orchestrator.unreportedCalls + record.builder.unreportedCalls,
    },
  };
}
