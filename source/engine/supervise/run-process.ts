import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { bwrapArgs, sandboxEnv } from '../sandbox/bwrap-args.js';
import type { SandboxPolicy } from '../sandbox/policy.js';
import { makeScratch, removeScratch, type Scratch } from '../sandbox/scratch.js';
import { LineSplitter, TailBuffer } from './line-splitter.js';
import { liveGroups } from './live-groups.js';
import {
  descendantsOf,
  groupHasMembers,
  isAlive,
  PROCESS_MARK_VAR,
  processesMarked,
  runnerMark,
  signalEach,
  signalTree,
  TreeWatch,
} from './process-tree.js';

/**
 * The one way Relais starts a child process (docs/ARCHITECTURE.md, style rule 4), on execa: argv only (never a
 * shell), bounded memory whatever the child prints, and a promise that never rejects. Timeout and
 * abort go through execa's cancelSignal and forceKillAfterDelay (SIGTERM, then SIGKILL after
 * `killGraceMs`). With a sandbox policy the process runs inside bwrap, and ending bwrap ends the
 * whole sandbox (its PID namespace dies with it); without one, the whole process tree is ended.
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
  /**
   * Called once the child exists, with its pid (which is also its process group id). In a
   * sandbox this is bwrap's pid: killing it ends every process of the sandbox.
   */
  readonly onSpawn?: (pid: number) => void;
  /** Run inside this OS sandbox (sandbox/), or unsandboxed when absent. */
  readonly sandbox?: SandboxPolicy;
  /**
   * `cmd` is a bwrap that gives what it runs a PID namespace of its own and dies with its parent
   * (the sandbox probe, sandbox.ts): supervised as a sandboxed call is, by ending bwrap, with no
   * process tree to watch.
   */
  readonly ownPidNamespace?: boolean;
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

const DEFAULT_MAX_LINE = 1024 * 1024;
const DEFAULT_TAIL = 64 * 1024;
const DEFAULT_GRACE = 1000;
/** After the child exits, how long its stdio may stay open (held by a leftover grandchild). */
const STDIO_DRAIN_MS = 2000;

/** bwrap's own message when the program inside cannot be started: the same ENOENT as unsandboxed. */
const BWRAP_EXEC_FAILED = /^bwrap: execvp [^\n]*: No such file or directory$/m;

export async function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const started = Date.now();
  const stdoutTail = new TailBuffer(spec.keepTailBytes ?? DEFAULT_TAIL);
  const stderrTail = new TailBuffer(spec.keepTailBytes ?? DEFAULT_TAIL);
  const base = (
    partial: Omit<ProcessResult, 'stdoutTail' | 'stderrTail' | 'stdoutBytes' | 'stderrBytes' | 'durationMs'>,
  ): ProcessResult => ({
    ...partial,
    stdoutTail: stdoutTail.text(),
    stderrTail: stderrTail.text(),
    stdoutBytes: stdoutTail.total,
    stderrBytes: stderrTail.total,
    durationMs: Date.now() - started,
  });
  if (spec.signal?.aborted)
    return base({ exitCode: null, signal: null, spawnError: null, timedOut: false, aborted: true });
  let scratch: Scratch | null = null;
  try {
    scratch = spec.sandbox ? makeScratch(spec.sandbox) : null;
    return await supervise(spec, scratch?.dir ?? null, { stdoutTail, stderrTail }, base);
  } catch (error) {
    // Never rejects: whatever went wrong before the child existed is a value.
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return base({ exitCode: null, signal: null, spawnError: code, timedOut: false, aborted: false });
  } finally {
    if (scratch) removeScratch(scratch);
  }
}

