/**
 * The engine's front door: one entry per command, and the few types and helpers a front end needs
 * to drive them. The CLI imports the engine through this file only, and the UI only through
 * events.ts, gates.ts and protocol/ (test/unit/boundaries.test.ts fails the build otherwise).
 *
 * Issue 17: every command's entry loads its modules when it is first called, not when this file
 * is imported. Every command imports this file, so static re-exports made `relais status` load
 * the tick, the loop, the workflow, the cycle and the planner (over 300 modules) to read a few
 * JSON files. Types are re-exported as before (they cost nothing at run time).
 */
import * as z from 'zod';

// Zod compiles a fast path (new Function) for each object schema on its first parse: worth it
// for a schema parsed thousands of times, a loss for a CLI process that parses each file once or
// twice (the config's first parse took 25-35 ms with it and 10-13 ms without). Same results.
z.config({ jitless: true });

/**
 * An async entry of `module` that imports it on its first call; typed exactly as the original.
 * Only for functions that return a promise (a synchronous caller could not wait for the import).
 */
function lazy<M, K extends keyof M>(load: () => Promise<M>, name: K): M[K] {
  const call = async (...args: unknown[]) => ((await load())[name] as (...a: unknown[]) => unknown)(...args);
  return call as M[K];
}

// relais cycle (seed 003), and its init (the mapper and the brainstorm)
export type { CycleRunners } from './cycle/context.js';
export type { CycleCommandOutcome, CycleRequest, GivenSections } from './cycle/cycle-entry.js';
export const cycleEntry = lazy(() => import('./cycle/cycle-entry.js'), 'cycleEntry');
// The brainstorm's questions and answer parsing are small (zod is loaded by protocol/ anyway).
export {
  type BrainstormAnswers,
  parseAnswers,
  QUESTIONS,
  type Question,
} from './cycle/brainstorm/answers.js';
export type { SeedDocs } from './cycle/brainstorm/seed-docs.js';

export type { CycleInitOutcome, CycleInitRun, SeedDocsHuman } from './cycle/init-entry.js';
export const cycleInitEntry = lazy(() => import('./cycle/init-entry.js'), 'cycleInitEntry');
export type { LoopEnd } from './cycle/loop.js';
export type { MapResult } from './cycle/mapper/run-mapper.js';
export type { Reply } from './cycle/run-cycle.js';
// What every front end shares: the bus, the gates, the clock, outcome codes and their remediations.
export * from './events.js';
// Parsing `--account` is plain text work: it loads neither pg nor DBOS.
export { parseAccounts as parseFleetAccounts } from './fleet/accounts.js';
// relais worker | submit | approve | fleet (issue 20): DBOS and pg load only when these run
export type { AttachOutcome, FleetCheck, FleetResult, FleetStatus, WorkerOptions } from './fleet/index.js';
export type { FleetSnapshot } from './protocol/fleet.js';

const fleet = () => import('./fleet/index.js');
export const approveFleetRun = lazy(fleet, 'approveFleetRun');
export const attachFleetRun = lazy(fleet, 'attachFleetRun');
export const watchFleet = lazy(fleet, 'watchFleet');
export const fleetDoctor = lazy(fleet, 'fleetDoctor');
export const fleetStatus = lazy(fleet, 'fleetStatus');
export const runFleetWorker = lazy(fleet, 'runFleetWorker');
export const setFleetBudget = lazy(fleet, 'setFleetBudget');
export const setFleetRate = lazy(fleet, 'setFleetRate');
export const submitFleetRun = lazy(fleet, 'submitFleetRun');
export * from './gates.js';
// relais worktrees (issue 19: the worktrees of parallel lanes)
export type { WorktreeRow, WorktreesOutcome } from './parallel/worktrees-entry.js';
export const worktreesEntry = lazy(() => import('./parallel/worktrees-entry.js'), 'worktreesEntry');
// relais plan (seed 004)
export type { PlanMode, PlanRequest, PlanResult } from './planner/plan-entry.js';
export const planEntry = lazy(() => import('./planner/plan-entry.js'), 'planEntry');
export { statsLines } from './planner/stats-lines.js';
export { type Code, remediationOf, type Verdict } from './protocol/codes.js';
export { spendWithHeld, usd } from './protocol/money.js';
// relais config (user-level settings, beneath every project's relais.config.json)
export type { UserSettings } from './protocol/user-settings.js';
export { type FailureReason, remediationOfFailure } from './protocol/workflow.js';
// relais status | init | doctor
export type { PreflightView, StatusResult, StatusView } from './status/project-status.js';
export const projectStatus = lazy(() => import('./status/project-status.js'), 'projectStatus');
export type { WorkflowView } from './status/workflow-view.js';
export { type Clock, realClock } from './supervise/clock.js';
/** A second Ctrl-C, or a crashed front end: no time to wait for the engine's own cleanup. */
export { killAllChildrenNow } from './supervise/live-groups.js';
export const runTickWaitingOutLimits = lazy(() => import('./tick/limit-waits.js'), 'runTickWaitingOutLimits');
// relais run | loop (seed 000, seed 001)
export type { LoopExit, LoopMode, LoopResult } from './tick/loop.js';
export const runLoop = lazy(() => import('./tick/loop.js'), 'runLoop');
export type { TickOptions, TickResult } from './tick/run-tick.js';
export const runTick = lazy(() => import('./tick/run-tick.js'), 'runTick');
// ralphy start | abort (seed 002)
export type { AbortOutcome } from './workflow/abort-workflow.js';
export const abortWorkflow = lazy(() => import('./workflow/abort-workflow.js'), 'abortWorkflow');
export type { WorkflowOutcome } from './workflow/run-workflow.js';
export const runWorkflow = lazy(() => import('./workflow/run-workflow.js'), 'runWorkflow');
export type { DoctorCheck } from './workspace/doctor-checks.js';
export const runDoctor = lazy(() => import('./workspace/doctor-checks.js'), 'runDoctor');
export type { ConfirmFence } from './workspace/init-workspace.js';
export const initWorkspace = lazy(() => import('./workspace/init-workspace.js'), 'initWorkspace');
export const resetLedger = lazy(() => import('./workspace/init-workspace.js'), 'resetLedger');
export type { UserPreferences, UserSettingsStore } from './workspace/user-settings.js';

const userSettings = () => import('./workspace/user-settings.js');
export const openUserSettings = lazy(userSettings, 'openUserSettings');
export const readUserPreferences = lazy(userSettings, 'readUserPreferences');
// The app's list of past agent runs (issue 16 item 11): their transcripts in history
export type { TranscriptEntry } from './agents/transcripts.js';

const transcripts = () => import('./session/agent-transcripts.js');
export const listAgentTranscripts = lazy(transcripts, 'listAgentTranscripts');
export const readAgentTranscript = lazy(transcripts, 'readAgentTranscript');
