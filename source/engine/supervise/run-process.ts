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
  const base = (partial: Ending): ProcessResult => ({
    ...partial,
    stdoutTail: stdoutTail.text(),
    stderrTail: stderrTail.text(),
    stdoutBytes: stdoutTail.total,
    stderrBytes: stderrTail.total,
    durationMs: Date.now() - started,
  });
  if (spec.signal?.aborted)
    return base({ exitCode: null, signal: null, spawnError: null, timedOut: false, aborted: true });
  const key = spec.stdin === undefined ? null : spawnKey(spec);
  const waiting = key === null ? null : prestarted.get(key);
  if (key !== null && waiting) prestarted.delete(key);
  let child: Child | null = null;
  try {
    child = (await waiting) ?? null;
    // One that ended while it waited (crashed, or was killed for what it printed), or waited too
    // long, is not this call's: the call starts its own, as it would have without a prestart.
    if (
      child !== null &&
      (child.spoiled ||
        child.exit !== null ||
        (child.pid !== undefined && !isAlive(child.pid)) ||
        Date.now() - child.startedAt > PRESTART_MAX_WAIT_MS)
    ) {
      await endUnadopted(child);
      child = null;
    }
    child ??= await startChild(spec, spec.stdin === undefined ? 'ignore' : { input: spec.stdin });
    return await supervise(spec, child, { stdoutTail, stderrTail }, base);
  } catch (error) {
    // Never rejects: whatever went wrong before the child existed is a value.
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return base({ exitCode: null, signal: null, spawnError: code, timedOut: false, aborted: false });
  } finally {
    if (child?.scratch) removeScratch(child.scratch);
  }
}

/** What starting a child depends on, its input aside: a prestarted child is matched on all of it. */
export type SpawnSpec = Pick<
  ProcessSpec,
  'cmd' | 'args' | 'cwd' | 'env' | 'sandbox' | 'killGraceMs' | 'ownPidNamespace'
>;

/**
 * Children started before their input was known, by spawnKey: each is adopted at most once. Set
 * before the spawn is awaited, so a call that comes while it is under way waits for it.
 */
const prestarted = new Map<string, Promise<Child | null>>();

