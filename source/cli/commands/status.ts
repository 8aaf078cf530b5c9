import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { cycleStatusLines } from '../../engine/cycle/status.js';
import { type Code, remediationOf } from '../../engine/protocol/codes.js';
import type { RelaisConfig } from '../../engine/protocol/config.js';
import { inflightSchema } from '../../engine/protocol/inflight.js';
import { reportSchema } from '../../engine/protocol/report.js';
import type { Ledger } from '../../engine/protocol/state.js';
import { type Block, checkStartConditions, loadSetup, type TickSetup } from '../../engine/tick/preflight.js';
import { recoveryStatusLines } from '../../engine/tick/recovery-plan.js';
import { readWorkflow } from '../../engine/workflow/workflow-store.js';
import { readJsonValidated } from '../../engine/workspace/atomic-write.js';
import { budgetSummary, budgetWarnings } from '../../engine/workspace/ledger.js';
import { inspectLock } from '../../engine/workspace/lock.js';
import { readState } from '../../engine/workspace/state-store.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';
import { type WorkflowView, workflowLines, workflowView } from './workflow-status.js';

/**
 * `relais status [--preflight] [--json]` (also `ralphy status`): the workflow when there is one,
 * then the ledger against caps, lock, last report. With
 * --preflight it runs the A1 checks without side effects (no lock taken, nothing deleted or
 * written) and exits 3 with the code when a run would be blocked.
 */
export async function statusCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: { preflight: boolean; json: boolean },
): Promise<number> {
  const root = resolve(io.cwd, projectArg ?? '.');
  // A typo in the folder is not a project to initialise: say so instead of advising `relais init`.
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    println(
      io.stderr,
      `relais status: no such folder: ${root}\nGive the project folder (a git repository), or run it inside one.`,
    );
    return EXIT.USAGE;
  }
  const loaded = await loadSetup(root, io.env);
  if (!loaded.ok) return printBlocked(io, flags.json, root, loaded.block.code, loaded.block.detail);
  const status = await statusView(loaded.setup, root);
  if (flags.preflight) status.preflight = await preflightView(loaded.setup, status, io.env);
  if (flags.json) println(io.stdout, JSON.stringify(status));
  else printStatus(io, status);
  return status.preflight && !status.preflight.ok ? EXIT.BLOCKED : EXIT.SUCCESS;
}

async function statusView(setup: TickSetup, root: string): Promise<StatusView> {
  const { config, paths } = setup;
  const lock = await inspectLock(paths.lock);
  const state = await readState(paths);
  const report = await readJsonValidated(paths.report, reportSchema);
  const inflight = await readJsonValidated(paths.inflight, inflightSchema);
  const workflow = await readWorkflow(paths);
  const ledger = state.kind === 'ok' ? state.value : null;
  return {
    root,
    milestone: ledger?.milestone_id ?? null,
    ledger: ledger?.budgets ?? null,
    ledger_problem:
      state.kind === 'ok' ? null : state.kind === 'missing' ? 'STATE.json missing' : state.reason,
    caps: config.budgets.per_milestone,
    budget_summary: ledger ? budgetSummary(ledger, config) : null,
    budget_warnings: ledger ? budgetWarnings(ledger, config) : [],
    lock: lock.held ? { held: true, detail: lock.detail } : { held: false },
    last_report:
      report.kind === 'ok'
        ? {
            run_id: report.value.run_id,
            verdict: report.value.verdict,
            code: report.value.code,
            blast_radius: report.value.blast_radius_line,
            ended_at: report.value.ended_at,
          }
        : null,
    totals: ledger?.totals ?? null,
    interrupted_run: inflight.kind === 'ok' ? inflight.value.run_id : null,
    recovery: await recoveryStatusLines(setup.git, paths),
    workflow: workflow.kind === 'ok' ? workflowView(workflow.value, new Date()) : null,
    workflow_problem: workflow.kind === 'invalid' ? workflow.reason : null,
    cycle: await cycleStatusLines(root, config.workspace_dir),
    preflight: null,
  };
}

