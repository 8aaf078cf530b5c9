/**
 * The engine's front door: one entry per command, and the few types and helpers a front end needs
 * to drive them. The CLI imports the engine through this file only, and the UI only through
 * events.ts, gates.ts and protocol/ (test/unit/boundaries.test.ts fails the build otherwise).
 */

// relais cycle (seed 003)
export type { CycleRunners } from './cycle/context.js';
export {
  type CycleEntryResult,
  type CycleSetup,
  type GivenSections,
  loadCycleSetup,
  runCycleEntry,
} from './cycle/cycle-entry.js';
export type { LoopEnd } from './cycle/loop.js';
export type { Reply } from './cycle/run-cycle.js';
export { resumeCycle } from './cycle/status.js';
// What every front end shares: the bus, the gates, the clock, outcome codes and their remediations.
export * from './events.js';
export * from './gates.js';
// relais plan (seed 004)
export type { IssueOutcome } from './planner/issue-pass.js';
export {
  type PlanRefusal,
  type PrdPlanResult,
  planIssueEntry,
  plannerStatsOf,
  planPrdEntry,
} from './planner/plan-entry.js';
export { statsLines } from './planner/stats.js';
export { type Code, remediationOf, type Verdict } from './protocol/codes.js';
// relais config (user-level settings, beneath every project's relais.config.json)
export type { UserSettings } from './protocol/user-settings.js';
export { type FailureReason, remediationOfFailure } from './protocol/workflow.js';
export { loadSetup, type TickSetup } from './session/index.js';
// relais status | init | doctor
export {
  type PreflightView,
  projectStatus,
  type StatusResult,
  type StatusView,
} from './status/project-status.js';
export type { WorkflowView } from './status/workflow-view.js';
export { type Clock, realClock } from './supervise/clock.js';
/** A second Ctrl-C, or a crashed front end: no time to wait for the engine's own cleanup. */
export { killAllChildrenNow } from './supervise/run-process.js';
export { runTickWaitingOutLimits } from './tick/limit-waits.js';
// relais run | loop (seed 000, seed 001)
export { type LoopExit, type LoopMode, type LoopResult, runLoop } from './tick/loop.js';
export { runTick, type TickOptions, type TickResult } from './tick/run-tick.js';
// ralphy start | abort (seed 002)
export { type AbortOutcome, abortWorkflow } from './workflow/abort-workflow.js';
export { runWorkflow, type WorkflowOutcome } from './workflow/run-workflow.js';
export { type DoctorCheck, runDoctor } from './workspace/doctor-checks.js';
export { type ConfirmFence, initWorkspace } from './workspace/init-workspace.js';
export { openUserSettings, type UserSettingsStore } from './workspace/user-settings.js';
