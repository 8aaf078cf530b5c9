import { descendantsOf, processStartTicks, signalTree } from '../supervise/process-tree.js';

/**
 * Ends every process of a run killed mid-step (issue 14: recovery after SIGKILL). The recorded
 * pid is the sandbox's bwrap (or, unsandboxed, the agent's process-group leader): SIGKILL to it
 * ends the sandbox's PID namespace, and with it every process inside, however it detached. A live
 * process with another start time means the pid was reused: not ours, left alone. A dead leader
 * still names its group while the group has members, so the group is signalled either way.
 */
export function endRecordedSandbox(recorded: { pgid: number; start_ticks: string | null } | null): void {
  if (!recorded) return;
  const leader = processStartTicks(recorded.pgid);
  if (leader !== null && leader !== recorded.start_ticks) return;
  signalTree(
    recorded.pgid,
    leader === null ? [] : [recorded.pgid, ...descendantsOf(recorded.pgid)],
    'SIGKILL',
  );
}
