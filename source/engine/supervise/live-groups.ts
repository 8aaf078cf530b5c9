import {
  descendantsOf,
  processesMarkedByThisRunner,
  signalEach,
  signalTree,
  waitUntilDeadSync,
} from './process-tree.js';

/*
 * Apart from run-process.ts so that every command can register the forced-exit kill without
 * loading execa at start-up (issue 17's start-up budget): the engine's front door re-exports it.
 */

/** Process groups of children still running, for a forced exit that cannot wait (second Ctrl-C). */
export const liveGroups = new Set<number>();

/**
 * Longest a forced exit waits for the killed processes to be dead: SIGKILL ends a process the next
 * time it runs, which on a loaded machine can take a moment; only one stuck in the kernel takes
 * this long, and the exit does not hang on it.
 */
const FORCED_KILL_WAIT_MS = 10_000;

/**
 * The second Ctrl-C: SIGKILL to every child's process group, every process still below it, and
 * every process marked as started by this runner (a setsid daemon is in no group of ours and was
 * re-parented to init; the graceful stop, which would have swept it, may not have got that far).
 * Sandboxed children die with bwrap (its PID namespace, --die-with-parent).
 */
export function killAllChildrenNow(): void {
  const killed: number[] = [];
  for (const pgid of liveGroups) {
    const tree = [pgid, ...descendantsOf(pgid)];
    signalTree(pgid, tree, 'SIGKILL');
    killed.push(...tree);
  }
  liveGroups.clear();
  for (const pid of processesMarkedByThisRunner()) {
    const tree = [pid, ...descendantsOf(pid)];
    signalEach(tree, 'SIGKILL');
    killed.push(...tree);
  }
  // Deterministic: the forced exit returns only once the tree it killed is really dead.
  waitUntilDeadSync(killed, FORCED_KILL_WAIT_MS);
}
