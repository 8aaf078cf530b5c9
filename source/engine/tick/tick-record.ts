import { type Code, remediationOf, verdictOf } from '../protocol/codes.js';
import type { Report, SandboxName, VerificationRun } from '../protocol/report.js';
import { emptyLedger, type WorkspaceState } from '../protocol/state.js';
import type { Control, Task } from '../protocol/task.js';
import type { JudgeOutcome } from '../session/judge-phase.js';
import type { HistoryKnown, OwnRun } from '../workspace/history-tally.js';
import type { BuildOutcome } from './build.js';

/**
 * What a tick learned as it went, and the pure function that turns it into REPORT.json. Nothing
 * here does I/O; the report is validated against its schema when written.
 */

export interface AgentTally {
  calls: number;
  /** Reported costs plus the reservations of calls that reported none (`unreportedUsd`). */
  costUsd: number;
  /** The part of `costUsd` held for calls whose cost was never reported, and how many. */
  unreportedUsd: number;
  unreportedCalls: number;
}

export interface TickRecord {
  /** Set once preflight passed: a tick refused before that is no tick (`relais loop` counts it apart). */
  started: boolean;
  /** Which sandbox the tick's processes ran in (issue 14); null until the setup is read. */
  sandbox: SandboxName | null;
  readonly runId: string;
  readonly startedAt: Date;
  code: Code;
  detail: string | null;
  task: Task | null;
  baseCommit: string | null;
  headCommit: string | null;
  /** `question`: what it asked the human instead of proposing a task (issue 15). */
  orchestrator: AgentTally & { error: string | null; question: string | null };
  builder: AgentTally & { outcome: BuildOutcome | null };
  judge: JudgeOutcome | null;
  runs: VerificationRun[];
  rollback: { performed: boolean; clean: boolean | null; notes: string[] };
  commit: string | null;
  notes: string[];
  diffPatchPath: string | null;
  verifyLogPath: string | null;
  /** Absolute folder of this run's history snapshot, when history is enabled. */
  historyDir: string | null;
  /** The same folder relative to the repository root, as reports show it. */
  historyPointer: string | null;
  /** What preflight's rotation knew of history, kept in its tally when the tick ends (issue 17). */
  historyKnown: HistoryKnown | null;
  /** The tick's own run folder and history's stamp right after creating it (history-tally.ts). */
  historyOwnRun: OwnRun | null;
  warnings: string[];
  /** Writes of the builder the runner refused before they happened (the scope hook's reasons). */
  refusedWrites: string[];
  /** Seed 001 PR6: the orchestrator's control decision, when the task carried one. */
  control: Control | null;
  /** An agent's usage limit ended the tick: its tick was given back to the budget (issue 15). */
  limitRefunded: boolean;
}

export function newTickRecord(runId: string, startedAt: Date): TickRecord {
  return {
    started: false,
    runId,
    startedAt,
    sandbox: null,
    code: 'SUCCESS',
    detail: null,
    task: null,
    baseCommit: null,
    headCommit: null,
    orchestrator: { calls: 0, costUsd: 0, unreportedUsd: 0, unreportedCalls: 0, error: null, question: null },
    builder: { calls: 0, costUsd: 0, unreportedUsd: 0, unreportedCalls: 0, outcome: null },
    judge: null,
    runs: [],
    rollback: { performed: false, clean: null, notes: [] },
    commit: null,
    notes: [],
    diffPatchPath: null,
    verifyLogPath: null,
    historyDir: null,
    historyPointer: null,
    historyKnown: null,
    historyOwnRun: null,
    warnings: [],
    refusedWrites: [],
    control: null,
    limitRefunded: false,
  };
}

const MAX_TOUCHED_LISTED = 500;

export function buildReport(
  record: TickRecord,
  endedAt: Date,
  state: WorkspaceState | null,
  reportMdPath: string,
): Report {
  const judge = record.judge;
  const touched = judge?.touched.files ?? [];
  const builderOutcome = record.builder.outcome;
  const blast = judge?.blast ?? { files_touched: 0, lines_added: 0, lines_deleted: 0, new_files: 0 };
  return {
    run_id: record.runId,
    started_at: record.startedAt.toISOString(),
    ended_at: endedAt.toISOString(),
    duration_ms: Math.max(0, endedAt.getTime() - record.startedAt.getTime()),
    base_commit: record.baseCommit,
    head_commit: record.headCommit,
    task: record.task
      ? {
          task_id: record.task.task_id,
          milestone_id: record.task.milestone_id,
          task_kind: record.task.task_kind,
          intent: record.task.intent,
          ...(record.task.question ? { question: record.task.question } : {}),
        }
      : null,
    verdict: verdictOf(record.code),
    code: record.code,
    remediation: remediationOf(record.code),
    detail: record.detail ? record.detail.slice(0, 4000) : null,
    blast_radius: blast,
    blast_radius_line: judge?.blastLine ?? '0 files, +0/-0, 0 new',
    sandbox: record.sandbox,
    scope: {
      ok: (judge?.verdict.violations.length ?? 0) === 0,
      violations: (judge?.verdict.violations ?? []).slice(0, 200).map((v) => v.slice(0, 200)),
      touched_paths: touched.slice(0, MAX_TOUCHED_LISTED).map((f) => f.path.slice(0, 400)),
      touched_paths_truncated: touched.length > MAX_TOUCHED_LISTED,
    },
    diff: {
      files_changed: blast.files_touched,
      lines_changed: blast.lines_added + blast.lines_deleted,
      diff_patch_path: record.diffPatchPath,
    },
    verification: {
      exec_mode: 'argv_no_shell',
      runs: record.runs.slice(0, 40),
      verify_log_path: record.verifyLogPath,
    },
    budgets: {
      milestone_id: state?.milestone_id ?? null,
      ...(state?.budgets ?? emptyLedger()),
      warnings: record.warnings.slice(0, 20).map((w) => w.slice(0, 200)),
    },
    agents: {
      orchestrator: {
        calls: record.orchestrator.calls,
        cost_usd: round(record.orchestrator.costUsd),
        output_valid: record.orchestrator.calls === 0 ? null : record.task !== null,
        summary: null,
        error: record.orchestrator.error?.slice(0, 2000) ?? null,
      },
      builder: {
        calls: record.builder.calls,
        cost_usd: round(record.builder.costUsd),
        output_valid:
          builderOutcome && builderOutcome.failure === null ? builderOutcome.result !== null : null,
        summary: builderOutcome?.result?.summary ?? null,
        error:
          (builderOutcome?.failure?.detail ?? builderOutcome?.invalidReason ?? null)?.slice(0, 2000) ?? null,
      },
    },
    rollback: {
      performed: record.rollback.performed,
      clean: record.rollback.clean,
      notes: [...record.rollback.notes, ...record.notes].slice(0, 50).map((n) => n.slice(0, 400)),
    },
    commit: record.commit,
    control: record.control,
    pointers: { report_md_path: reportMdPath, history_dir: record.historyPointer },
  };
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
