import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineBus } from '../events.js';
import { blockedFileSchema } from '../protocol/blocked.js';
import { remediationOf } from '../protocol/codes.js';
import type { RelaisConfig } from '../protocol/config.js';
import { historyMetaSchema } from '../protocol/history-meta.js';
import { type Report, reportSchema } from '../protocol/report.js';
import { writeFileAtomic, writeJsonAtomic } from '../workspace/atomic-write.js';
import { packageVersion } from '../workspace/package-assets.js';
import type { WorkspacePaths } from '../workspace/paths.js';
import { renderReportMd } from '../workspace/render-report-md.js';

/**
 * REPORT (seed 000 §6, §14, Appendix A6). REPORT.json first (validated, atomic); REPORT.md is
 * rendered from it; then the history snapshot. If REPORT.json cannot be written the outcome is
 * STOP_INTERRUPTED with a best-effort BLOCKED.json; a REPORT.md failure is only logged.
 */

export type ReportWrite = { ok: true } | { ok: false; error: string };

export async function writeReportFiles(
  report: Report,
  paths: WorkspacePaths,
  config: RelaisConfig,
  bus: EngineBus,
): Promise<ReportWrite> {
  try {
    await writeJsonAtomic(paths.report, reportSchema, report);
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
  if (config.runner.render_report_md.enabled) {
    try {
      await writeFileAtomic(paths.reportMd, renderReportMd(report, config.runner.render_report_md.max_chars));
    } catch (error) {
      bus.emit({ type: 'log', level: 'warn', message: `REPORT.md not written: ${(error as Error).message}` });
    }
  }
  return { ok: true };
}

export async function writeHistorySnapshot(
  report: Report,
  historyDir: string,
  config: RelaisConfig,
  bus: EngineBus,
): Promise<void> {
  // The record's files (up to four), independent of each other: written side by side (each atomic
  // write waits on two fsyncs), and every write has ended before the tick reports.
  const noVerifyLog = config.history.include_verify_log && report.verification.verify_log_path === null;
  const files: (() => Promise<unknown>)[] = [
    ...(noVerifyLog
      ? [() => writeFileAtomic(join(historyDir, 'verify.log'), `no verification ran (${report.code})\n`)]
      : []),
    () => writeJsonAtomic(join(historyDir, 'report.json'), reportSchema, report),
    () =>
      writeFileAtomic(
        join(historyDir, 'report.md'),
        renderReportMd(report, config.runner.render_report_md.max_chars),
      ),
    () =>
      writeJsonAtomic(join(historyDir, 'meta.json'), historyMetaSchema, {
        run_id: report.run_id,
        started_at: report.started_at,
        ended_at: report.ended_at,
        verdict: report.verdict,
        code: report.code,
        base_commit: report.base_commit,
        head_commit: report.head_commit,
        relais_version: packageVersion(),
        node_version: process.version,
        max_rss_kb: process.resourceUsage().maxRSS,
      }),
  ];
  // A write that throws at once is a failure like any other (async: it becomes a rejection).
  const writes = await Promise.allSettled(files.map(async (write) => write()));
  const failed = writes.find((w): w is PromiseRejectedResult => w.status === 'rejected');
  // A6 row 2 spirit: history problems never change a finished tick's verdict.
  if (failed)
    bus.emit({
      type: 'log',
      level: 'warn',
      message: `history snapshot incomplete: ${(failed.reason as Error).message}`,
    });
}

/** BLOCKED.json carries the exact remediation; it is removed once a run is no longer blocked. */
export async function writeBlockedFile(
  paths: WorkspacePaths,
  report: Pick<Report, 'run_id' | 'code' | 'detail'>,
): Promise<void> {
  await writeJsonAtomic(paths.blocked, blockedFileSchema, {
    run_id: report.run_id,
    code: report.code,
    detail: report.detail ?? '',
    remediation: remediationOf(report.code),
    created_at: new Date().toISOString(),
  });
}

export async function clearBlockedFile(paths: WorkspacePaths): Promise<void> {
  await rm(paths.blocked, { force: true });
}

/** Last resort when REPORT.json cannot be written (A6 row 1): plain write, no validation needed. */
export async function writeWriteFailure(paths: WorkspacePaths, runId: string, error: string): Promise<void> {
  const body = {
    run_id: runId,
    code: 'STOP_INTERRUPTED',
    detail: `disk/write failure: REPORT.json could not be written (${error})`,
    remediation: remediationOf('STOP_INTERRUPTED'),
    created_at: new Date().toISOString(),
  };
  await writeFile(paths.blocked, `${JSON.stringify(body, null, 2)}\n`).catch(() => undefined);
}
