import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { freshState } from '../../source/engine/protocol/state.js';
import { buildReport, newTickRecord } from '../../source/engine/tick/tick-record.js';
import { renderReportMd } from '../../source/engine/workspace/render-report-md.js';
import { REPO_ROOT } from '../support/project.js';

const start = new Date('2026-11-22T10:00:00Z');

function sampleReport(mutate: (r: ReturnType<typeof newTickRecord>) => void = () => undefined) {
  const record = newTickRecord('20261122T100000Z-abcdef', start);
  record.code = 'STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED';
  record.detail = 'outside allowed globs: package.json';
  record.baseCommit = 'a'.repeat(40);
  record.headCommit = 'a'.repeat(40);
  mutate(record);
  return buildReport(record, new Date('2026-11-22T10:00:02Z'), freshState(start), 'relais/REPORT.md');
}

describe('REPORT.md rendering (seed 000 §6)', () => {
  it('is byte-identical for the same JSON, even across time zones and processes', () => {
    const report = sampleReport();
    const here = renderReportMd(report, 6000);
    expect(renderReportMd(JSON.parse(JSON.stringify(report)), 6000)).toBe(here);
    const script = `import('${REPO_ROOT}/dist/engine/workspace/render-report-md.js').then((m) => process.stdout.write(m.renderReportMd(JSON.parse(process.argv[1]), 6000)))`;
    const other = spawnSync(process.execPath, ['-e', script, JSON.stringify(report)], {
      env: { ...process.env, TZ: 'Pacific/Auckland', LANG: 'fr_FR.UTF-8' },
      encoding: 'utf8',
    });
    expect(other.stdout).toBe(here);
    expect(here).toContain('- Verdict: **STOP** (STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED)');
    expect(here).toContain('- Remediation: The builder touched paths outside the allowed globs');
  });

  it('is capped at max_chars and says so', () => {
    const report = sampleReport((r) => {
      r.notes = Array.from({ length: 50 }, (_, i) => `note ${i} ${'x'.repeat(300)}`);
    });
    const md = renderReportMd(report, 1000);
    expect(md.length).toBeLessThanOrEqual(1000);
    expect(md).toContain('(truncated; REPORT.json holds everything)');
  });

  it('escapes control characters from model and git text so they cannot drive the terminal', () => {
    const report = sampleReport((r) => {
      r.detail = 'evil \u001b[2J\u001b]0;pwned\u0007 text';
    });
    const md = renderReportMd(report, 6000);
    expect(md.includes(String.fromCharCode(27))).toBe(false);
    expect(md).toContain('\\u001b[2J');
  });
});
