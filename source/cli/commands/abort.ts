import { resolve } from 'node:path';
import { Git } from '../../engine/judge/git.js';
import { readRepoFacts } from '../../engine/judge/repo.js';
import { requestAbort } from '../../engine/workflow/abort-request.js';
import { readWorkflow, writeWorkflow } from '../../engine/workflow/workflow-store.js';
import { loadConfig } from '../../engine/workspace/load-config.js';
import { acquireLock } from '../../engine/workspace/lock.js';
import { workspacePaths } from '../../engine/workspace/paths.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';

/** How long `ralphy abort` waits for the running instance to record FAILED (it usually takes a second). */
const WAIT_MS = 60_000;
const POLL_MS = 200;

/**
 * `ralphy abort [project]` (seed 002 §9): asks the running `ralphy start` to stop its agent; it
 * records FAILED with reason `aborted` and exits cleanly. Waits until the workflow says so. When
 * no process runs the workflow any more (it crashed), the workflow is marked FAILED (aborted) here.
 */
export async function abortCommand(
  io: CommandIo,
  projectArg: string | undefined,
  flags: { json: boolean },
): Promise<number> {
  const root = resolve(io.cwd, projectArg ?? '.');
  const say = (ok: boolean, message: string, extra: Record<string, unknown> = {}) => {
    println(
      flags.json ? io.stdout : ok ? io.stdout : io.stderr,
      flags.json ? JSON.stringify({ ok, message, ...extra }) : message,
    );
    return ok ? EXIT.SUCCESS : EXIT.STOP;
  };
  const repo = await readRepoFacts(new Git(root, io.env), root);
  const loaded = await loadConfig(repo.ok ? repo.facts.root : root);
  if (!loaded.ok) return say(false, `No relais workspace here: ${loaded.detail}`);
  const paths = workspacePaths(repo.ok ? repo.facts.root : root, loaded.config.workspace_dir);
  const delivery = await requestAbort(paths, new Date());
  if (delivery.kind === 'other_command')
    return say(
      false,
      `The workspace lock is held by "${delivery.command}" (pid ${delivery.pid}), not by ralphy start. Stop it with Ctrl-C in its terminal, or kill -INT ${delivery.pid}.`,
    );
  if (delivery.kind === 'not_running') return abortStale(paths, say);
  const ended = await waitForFailed(paths);
  if (!ended)
    return say(
      false,
      `Asked pid ${delivery.pid} to abort, but WORKFLOW.json does not say FAILED after ${WAIT_MS / 1000}s; run ralphy status.`,
    );
  if (ended.failure_reason !== 'aborted')
    return say(
      false,
      `The workflow had already ended (${ended.state}, ${ended.status}) before the abort arrived.`,
      {
        state: ended.state,
        reason: ended.failure_reason,
      },
    );
  return say(true, `Aborted: the workflow is ${ended.state} (reason: ${ended.failure_reason ?? 'none'}).`, {
    state: ended.state,
    reason: ended.failure_reason,
  });
}

async function waitForFailed(paths: ReturnType<typeof workspacePaths>) {
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
async function abortStale(
  paths: ReturnType<typeof workspacePaths>,
  say: (ok: boolean, message: string, extra?: Record<string, unknown>) => number,
): Promise<number> {
  const read = await readWorkflow(paths);
  if (read.kind === 'missing') return say(false, 'No workflow is running and none was started here.');
  if (read.kind === 'invalid')
    return say(false, `relais/WORKFLOW.json is unreadable (${read.reason}); nothing to abort.`);
  const w = read.value;
  if (['COMPLETED', 'FAILED', 'REJECTED'].includes(w.state))
    return say(false, `No workflow is running (the last one is ${w.state}).`);
  const lock = await acquireLock(paths.lock, 'ralphy abort');
  if (!lock.ok) return say(false, `Cannot take the workspace lock: ${lock.detail}`);
  try {
    const now = new Date().toISOString();
    await writeWorkflow(paths, {
      ...w,
      state: 'FAILED',
      phase: 'failed',
      status: 'failed',
      failure_reason: 'aborted',
      failure_detail: `aborted by ralphy abort while no process ran it (it had stopped in ${w.state})`,
      updated_at: now,
    });
  } finally {
    await lock.lock.release();
  }
  return say(
    true,
    `No process was running the workflow; it is now FAILED (reason: aborted). ralphy start can resume it.`,
  );
}
