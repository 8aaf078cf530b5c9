import { appendFile } from 'node:fs/promises';
import type { EngineBus } from '../events.js';
import type { VerificationRun } from '../protocol/report.js';
import type { SandboxPolicy } from '../sandbox/policy.js';
import { sandboxRefusalIn } from '../sandbox/refusal.js';
import { TailBuffer } from '../supervise/line-splitter.js';
import { describeEnd, runProcess } from '../supervise/run-process.js';
import type { PlannedRun } from './plan.js';

/**
 * Runs planned verifications one after another (seed 000 §11, A5 rows 3-4): argv, no shell, each
 * with its own timeout, fast before slow, the first failure ends the sequence. Output goes to
 * verify.log, capped per run (the tail is kept: failures print last).
 */

export interface VerificationOutcome {
  readonly runs: VerificationRun[];
  readonly failedPhase: 'fast' | 'slow' | null;
  readonly aborted: boolean;
  /**
   * When the failed command's own output shows a write the sandbox refused (a cache outside its
   * task's paths, say): that line, so the failure says what to change. Null otherwise.
   */
  readonly refused?: string | null;
}

/** The hint a failure refused by the sandbox carries: where a check may be let write. */
export function refusedWriteHint(refused: string | null | undefined): string {
  if (!refused) return '';
  return `; the sandbox refused one of its writes ("${refused}"): a check writes only its task's paths, so if it must write there (a cache), add that folder to sandbox.verification_writable in relais.config.json`;
}

export async function runVerifications(
  planned: readonly PlannedRun[],
  options: {
    /** Called before each run, so the run is counted even if the runner dies during it. */
    onRunStart?: () => Promise<void>;
    cwd: string;
    logPath: string | null;
    maxLogBytes: number;
    bus: EngineBus;
    signal: AbortSignal;
    env: NodeJS.ProcessEnv;
    /** The OS sandbox every command runs in (issue 14); unsandboxed only when the config says "off". */
    sandbox: SandboxPolicy | undefined;
    /** Each command's sandbox (or process group), as it starts: crash recovery ends it. */
    onSpawn?: (pid: number) => Promise<void>;
  },
): Promise<VerificationOutcome> {
  const runs: VerificationRun[] = [];
  for (const plan of planned) {
    if (options.signal.aborted) return { runs, failedPhase: null, aborted: true };
    await options.onRunStart?.();
    options.bus.emit({
      type: 'verify.started',
      template_id: plan.templateId,
      phase: plan.phase,
      cmd: plan.cmd,
      args: plan.args,
    });
    const log = new TailBuffer(options.maxLogBytes);
    let recorded: Promise<void> | undefined;
    const result = await runProcess({
      cmd: plan.cmd,
      args: plan.args,
      cwd: options.cwd,
      env: options.env,
      timeoutMs: plan.timeoutSeconds * 1000,
      signal: options.signal,
      onOutput: (_stream, data) => log.push(data),
      keepTailBytes: 0,
      sandbox: options.sandbox,
      onSpawn: (pid) => {
        recorded = options.onSpawn?.(pid).catch(() => undefined);
      },
    });
    // The record's write is over before the next step compares the workspace.
    await recorded;
    const run: VerificationRun = {
      template_id: plan.templateId,
      phase: plan.phase,
      cmd: plan.cmd.slice(0, 120),
      args: plan.args.slice(0, 40).map((a) => a.slice(0, 200)),
      exit_code: result.exitCode === null ? -1 : Math.min(255, Math.max(-1, result.exitCode)),
      duration_ms: result.durationMs,
      timed_out: result.timedOut,
    };
    runs.push(run);
    if (options.logPath) await appendFile(options.logPath, logEntry(plan, result, log));
    options.bus.emit({ type: 'verify.finished', ...run, summary: describeEnd(result) });
    if (result.aborted) return { runs, failedPhase: null, aborted: true };
    if (result.exitCode !== 0 || result.timedOut)
      return {
        runs,
        failedPhase: plan.phase,
        aborted: false,
        refused: options.sandbox ? sandboxRefusalIn(log.text(), options.sandbox.writable) : null,
      };
  }
  return { runs, failedPhase: null, aborted: false };
}

function logEntry(plan: PlannedRun, result: Awaited<ReturnType<typeof runProcess>>, log: TailBuffer): string {
  const dropped = log.total - Buffer.byteLength(log.text());
  return [
    `=== ${plan.templateId} (${plan.phase}): ${JSON.stringify([plan.cmd, ...plan.args])}`,
    dropped > 0 ? `[first ${dropped} bytes dropped; last ${log.total - dropped} kept]` : '',
    log.text(),
    `=== ${plan.templateId}: ${describeEnd(result)} in ${result.durationMs} ms`,
    '',
  ]
    .filter((line, i) => i !== 1 || line !== '')
    .join('\n');
}
