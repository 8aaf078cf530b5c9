/**
 * What every flow (tick, loop, workflow, cycle, planner) stands on: loading the setup and config,
 * the workspace lock, crash recovery, run ids and the agent runners. The pieces keep their homes
 * (their owners edit them); this is the one place flows and the engine's entries import them from.
 */
export type { AgentRunner } from '../agents/agent-run.js';
export { findExecutable } from '../agents/find-executable.js';
export { loadConfig } from '../workspace/load-config.js';
export { acquireLock, type HeldLock, inspectLock } from '../workspace/lock.js';
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
