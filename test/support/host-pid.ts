import { readdirSync, readFileSync } from 'node:fs';
import { waitUntilDeadSync } from '../../source/engine/supervise/process-tree.js';

/**
 * Finding a fake agent's processes from the host. Inside the sandbox's PID namespace the pid a
 * fake writes to `<scenario>.<role>.pid` means nothing to the host (it is 2, 3...): killing or
 * probing it from here would hit an unrelated host process. The host's /proc shows each
 * process's pid in every namespace (`NSpid:` in its status, host first, innermost last), and
 * every process of a test project (the runner, its agents, verifications, whatever they start)
 * inherits RELAIS_FAKE_SCENARIO, unique per project: that marker finds them all. Unsandboxed,
 * NSpid holds the host pid alone and the same lookups work.
 */

interface Marked {
  readonly pid: number;
  /** Its pid in the innermost PID namespace (the one it sees itself). */
  readonly innerPid: number;
}

function markedProcesses(scenarioPath: string): Marked[] {
  const marker = `RELAIS_FAKE_SCENARIO=${scenarioPath}\0`;
  const found: Marked[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/environ`, 'latin1').includes(marker)) continue;
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      if (/^State:\s+Z/m.test(status)) continue;
      const nspid = /^NSpid:\s+([\d\s]+)$/m.exec(status)?.[1]?.trim().split(/\s+/).map(Number) ?? [];
      found.push({ pid: Number(entry), innerPid: nspid.at(-1) ?? Number(entry) });
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** Host pid of the live process that wrote `<scenario>.<role>.pid`, or null when none is alive. */
export function hostPidOf(scenarioPath: string, role: string): number | null {
  const written = Number(readFileSync(`${scenarioPath}.${role}.pid`, 'utf8'));
  return markedProcesses(scenarioPath).find((p) => p.innerPid === written)?.pid ?? null;
}

/** hostPidOf, for a process the test knows is running: its absence fails the test. */
export function liveHostPidOf(scenarioPath: string, role: string): number {
  const pid = hostPidOf(scenarioPath, role);
  if (pid === null) throw new Error(`no live process wrote ${scenarioPath}.${role}.pid`);
  return pid;
}

/**
 * Host pids of every live process of the test project (runner, agents, verifications, leftovers),
 * or only those whose argv contains `argvPart`.
 */
export function liveProcessesOf(scenarioPath: string, argvPart?: string): number[] {
  return markedProcesses(scenarioPath)
    .filter((p) => argvPart === undefined || argvOf(p.pid).includes(argvPart))
    .map((p) => p.pid);
}

function argvOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Ends every process of the test project still alive (a test's own cleanup after a SIGKILL). */
export function killProcessesOf(scenarioPath: string): void {
  for (const pid of liveProcessesOf(scenarioPath)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/**
 * Live processes of the test project once the kernel had a moment to tear down a sandbox whose
 * bwrap just ended (its PID namespace dies with it, a few milliseconds later): bounded, not slept.
 */
export function survivorsOf(scenarioPath: string, maxMs = 5000): number[] {
  waitUntilDeadSync(liveProcessesOf(scenarioPath), maxMs);
  return liveProcessesOf(scenarioPath);
}