async function supervise(
  spec: ProcessSpec,
  scratch: string | null,
  tails: { stdoutTail: TailBuffer; stderrTail: TailBuffer },
  base: (
    partial: Omit<ProcessResult, 'stdoutTail' | 'stderrTail' | 'stdoutBytes' | 'stderrBytes' | 'durationMs'>,
  ) => ProcessResult,
): Promise<ProcessResult> {
  const maxLine = spec.maxLineBytes ?? DEFAULT_MAX_LINE;
  const grace = spec.killGraceMs ?? DEFAULT_GRACE;
  // Our own splitter, not execa's `lines`: execa holds a whole line in memory, and a 50 MB line
  // must cost at most maxLineBytes.
  const stdoutLines = spec.onStdoutLine ? new LineSplitter(maxLine, spec.onStdoutLine) : null;
  const stderrLines = spec.onStderrLine ? new LineSplitter(maxLine, spec.onStderrLine) : null;
  const deadline = spec.timeoutMs !== undefined ? AbortSignal.timeout(spec.timeoutMs) : null;
  const cancel = AbortSignal.any(
    [spec.signal, deadline].filter((s): s is AbortSignal => s !== null && s !== undefined),
  );
  let timedOut = false;
  let aborted = false;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  const policy = spec.sandbox;
  // bwrap, with or without a policy: everything the child starts lives in its PID namespace.
  const namespaced = policy !== undefined || spec.ownPidNamespace === true;
  // Every process the child starts inherits it: unsandboxed, a daemon is found at the end; in
  // both cases a crash recovery finds whatever a killed runner left alive (the sandbox's PID
  // namespace should already have ended it, but its init can miss the parent's death).
  const mark = `${runnerMark()}-${randomUUID()}`;
  // Loaded on the first spawn, not at import: execa is ~140 modules, and commands that start no
  // process (`relais status`) import this file through the front door all the same (issue 17).
  const { execa } = await import('execa');
  const subprocess = execa(
    policy && scratch ? policy.bwrap : spec.cmd,
    policy && scratch ? [...bwrapArgs(policy, scratch, spec.cwd), spec.cmd, ...spec.args] : [...spec.args],
    {
      cwd: spec.cwd,
      env: {
        ...(policy && scratch ? sandboxEnv(spec.env, scratch, policy.dropEnv) : spec.env),
        [PROCESS_MARK_VAR]: mark,
      },
      extendEnv: false,
      ...(spec.stdin === undefined ? { stdin: 'ignore' as const } : { input: spec.stdin }),
      stdout: 'pipe',
      stderr: 'pipe',
      buffer: false,
      reject: false,
      cancelSignal: cancel,
      forceKillAfterDelay: grace,
      killSignal: 'SIGTERM',
      // Own process group, so an unsandboxed tree can be signalled as one and a Ctrl-C on the
      // terminal reaches the runner, not the agent. (execa's `cleanup` does not apply to a
      // detached child: --die-with-parent and killAllChildrenNow cover the runner's exit.)
      detached: true,
      windowsHide: true,
    },
  );
  const pid = subprocess.pid;
  // execa signals only its direct child: an unsandboxed tool's grandchildren in groups of their
  // own (setsid) are found through /proc and ended with it. In a sandbox, bwrap is that child.
  const watch = pid !== undefined && !namespaced ? new TreeWatch(pid, mark) : null;
  if (pid !== undefined) {
    liveGroups.add(pid);
    spec.onSpawn?.(pid);
  }

  let killing: Promise<void> | null = null;
  const terminateTree = (): Promise<void> => {
    killing ??=
      pid === undefined || namespaced ? Promise.resolve() : endTree(pid, watch, grace, () => exit !== null);
    return killing;
  };
  const onCancel = () => {
    timedOut = deadline?.aborted === true && spec.signal?.aborted !== true;
    aborted = !timedOut;
    void terminateTree();
  };
  cancel.addEventListener('abort', onCancel, { once: true });

  subprocess.stdout?.on('data', (data: Buffer) => {
    tails.stdoutTail.push(data);
    stdoutLines?.push(data);
    spec.onOutput?.('stdout', data);
  });
  subprocess.stderr?.on('data', (data: Buffer) => {
    tails.stderrTail.push(data);
    stderrLines?.push(data);
    spec.onOutput?.('stderr', data);
  });
  let drain: NodeJS.Timeout | null = null;
  subprocess.on('exit', (code, signal) => {
    exit = { code, signal };
    watch?.sweep();
    // Leftovers (a backgrounded `sleep &`) must not outlive the call, and they may hold our pipes
    // open: end them, then stop waiting for the pipes after a short drain.
    if (pid !== undefined && !namespaced && (groupHasMembers(pid) || (watch?.survivors().length ?? 0) > 0))
      void terminateTree();
    drain = setTimeout(() => {
      subprocess.stdout?.destroy();
      subprocess.stderr?.destroy();
    }, grace + STDIO_DRAIN_MS);
  });

  const result = await subprocess;
  cancel.removeEventListener('abort', onCancel);
  if (drain) clearTimeout(drain);
  stdoutLines?.end();
  stderrLines?.end();
  // Resolve only once the kill sequence is over: nothing of the child may outlive the call.
  watch?.sweep();
  if (watch && watch.survivors().length > 0) void terminateTree();
  await (killing ?? Promise.resolve());
  if (namespaced) await endSandboxLeftovers(mark);
  watch?.stop();
  if (pid !== undefined) liveGroups.delete(pid);

  return base(
    howItEnded(
      pid === undefined ? null : exit,
      result,
      { timedOut, aborted },
      policy !== undefined && BWRAP_EXEC_FAILED.test(tails.stderrTail.text()),
    ),
  );
}

