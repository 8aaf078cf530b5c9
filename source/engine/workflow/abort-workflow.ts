import { Git } from '../judge/git.js';
import { readRepoFacts } from '../judge/repo.js';
import type { WorkflowFile } from '../protocol/workflow.js';
import { acquireLock, loadConfig } from '../session/index.js';
import { type WorkspacePaths, workspacePaths } from '../workspace/paths.js';
import { requestAbort } from './abort-request.js';
import { readWorkflow, writeWorkflow } from './workflow-store.js';

/**
 * `ralphy abort` (seed 002 §9): asks the running `ralphy start` to stop its agent; it records
 * FAILED with reason `aborted` and exits cleanly. Waits until the workflow says so. When no
 * process runs the workflow any more (it crashed), the workflow is marked FAILED (aborted) here.
 */

export interface AbortOutcome {
  readonly ok: boolean;
  readonly message: string;
  /** The workflow's end, for --json. */
  readonly state?: WorkflowFile['state'];
  readonly reason?: WorkflowFile['failure_reason'];
}

/** How long `ralphy abort` waits for the running instance to record FAILED (it usually takes a second). */
const WAIT_MS = 60_000;
const POLL_MS = 200;

export async function abortWorkflow(root: string, env: NodeJS.ProcessEnv): Promise<AbortOutcome> {
  const repo = await readRepoFacts(new Git(root, env), root);
  const loaded = await loadConfig(repo.ok ? repo.facts.root : root);
  if (!loaded.ok) return { ok: false, message: `No relais workspace here: ${loaded.detail}` };
  const paths = workspacePaths(repo.ok ? repo.facts.root : root, loaded.config.workspace_dir);
  const delivery = await requestAbort(paths, new Date());
  if (delivery.kind === 'other_command')
    return {
      ok: false,
      message: `The workspace lock is held by "${delivery.command}" (pid ${delivery.pid}), not by ralphy start. Stop it with Ctrl-C in its terminal, or kill -INT ${delivery.pid}.`,
    };
  if (delivery.kind === 'not_running') return abortStale(paths);
  const ended = await waitForFailed(paths);
  if (!ended)
    return {
      ok: false,
      message: `Asked pid ${delivery.pid} to abort, but WORKFLOW.json does not say FAILED after ${WAIT_MS / 1000}s; run ralphy status.`,
    };
  const end = { state: ended.state, reason: ended.failure_reason };
  if (ended.failure_reason !== 'aborted')
    return {
      ok: false,
      message: `The workflow had already ended (${ended.state}, ${ended.status}) before the abort arrived.`,
      ...end,
    };
  return {
    ok: true,
    message: `Aborted: the workflow is ${ended.state} (reason: ${ended.failure_reason ?? 'none'}).`,
    ...end,
  };
}

/** The running instance writes WORKFLOW.json when it stops; another process can only poll it. */
async function waitForFailed(paths: WorkspacePaths): Promise<WorkflowFile | null> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const read = await readWorkflow(paths);
    if (read.kind === 'ok' && read.value.status !== 'running' && read.value.status !== 'waiting')
      return read.value;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return null;
}

/** Nobody runs the workflow: a crashed one is marked FAILED (aborted) under the lock. */
async function abortStale(paths: WorkspacePaths): Promise<AbortOutcome> {
  const read = await readWorkflow(paths);
  if (read.kind === 'missing')
    return { ok: false, message: 'No workflow is running and none was started here.' };
  if (read.kind === 'invalid')
    return { ok: false, message: `relais/WORKFLOW.json is unreadable (${read.reason}); nothing to abort.` };
  const w = read.value;
  if (['COMPLETED', 'FAILED', 'REJECTED'].includes(w.state))
    return { ok: false, message: `No workflow is running (the last one is ${w.state}).` };
  const lock = await acquireLock(paths.lock, 'ralphy abort');
  if (!lock.ok) return { ok: false, message: `Cannot take the workspace lock: ${lock.detail}` };
  try {
    await writeWorkflow(paths, {
      ...w,
      state: 'FAILED',
      phase: 'failed',
      status: 'failed',
      failure_reason: 'aborted',
      failure_detail: `aborted by ralphy abort while no process ran it (it had stopped in ${w.state})`,
      updated_at: new Date().toISOString(),
    });
  } finally {
    await lock.lock.release();
  }
  return {
    ok: true,
    message:
      'No process was running the workflow; it is now FAILED (reason: aborted). ralphy start can resume it.',
  };
}