function spawnKey(spec: SpawnSpec): string {
  const env = Object.entries(spec.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([
    spec.cmd,
    spec.args,
    spec.cwd,
    env,
    spec.sandbox ?? null,
    spec.killGraceMs ?? null,
    spec.ownPidNamespace === true,
  ]);
}

/**
 * Starts now the child a later `runProcess` with the same spawn spec and an input will run, with
 * its stdin held open (issue 17: an agent CLI loads itself while the runner still prepares the
 * prompt). Nothing reaches it until that call adopts it and writes the input; a spec that differs
 * in anything starts its own child, and the returned handle's `discard` ends it if no call did.
 * Best effort: a child that cannot be started here is simply not waiting.
 */
export async function prestartProcess(spec: SpawnSpec): Promise<Prestarted | null> {
  const key = spawnKey(spec);
  if (prestarted.has(key)) return null;
  // The real call will start its own child, and report why it could not.
  const waiting = startChild(spec, 'pipe').catch(() => null);
  prestarted.set(key, waiting);
  const child = await waiting;
  // Its end, once this handle (or its timer) began it: a later discard waits for the same end.
  let ending: Promise<void> | null = null;
  const discard = (): Promise<void> => {
    clearTimeout(expiry);
    if (ending) return ending;
    // Adopted meanwhile (the call took it out), or another prestart's: not this handle's to end.
    if (prestarted.get(key) !== waiting) return Promise.resolve();
    prestarted.delete(key);
    ending = child ? endUnadopted(child) : Promise.resolve();
    return ending;
  };
  // No call adopts it past PRESTART_MAX_WAIT_MS (runProcess): ended then, not at its tick's end,
  // before Claude Code stops waiting for its stdin and runs without a prompt.
  const expiry = setTimeout(() => void discard().catch(() => undefined), PRESTART_MAX_WAIT_MS);
  expiry.unref();
  return {
    pid: child?.pid,
    ended: child ? child.subprocess.then(() => undefined) : Promise.resolve(),
    discard,
  };
}

/** A prestarted child: only its own handle ends it, so two ticks of one process never end each other's. */
export interface Prestarted {
  readonly pid: number | undefined;
  /** Settles once the child has exited and its output is closed, adopted or not. */
  readonly ended: Promise<void>;
  /** Kills the child at once if no call adopted it, and waits until all of it is gone. */
  discard(): Promise<void>;
}

/**
 * How long a prestarted child may wait for its call. Claude Code gives up on a stdin that stays
 * silent for 3 s and runs without a prompt ("no stdin data received in 3s, proceeding without
 * it"), so an older one is ended unused and the call starts its own.
 */
const PRESTART_MAX_WAIT_MS = 2000;

/** What a prestarted child may print before its call: more, and it is ended unused. */
const EARLY_OUTPUT_CAP = 1024 * 1024;

/**
 * Ends a child no call adopted, at once and whole. No SIGTERM first: it has nothing to finish, and
 * a graceful end gives it time to read the EOF its stdin shows once bwrap is gone and to run with
 * an empty prompt (bwrap killed before its init armed --die-with-parent leaves the agent alive).
 * So every process with the call's mark is killed before bwrap itself, until none is left.
 */
async function endUnadopted(child: Child): Promise<void> {
  if (child.namespaced && child.pid !== undefined && child.exit === null) {
    // A stopped bwrap starts nothing more, and its children (the sandbox's init) are killed before
    // it can die and close their stdin: the init may not yet carry the mark a scan would find.
    signalEach([child.pid], 'SIGSTOP');
    signalEach(descendantsOf(child.pid), 'SIGKILL');
  } else if (child.pid !== undefined && child.exit === null) {
    // Stopped whole first: a shell whose child is killed before it would run its next line.
    signalTree(child.pid, descendantsOf(child.pid), 'SIGSTOP');
  }
  for (let round = 0; round < 50; round++) {
    const marked = processesMarked(child.mark).filter((pid) => pid !== child.pid);
    signalEach(marked, 'SIGKILL');
    if (child.pid !== undefined && child.exit === null) {
      if (child.namespaced) signalEach([child.pid], 'SIGKILL');
      else signalTree(child.pid, descendantsOf(child.pid), 'SIGKILL');
    }
    // A killed process leaves the list (its environment can no longer be read).
    if (processesMarked(child.mark).length === 0) break;
    await delay(10);
  }
  await child.subprocess;
  await child.finish();
  if (child.scratch) removeScratch(child.scratch);
}

type Output = (stream: 'stdout' | 'stderr', data: Buffer) => void;

/** A started child: its exit and output are kept until a supervisor takes them. */
interface Child {
  readonly subprocess: ResultPromise;
  readonly pid: number | undefined;
  readonly namespaced: boolean;
  readonly scratch: Scratch | null;
  /** execa's cancelSignal: aborting it sends SIGTERM, then SIGKILL after the grace. */
  readonly cancel: AbortController;
  /** In the environment of every process it starts (process-tree.ts PROCESS_MARK_VAR). */
  readonly mark: string;
  /** When it was started (Date.now()): a prestarted child waits at most PRESTART_MAX_WAIT_MS. */
  readonly startedAt: number;
  /** Started with its stdin held open (prestarted): the supervisor writes the input. */
  readonly awaitsInput: boolean;
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** Killed before any call adopted it (it printed past the cap): never adopted. */
  spoiled: boolean;
  /** Where output goes: kept in `early` until a supervisor replaces it. */
  output: Output;
  readonly early: Array<['stdout' | 'stderr', Buffer]>;
  terminateTree(): Promise<void>;
  /** After the child's promise settled: whatever it left is ended, and it is no longer tracked. */
  finish(): Promise<void>;
}

type ResultPromise = ReturnType<typeof import('execa').execa>;

async function startChild(spec: SpawnSpec, stdin: 'ignore' | 'pipe' | { input: string }): Promise<Child> {
  const grace = spec.killGraceMs ?? DEFAULT_GRACE;
  const policy = spec.sandbox;
  const scratch = policy ? makeScratch(policy) : null;
  // bwrap, with or without a policy: everything the child starts lives in its PID namespace.
  const namespaced = policy !== undefined || spec.ownPidNamespace === true;
  // Every process the child starts inherits it: unsandboxed, a daemon is found at the end; in
  // both cases a crash recovery finds whatever a killed runner left alive (the sandbox's PID
  // namespace should already have ended it, but its init can miss the parent's death).
  const mark = `${runnerMark()}-${randomUUID()}`;
  const cancel = new AbortController();
  let subprocess: ResultPromise;
  try {
    // Loaded on the first spawn, not at import: execa is ~140 modules, and commands that start no
    // process (`relais status`) import this file through the front door all the same (issue 17).
    const { execa } = await import('execa');
    subprocess = execa(
      policy && scratch ? policy.bwrap : spec.cmd,
      policy && scratch
        ? [...bwrapArgs(policy, scratch.dir, spec.cwd), spec.cmd, ...spec.args]
        : [...spec.args],
      {
        cwd: spec.cwd,
        env: {
          ...(policy && scratch ? sandboxEnv(spec.env, scratch.dir, policy.dropEnv) : spec.env),
          [PROCESS_MARK_VAR]: mark,
        },
        extendEnv: false,
        ...(typeof stdin === 'object' ? stdin : { stdin }),
        stdout: 'pipe',
        stderr: 'pipe',
        buffer: false,
        reject: false,
        cancelSignal: cancel.signal,
        forceKillAfterDelay: grace,
        killSignal: 'SIGTERM',
        // Own process group, so an unsandboxed tree can be signalled as one and a Ctrl-C on the
        // terminal reaches the runner, not the agent. (execa's `cleanup` does not apply to a
        // detached child: --die-with-parent and killAllChildrenNow cover the runner's exit.)
        detached: true,
        windowsHide: true,
      },
    );
  } catch (error) {
    if (scratch) removeScratch(scratch);
    throw error;
  }
  const pid = subprocess.pid;
  // execa signals only its direct child: an unsandboxed tool's grandchildren in groups of their
  // own (setsid) are found through /proc and ended with it. In a sandbox, bwrap is that child.
  const watch = pid !== undefined && !namespaced ? new TreeWatch(pid, mark) : null;
  if (pid !== undefined) liveGroups.add(pid);
  let killing: Promise<void> | null = null;
  let drain: NodeJS.Timeout | null = null;
  const early: Child['early'] = [];
  let earlyBytes = 0;
  const child: Child = {
    subprocess,
    pid,
    namespaced,
    scratch,
    cancel,
    mark,
    startedAt: Date.now(),
    awaitsInput: stdin === 'pipe',
    exit: null,
    // Kept, up to a cap, until a call adopts the child: past it the child is ended unused, so
    // memory stays bounded whatever it prints (the call then starts its own).
    output: (stream, data) => {
      earlyBytes += data.length;
      if (earlyBytes <= EARLY_OUTPUT_CAP) early.push([stream, data]);
      else if (!child.spoiled) {
        child.spoiled = true;
        early.length = 0;
        // Its own pid only while it has not exited: once reaped, the number may be another's.
        const own = pid !== undefined && child.exit === null ? [pid] : [];
        signalEach([...processesMarked(mark), ...own], 'SIGKILL');
      }
    },
    spoiled: false,
    early,
    terminateTree: () => {
      killing ??=
        pid === undefined || namespaced
          ? Promise.resolve()
          : endTree(pid, watch, grace, () => child.exit !== null);
      return killing;
    },
    finish: async () => {
      if (drain) clearTimeout(drain);
      // Resolve only once the kill sequence is over: nothing of the child may outlive the call.
      watch?.sweep();
      if (watch && watch.survivors().length > 0) void child.terminateTree();
      await (killing ?? Promise.resolve());
      if (namespaced) await endSandboxLeftovers(mark);
      watch?.stop();
      if (pid !== undefined) liveGroups.delete(pid);
    },
  };
  subprocess.stdout?.on('data', (data: Buffer) => child.output('stdout', data));
  subprocess.stderr?.on('data', (data: Buffer) => child.output('stderr', data));
  // A prestarted child that died before its input came: the write fails, its exit tells why.
  // (A fresh child's input is execa's to write, as before.)
  if (stdin === 'pipe') subprocess.stdin?.on('error', () => undefined);
  subprocess.on('exit', (code, signal) => {
    child.exit = { code, signal };
    watch?.sweep();
    // Leftovers (a backgrounded `sleep &`) must not outlive the call, and they may hold our pipes
    // open: end them, then stop waiting for the pipes after a short drain.
    if (pid !== undefined && !namespaced && (groupHasMembers(pid) || (watch?.survivors().length ?? 0) > 0))
      void child.terminateTree();
    drain = setTimeout(() => {
      subprocess.stdout?.destroy();
      subprocess.stderr?.destroy();
    }, grace + STDIO_DRAIN_MS);
  });
  return child;
}

async function supervise(
  spec: ProcessSpec,
  child: Child,
  tails: { stdoutTail: TailBuffer; stderrTail: TailBuffer },
  base: (partial: Ending) => ProcessResult,
): Promise<ProcessResult> {
  const maxLine = spec.maxLineBytes ?? DEFAULT_MAX_LINE;
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
  const { subprocess, pid } = child;
  if (pid !== undefined) spec.onSpawn?.(pid);
  const onCancel = () => {
    timedOut = deadline?.aborted === true && spec.signal?.aborted !== true;
    aborted = !timedOut;
    child.cancel.abort();
    void child.terminateTree();
  };
  if (cancel.aborted) onCancel();
  else cancel.addEventListener('abort', onCancel, { once: true });

  const output: Output = (stream, data) => {
    const tail = stream === 'stdout' ? tails.stdoutTail : tails.stderrTail;
    tail.push(data);
    (stream === 'stdout' ? stdoutLines : stderrLines)?.push(data);
    spec.onOutput?.(stream, data);
  };
  for (const [stream, data] of child.early.splice(0)) output(stream, data);
  child.output = output;
  // A prestarted child gets its input now; a fresh one was given it by execa.
  if (child.awaitsInput) subprocess.stdin?.end(spec.stdin ?? '');

  const result = await subprocess;
  cancel.removeEventListener('abort', onCancel);
  stdoutLines?.end();
  stderrLines?.end();
  await child.finish();

  return base(
    howItEnded(
      pid === undefined ? null : child.exit,
      result,
      { timedOut, aborted },
      spec.sandbox !== undefined && BWRAP_EXEC_FAILED.test(tails.stderrTail.text()),
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
