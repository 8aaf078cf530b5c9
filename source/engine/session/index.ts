/**
 * What every flow (tick, loop, workflow, cycle, planner, parallel, fleet, status) stands on:
 * loading the setup and config, the workspace lock, crash recovery, run ids and the agent runners.
 * The lock keeps its home in workspace/ (doctor reads it there); every flow takes it from here.
 * Flows may also import this folder's files directly (the tick's phases do).
 */
export type { AgentRunner } from '../agents/agent-run.js';
export { findExecutable } from '../agents/find-executable.js';
export { loadConfig } from '../workspace/load-config.js';
export { agentCommandSetting, missingAgentCommand } from './agent-check.js';
export {
  agentRunnerFor,
  type RunnerEnvironment,
  roleRoutedRunner,
  runnerForProvider,
} from './agent-runners.js';
export {
  type Block,
  loadSetup,
  type SetupResult,
  sandboxRefusal,
  type TickSetup,
} from './preflight.js';
export { recoverInterruptedRun } from './recover.js';
export { newRunId } from './run-id.js';
export { acquireLock, type HeldLock, inspectLock } from './workspace-lock.js';
