import { descendantsOf, signalTree, waitUntilDeadSync } from './process-tree.js';

/*
 * Apart from run-process.ts so that every command can register the forced-exit kill without
 * loading execa at start-up (issue 17's start-up budget): the engine's front door re-exports it.
 */

/** Process groups of children still running, for a forced exit that cannot wait (second Ctrl-C). */
export const liveGroups = new Set<number>();

/** Longest a forced exit waits for the killed processes to be dead. */
const FORCED_KILL_WAIT_MS = 2000;

export function killAllChildrenNow(): void {
  const killed: number[] = [];
  for (const pgid of liveGroups) {
    const tree = [pgid, ...descendantsOf(pgid)];
    signalTree(pgid, tree, 'SIGKILL');
    killed.push(...tree);
  }
  liveGroups.clear();
  // Deterministic: the forced exit returns only once the tree it killed is really dead.
  waitUntilDeadSync(killed, FORCED_KILL_WAIT_MS);
}
