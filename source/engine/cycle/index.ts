export {
  type CodexCli,
  type CycleAgents,
  type CyclePolicy,
  codexCliSchema,
  cycleAgentSchema,
  cycleAgentsSchema,
  cyclePolicySchema,
  defaultAgents,
  defaultPolicy,
} from '../protocol/cycle-policy.js';
export type { Criterion, PlannedFile, PlannedTask } from './blocks.js';
export { ALL_CYCLE_CODES, type CycleCode, cycleRemediation } from './codes.js';
export type { CycleOptions, CycleRunners } from './context.js';
export { type Decision, decide, stateProblems } from './decide.js';
export { type CycleLoopResult, type LoopEnd, runCycleLoop } from './loop.js';
export { deriveNonce, newCycleId } from './nonce.js';
export { type CycleOutcome, type Reply, runCycle } from './run-cycle.js';
export { cycleRunners } from './runners.js';
export { type CycleState, cyclePaths, cycleStateSchema, readCycleState } from './state.js';
export { cycleStatusLines, resumeCycle } from './status.js';
export { runCycleTrack, type TrackInput, type TrackRun } from './track-runner.js';
