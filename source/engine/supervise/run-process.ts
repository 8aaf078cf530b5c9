import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { LineSplitter, TailBuffer } from './line-splitter.js';
import { descendantsOf, groupHasMembers, signalTree, TreeWatch, waitUntilDeadSync } from './process-tree.js';

/**
 * The one way Relais starts a child process (DESIGN style rule 4): argv only (never a shell), its
 * own process group, bounded memory whatever the child prints, and a promise that never rejects.
 * Timeout and abort end the whole tree: SIGTERM, then SIGKILL after `killGraceMs`.
 */

export interface ProcessSpec {
  readonly cmd: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed; without it stdin is /dev/null. */
  readonly stdin?: string;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  readonly onStdoutLine?: (line: string, truncated: boolean) => void;
  readonly onStderrLine?: (line: string, truncated: boolean) => void;
  /** Raw chunks, for logs that keep everything up to their own cap. */
  readonly onOutput?: (stream: 'stdout' | 'stderr', data: Buffer) => void;
  readonly maxLineBytes?: number;
  readonly keepTailBytes?: number;
  readonly killGraceMs?: number;
  /** Called once the child exists, with its pid (which is also its process group id). */
  readonly onSpawn?: (pid: number) => void;
}

export interface ProcessResult {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** errno code when the program could not be started at all (ENOENT, EACCES, ...). */
  readonly spawnError: string | null;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  readonly stdoutTail: string;
  readonly stderrTail: string;
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
  readonly durationMs: number;
}

/** Process groups of children still running, for a forced exit that cannot wait (second Ctrl-C). */
const liveGroups = new Set<number>();

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

const DEFAULT_MAX_LINE = 1024 * 1024;
const DEFAULT_TAIL = 64 * 1024;
const DEFAULT_GRACE = 1000;
/** After the child exits, how long its stdio may stay open (held by a leftover grandchild). */
const STDIO_DRAIN_MS = 2000;

export function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const started = Date.now();
    const maxLine = spec.maxLineBytes ?? DEFAULT_MAX_LINE;
    const grace = spec.killGraceMs ?? DEFAULT_GRACE;
    const stdoutTail = new TailBuffer(spec.keepTailBytes ?? DEFAULT_TAIL);
    const stderrTail = new TailBuffer(spec.keepTailBytes ?? DEFAULT_TAIL);
    const stdoutLines = spec.onStdoutLine ? new LineSplitter(maxLine, spec.onStdoutLine) : null;
    const stderrLines = spec.onStderrLine ? new LineSplitter(maxLine, spec.onStderrLine) : null;
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let killing: Promise<void> | null = null;
    const timers: NodeJS.Timeout[] = [];

    if (spec.signal?.aborted) {
      resolve(result({ exitCode: null, signal: null, spawnError: null, aborted: true }));
      return;
    }

    const child = spawn(spec.cmd, [...spec.args], {
      cwd: spec.cwd,
      env: spec.env,
      detached: true, // own process group, so the whole group can be signalled
      stdio: [spec.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      shell: false,
      windowsHide: true,
    });
    const pgid = child.pid;
    if (pgid !== undefined) liveGroups.add(pgid);
    const watch = pgid !== undefined ? new TreeWatch(pgid) : null;
    if (pgid !== undefined) spec.onSpawn?.(pgid);

    function result(
      partial: Pick<ProcessResult, 'exitCode' | 'signal' | 'spawnError' | 'aborted'>,
    ): ProcessResult {
      return {
        ...partial,
        timedOut,
        stdoutTail: stdoutTail.text(),
        stderrTail: stderrTail.text(),
        stdoutBytes: stdoutTail.total,
        stderrBytes: stderrTail.total,
        durationMs: Date.now() - started,
      };
    }

    function finish(partial: Pick<ProcessResult, 'exitCode' | 'signal' | 'spawnError'>): void {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      spec.signal?.removeEventListener('abort', onAbort);
      stdoutLines?.end();
      stderrLines?.end();
      // Resolve only once the kill sequence is over: nothing of the child may outlive the call.
      // A descendant that left the group (setsid) is ended too before the call returns.
      if (watch && watch.survivors().length > 0) void terminate();
      void (killing ?? Promise.resolve()).then(() => {
        watch?.stop();
        if (pgid !== undefined) liveGroups.delete(pgid);
        resolve(result({ ...partial, aborted }));
      });
    }

    function terminate(): Promise<void> {
      killing ??= (async () => {
        if (pgid === undefined) return;
        // Remember the tree now: once the child dies its orphans are re-parented out of reach.
        watch?.sample();
        const known = [...new Set([...(watch?.survivors() ?? []), ...descendantsOf(pgid)])];
        signalTree(pgid, known, 'SIGTERM');
        const deadline = Date.now() + grace;
        while (Date.now() < deadline) {
          if (
            exit !== null &&
            !groupHasMembers(pgid) &&
            (watch?.survivors().length ?? 0) === 0 &&
            known.every((pid) => !alive(pid))
          )
            return;
          await delay(25);
        }
        signalTree(pgid, [...known, ...(watch?.survivors() ?? []), ...descendantsOf(pgid)], 'SIGKILL');
      })();
      return killing;
    }

    function onAbort(): void {
      aborted = true;
      void terminate();
    }

    child.stdout?.on('data', (data: Buffer) => {
      stdoutTail.push(data);
      stdoutLines?.push(data);
      spec.onOutput?.('stdout', data);
    });
    child.stderr?.on('data', (data: Buffer) => {
      stderrTail.push(data);
      stderrLines?.push(data);
      spec.onOutput?.('stderr', data);
    });
    if (child.stdin) {
      child.stdin.on('error', () => undefined); // the child may exit without reading: EPIPE is fine
      child.stdin.end(spec.stdin);
    }

    child.on('error', (error: NodeJS.ErrnoException) => {
      finish({ exitCode: null, signal: null, spawnError: error.code ?? error.message });
    });

    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Leftovers in the group (a backgrounded `sleep &`) must not outlive the call, and they may
      // hold our pipes open: end them, then stop waiting for the pipes after a short drain.
      if (pgid !== undefined && (groupHasMembers(pgid) || (watch?.survivors().length ?? 0) > 0))
        void terminate();
      timers.push(
        setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish({ exitCode: code, signal, spawnError: null });
        }, grace + STDIO_DRAIN_MS),
      );
    });

    child.on('close', (code, signal) => {
      finish({ exitCode: exit?.code ?? code, signal: exit?.signal ?? signal, spawnError: null });
    });

    if (spec.timeoutMs !== undefined) {
      timers.push(
        setTimeout(() => {
          timedOut = true;
          void terminate();
        }, spec.timeoutMs),
      );
    }
    spec.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A one-line description of how a process ended, for reports. */
export function describeEnd(r: ProcessResult): string {
  if (r.spawnError) return `could not start (${r.spawnError})`;
  if (r.timedOut) return `timed out after ${r.durationMs} ms and was killed`;
  if (r.aborted) return 'interrupted and killed';
  if (r.signal) return `killed by ${r.signal}`;
  return `exited with code ${r.exitCode}`;
}
