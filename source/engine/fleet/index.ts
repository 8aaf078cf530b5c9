/**
 * The fleet's front door inside the engine (issue 20). Nothing here loads DBOS or pg until a
 * function runs: both are imported dynamically by the modules behind it.
 */

export { type AttachOptions, type AttachOutcome, attachFleetRun, watchFleet } from './attach.js';
export {
  approveFleetRun,
  FLEET_ENGINES,
  type FleetCheck,
  type FleetResult,
  type FleetStatus,
  fleetDoctor,
  fleetStatus,
  readFleetSnapshot,
  redact,
  setFleetBudget,
  setFleetRate,
  submitFleetRun,
} from './client.js';
export { runFleetWorker, type WorkerOptions } from './worker.js';
