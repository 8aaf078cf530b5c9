import { type WorkspaceState, workspaceStateSchema } from '../protocol/state.js';
import { type JsonRead, readJsonValidated, writeJsonAtomic } from './atomic-write.js';
import type { WorkspacePaths } from './paths.js';

export function readState(paths: WorkspacePaths): Promise<JsonRead<WorkspaceState>> {
  return readJsonValidated(paths.state, workspaceStateSchema);
}

export function writeState(paths: WorkspacePaths, state: WorkspaceState): Promise<void> {
  return writeJsonAtomic(paths.state, workspaceStateSchema, state);
}

/** The fix for a corrupt ledger: a fresh STATE.json beside the old one, and nothing else touched. */
export const RESET_LEDGER = 'relais init --reset-ledger';
