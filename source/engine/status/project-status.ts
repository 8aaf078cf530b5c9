import { cycleStatusLines } from '../cycle/status-lines.js';
import { type Code, remediationOf } from '../protocol/codes.js';
import type { RelaisConfig } from '../protocol/config.js';
import { inflightSchema } from '../protocol/inflight.js';
import { reportSchema } from '../protocol/report.js';
import type { Ledger } from '../protocol/state.js';
import { type Block, loadProject, type ProjectSetup, type TickSetup } from '../session/load-project.js';
import { recoveryStatusLines } from '../session/recovery-plan.js';
import { inspectLock } from '../session/workspace-lock.js';
import { readWorkflow } from '../workflow/workflow-store.js';
import { readJsonValidated } from '../workspace/atomic-write.js';
import { budgetSummary, budgetWarnings } from '../workspace/ledger.js';
import { readState } from '../workspace/state-store.js';
import { projectWithoutConfig } from './without-config.js';
import { type WorkflowView, workflowView } from './workflow-view.js';

/**
 * What `relais status` shows (also `ralphy status`): the workflow when there is one, the cycle,
 * the ledger against caps, the lock and the last report. With `preflight` it runs the A1 checks
 * without side effects (no lock taken, nothing deleted or written).
 */

export interface StatusView {
  root: string;
  milestone: string | null;
  ledger: Ledger | null;
  ledger_problem: string | null;
  /** Null while relais.config.json does not load: the caps are the config's. */
  caps: RelaisConfig['budgets']['per_milestone'] | null;
  budget_summary: string | null;
  /** relais.config.json exists but does not load (the field, or the line, and why); else null. */
  config_problem: string | null;
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
  preflight: PreflightView | null;
}

export interface PreflightView {
  ok: boolean;
  code: Code | null;
  detail: string | null;
  remediation: string | null;
}

export type StatusResult =
  | { readonly kind: 'status'; readonly status: StatusView }
  /** No setup to show (config or workspace missing, not a git repository): a blocked preflight. */
  | { readonly kind: 'blocked'; readonly root: string; readonly preflight: PreflightView };

export async function projectStatus(
  root: string,
  env: NodeJS.ProcessEnv,
  options: { readonly preflight: boolean },
): Promise<StatusResult> {
  // The sandbox is probed (a bwrap start) only for --preflight: reading the workspace needs none.
  const loaded = await loadProject(root, env);
  if (!loaded.ok) {
    // An invalid config still leaves the workflow, the ledger and the rest readable: shown.
    const partial = await projectWithoutConfig(root, env);
    if (!partial) return { kind: 'blocked', root, preflight: blockedView(loaded.block) };
    const status = await statusView({ ...partial, config: null }, root);
    status.config_problem = partial.problem;
    if (options.preflight) status.preflight = blockedView(loaded.block);
    return { kind: 'status', status };
  }
  const { project } = loaded;
  const status = await statusView({ ...project, commonDir: project.facts.commonDir }, root);
  if (options.preflight) {
    // Loaded only here: reading the workspace needs neither the sandbox nor the start conditions.
    const { resolveSandbox } = await import('../sandbox/sandbox.js');
    const sandbox = await resolveSandbox(project.config, project.facts.root, env);
    status.preflight = await preflightView({ ...project, sandbox }, status, env);
  }
  return { kind: 'status', status };
}

async function statusView(
  setup: Pick<ProjectSetup, 'paths' | 'git'> & {
    readonly config: RelaisConfig | null;
    readonly commonDir: string;
  },
  root: string,
): Promise<StatusView> {
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
    caps: config?.budgets.per_milestone ?? null,
    budget_summary: ledger ? budgetSummary(ledger, config) : null,
    config_problem: null,
    budget_warnings: ledger && config ? budgetWarnings(ledger, config) : [],
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
    recovery: await recoveryStatusLines(setup.git, paths, setup.commonDir),
    workflow:
      workflow.kind === 'ok'
        ? workflowView(workflow.value, new Date(), root, lock.held && lock.info ? lock.info : null)
        : null,
    workflow_problem: workflow.kind === 'invalid' ? workflow.reason : null,
    cycle: await cycleStatusLines(root, paths.relDir),
    preflight: null,
  };
}

/** The A1 checks without side effects: no lock taken, no temp file removed, nothing written. */
async function preflightView(
  setup: TickSetup,
  status: StatusView,
  env: NodeJS.ProcessEnv,
): Promise<PreflightView> {
  const { checkStartConditions } = await import('../session/preflight.js');
  const block: Block | null = status.lock.held
    ? { code: 'BLOCKED_LOCK_HELD', detail: status.lock.detail ?? 'lock held' }
    : await checkStartConditions(setup, false, env).then((start) => (start.ok ? null : start.block));
  return block ? blockedView(block) : { ok: true, code: null, detail: null, remediation: null };
}

function blockedView(block: Block): PreflightView {
  return { ok: false, code: block.code, detail: block.detail, remediation: remediationOf(block.code) };
}