/**
 * bwrap's PID namespace ends with its init, and the init dies with bwrap (`--die-with-parent`)...
 * unless bwrap was killed before its init had armed that, right after the start (a cancel at
 * once; seen in the suite: the init and its agent lived on, re-parented to the host's init). Every
 * process of the sandbox carries this call's mark, the init too (a fork of bwrap): SIGKILL them,
 * which ends the namespace, and wait until they are gone.
 *
 * Also after a clean exit: bwrap returns as soon as its init reports the command's status, and
 * the init (with whatever the command left running) dies a moment later, when --die-with-parent's
 * signal arrives (a review saw a setsid daemon still writing up to 1.3 ms after bwrap's exit, in
 * 18 of 30 runs). One /proc scan of every process's environment (issue 17: with 760 processes on
 * the machine, 8 ms).
 */
async function endSandboxLeftovers(mark: string): Promise<void> {
  const left = processesMarked(mark);
  if (left.length === 0) return;
  signalEach(left, 'SIGKILL');
  for (let i = 0; i < 200 && left.some(isAlive); i++) await delay(10);
}

type Ending = Pick<ProcessResult, 'exitCode' | 'signal' | 'spawnError' | 'timedOut' | 'aborted'>;

/**
 * The child's real exit (its 'exit' event: execa reports the signal it sent, not the one that
 * ended the child), or why it never started.
 */
function howItEnded(
  exit: { code: number | null; signal: NodeJS.Signals | null } | null,
  result: { code?: string; exitCode?: number; signal?: string },
  cancelled: { timedOut: boolean; aborted: boolean },
  bwrapCouldNotExec: boolean,
): Ending {
  if (exit === null && result.exitCode === undefined && result.signal === undefined)
    return {
      exitCode: null,
      signal: null,
      spawnError: result.code ?? 'spawn failed',
      timedOut: false,
      aborted: false,
    };
  const exitCode = exit?.code ?? result.exitCode ?? null;
  if (exitCode === 1 && bwrapCouldNotExec)
    return { exitCode: null, signal: null, spawnError: 'ENOENT', ...cancelled };
  const signal = exit?.signal ?? (result.signal as NodeJS.Signals | undefined) ?? null;
  return { exitCode, signal, spawnError: null, ...cancelled };
}

/**
 * Ends an unsandboxed child's whole tree: SIGTERM to its group and every descendant seen, then
 * SIGKILL to whatever is left after `grace`.
 */
async function endTree(
  pgid: number,
  watch: TreeWatch | null,
  grace: number,
  exited: () => boolean,
): Promise<void> {
  // Remember the tree now: once the child dies its orphans are re-parented out of reach.
  watch?.sweep();
  const known = [...new Set([...(watch?.survivors() ?? []), ...descendantsOf(pgid)])];
  signalTree(pgid, known, 'SIGTERM');
  const deadline = Date.now() + grace;
  while (Date.now() < deadline) {
    if (
      exited() &&
      !groupHasMembers(pgid) &&
      (watch?.survivors().length ?? 0) === 0 &&
      known.every((p) => !isAlive(p))
    )
      return;
    await delay(25);
  }
  signalTree(pgid, [...known, ...(watch?.survivors() ?? []), ...descendantsOf(pgid)], 'SIGKILL');
}

/** A one-line description of how a process ended, for reports. */
export function describeEnd(r: ProcessResult): string {
  if (r.spawnError) return `could not start (${r.spawnError})`;
  if (r.timedOut) return `timed out after ${r.durationMs} ms and was killed`;
  if (r.aborted) return 'interrupted and killed';
  if (r.signal) return `killed by ${r.signal}`;
  return `exited with code ${r.exitCode}`;
}