/** The A1 checks without side effects: no lock taken, no temp file removed, nothing written. */
async function preflightView(
  setup: TickSetup,
  status: StatusView,
  env: NodeJS.ProcessEnv,
): Promise<NonNullable<StatusView['preflight']>> {
  const block: Block | null = status.lock.held
    ? { code: 'BLOCKED_LOCK_HELD', detail: status.lock.detail ?? 'lock held' }
    : await checkStartConditions(setup, false, env).then((start) => (start.ok ? null : start.block));
  return block
    ? { ok: false, code: block.code, detail: block.detail, remediation: remediationOf(block.code) }
    : { ok: true, code: null, detail: null, remediation: null };
}

interface StatusView {
  root: string;
  milestone: string | null;
  ledger: Ledger | null;
  ledger_problem: string | null;
  caps: RelaisConfig['budgets']['per_milestone'];
  budget_summary: string | null;
  budget_warnings: string[];
  lock: { held: boolean; detail?: string };
  last_report: { run_id: string; verdict: string; code: Code; blast_radius: string; ended_at: string } | null;
  totals: Ledger | null;
  /** A run killed mid-tick, rolled back by the next `relais run`/`loop`. */
  interrupted_run: string | null;
  /** What the next run does about an interrupted one, and what recoveries kept aside (and where). */
  recovery: string[];
  /** The Ralphy workflow (`ralphy start`), when there is one. */
  workflow: WorkflowView | null;
  workflow_problem: string | null;
  /** The deadf cycle (`relais cycle`), when there is one: phase, track, task, a pause and its reason. */
  cycle: string[];
  preflight: { ok: boolean; code: Code | null; detail: string | null; remediation: string | null } | null;
}

function printStatus(io: CommandIo, s: StatusView): void {
  println(io.stdout, `Project:   ${s.root}`);
  if (s.workflow) for (const line of workflowLines(s.workflow)) println(io.stdout, line);
  for (const line of s.cycle) println(io.stdout, line);
  if (s.workflow_problem)
    println(
      io.stdout,
      `Workflow:  relais/WORKFLOW.json is unreadable (${s.workflow_problem}); it is kept as it is`,
    );
  println(io.stdout, `Milestone: ${s.milestone ?? '(none yet)'}`);
  println(io.stdout, `Ledger:    ${s.budget_summary ?? `unreadable (${s.ledger_problem})`}`);
  for (const w of s.budget_warnings) println(io.stdout, `Warning:   ${w}`);
  if (s.totals)
    println(
      io.stdout,
      `All time:  ${s.totals.ticks} ticks, ${s.totals.orchestrator_calls + s.totals.builder_calls} agent calls, $${s.totals.estimated_cost_usd.toFixed(2)}`,
    );
  for (const line of s.recovery) println(io.stdout, `Recovery:  ${line}`);
  println(io.stdout, `Lock:      ${s.lock.held ? `held, ${s.lock.detail}` : 'free'}`);
  const last = s.last_report;
  println(io.stdout, `Last run:  ${last ? `${last.run_id} ${last.code} (${last.blast_radius})` : '(none)'}`);
  if (s.preflight) {
    const p = s.preflight;
    println(
      io.stdout,
      p.ok ? 'Preflight: OK, a tick may start' : `Preflight: ${p.code}: ${p.detail}\n  Fix: ${p.remediation}`,
    );
  }
}

function printBlocked(io: CommandIo, json: boolean, root: string, code: Code, detail: string): number {
  if (json)
    println(
      io.stdout,
      JSON.stringify({ root, preflight: { ok: false, code, detail, remediation: remediationOf(code) } }),
    );
  else println(io.stdout, `${code}: ${detail}\n  Fix: ${remediationOf(code)}`);
  return EXIT.BLOCKED;
}
