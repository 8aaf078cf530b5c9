import { spendWithHeld } from '../protocol/money.js';
import type { Report } from '../protocol/report.js';
import { printable } from './printable.js';

/**
 * REPORT.md is a pure function of REPORT.json (seed 000 §6): no clock, no environment, no file
 * reads, so the same JSON always renders to byte-identical markdown. Capped at `maxChars`.
 */
export function renderReportMd(report: Report, maxChars: number): string {
  const sections = [
    header(report),
    taskSection(report),
    blastSection(report),
    scopeSection(report),
    verificationSection(report),
    agentsSection(report),
    budgetSection(report),
    outcomeSection(report),
  ];
  return capText(`${sections.filter((s) => s.length > 0).join('\n\n')}\n`, maxChars);
}

const TRUNCATION_NOTE = '\n… (truncated; REPORT.json holds everything)\n';

export function capText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const room = Math.max(0, maxChars - TRUNCATION_NOTE.length);
  const cut = text.slice(0, room);
  const lastBreak = cut.lastIndexOf('\n');
  return `${lastBreak > 0 ? cut.slice(0, lastBreak) : cut}${TRUNCATION_NOTE}`;
}

function header(r: Report): string {
  const lines = [
    `# Relais report ${r.run_id}`,
    '',
    `- Verdict: **${r.verdict.toUpperCase()}** (${r.code})`,
    `- Blast radius: ${r.blast_radius_line}`,
    `- Sandbox: ${sandboxLine(r.sandbox)}`,
    `- Remediation: ${text(r.remediation)}`,
  ];
  if (r.detail) lines.push(`- Detail: ${text(r.detail)}`);
  lines.push(`- Base: ${r.base_commit ?? '(none)'} → head: ${r.head_commit ?? '(none)'}`);
  lines.push(`- Started ${r.started_at}, ended ${r.ended_at} (${r.duration_ms} ms)`);
  return lines.join('\n');
}

function taskSection(r: Report): string {
  if (!r.task) return '## Task\n\nNo task (the run ended before the orchestrator answered).';
  const t = r.task;
  const lines = [
    '## Task',
    '',
    `- ${code(t.task_id)} (${t.task_kind}) in milestone ${code(t.milestone_id)}`,
    `- Intent: ${text(t.intent)}`,
  ];
  if (t.question) {
    lines.push(`- Question for the human: ${text(t.question.prompt)}`);
    for (const choice of t.question.choices ?? []) lines.push(`  - ${text(choice)}`);
  }
  return lines.join('\n');
}

function blastSection(r: Report): string {
  const b = r.blast_radius;
  return [
    '## Blast radius',
    '',
    `${count(b.files_touched, 'file')} touched, +${b.lines_added}/-${b.lines_deleted} lines, ${count(b.new_files, 'new file')}.`,
    r.diff.diff_patch_path ? `Diff: ${code(r.diff.diff_patch_path)}` : 'Diff: (not kept)',
  ].join('\n');
}

function scopeSection(r: Report): string {
  const lines = ['## Scope', '', `Scope ${r.scope.ok ? 'respected' : 'VIOLATED'}.`];
  if (r.scope.violations.length > 0) {
    lines.push('', 'Violations:');
    for (const v of r.scope.violations) lines.push(`- ${text(v)}`);
  }
  if (r.scope.touched_paths.length > 0) {
    lines.push(
      '',
      `Touched paths (${r.scope.touched_paths.length}${r.scope.touched_paths_truncated ? '+, list truncated' : ''}):`,
    );
    for (const p of r.scope.touched_paths) lines.push(`- ${code(p)}`);
  }
  return lines.join('\n');
}

function verificationSection(r: Report): string {
  if (r.verification.runs.length === 0) return '## Verification\n\nNo verification ran.';
  const lines = [
    '## Verification',
    '',
    '| template | phase | command | exit | ms | timed out |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const run of r.verification.runs) {
    const command = [run.cmd, ...run.args].join(' ');
    lines.push(
      `| ${cell(run.template_id)} | ${run.phase} | ${cell(command)} | ${run.exit_code} | ${run.duration_ms} | ${run.timed_out ? 'yes' : 'no'} |`,
    );
  }
  if (r.verification.verify_log_path) lines.push('', `Log: ${code(r.verification.verify_log_path)}`);
  return lines.join('\n');
}

function agentsSection(r: Report): string {
  const line = (name: string, a: Report['agents']['orchestrator']) => {
    const parts = [`${a.calls} call${a.calls === 1 ? '' : 's'}`, `$${a.cost_usd.toFixed(4)}`];
    if (a.output_valid !== null) parts.push(`output ${a.output_valid ? 'valid' : 'INVALID'}`);
    let out = `- ${name}: ${parts.join(', ')}`;
    if (a.summary) out += `\n  - claimed: ${text(a.summary)}`;
    if (a.error) out += `\n  - error: ${text(a.error)}`;
    return out;
  };
  return [
    '## Agents',
    '',
    line('orchestrator', r.agents.orchestrator),
    line('builder', r.agents.builder),
  ].join('\n');
}

function budgetSection(r: Report): string {
  const b = r.budgets;
  const lines = [
    `## Budget (milestone ${b.milestone_id ? code(b.milestone_id) : 'none'})`,
    '',
    // Calls killed before they reported a cost are held at their maximum: said apart, not as spend.
    `ticks ${b.ticks}, orchestrator calls ${b.orchestrator_calls}, builder calls ${b.builder_calls}, verify runs ${b.verify_runs}, cost ${b.unreported_calls > 0 ? spendWithHeld(b.estimated_cost_usd, { usd: b.unreported_usd, calls: b.unreported_calls }) : `$${b.estimated_cost_usd.toFixed(4)}`}`,
  ];
  for (const w of b.warnings) lines.push(`- warning: ${text(w)}`);
  return lines.join('\n');
}

function outcomeSection(r: Report): string {
  const lines = ['## Outcome', ''];
  if (r.control)
    lines.push(
      `- Control decision: **${r.control.action}**${r.control.reason ? ` (${text(r.control.reason)})` : ''}; no builder ran.`,
    );
  if (r.commit) lines.push(`- Committed ${code(r.commit)}.`);
  if (r.rollback.performed) {
    // Issue 14: a rollback that did not finish is never called "rolled back".
    lines.push(
      r.rollback.clean === false
        ? `- Rollback to ${r.base_commit ?? 'base'} did NOT finish: the tree is not as it was (see below); the next run recovers or says what to do.`
        : `- Rolled back to ${r.base_commit ?? 'base'}; tree clean afterwards: ${r.rollback.clean === null ? 'unknown' : 'yes'}.`,
    );
  }
  for (const n of r.rollback.notes) lines.push(`- ${text(n)}`);
  if (lines.length === 2) lines.push('- Nothing to commit or roll back.');
  return lines.join('\n');
}

function text(value: string): string {
  return printable(value).replace(/\r?\n/g, ' ');
}

function code(value: string): string {
  const clean = text(value);
  const fence = clean.includes('`') ? '``' : '`';
  return `${fence}${clean}${fence}`;
}

function cell(value: string): string {
  return text(value).replace(/\|/g, '\\|');
}

/** Issue 14: an unprotected run says so in its report, every time. */
function sandboxLine(sandbox: Report['sandbox']): string {
  if (sandbox === 'bwrap') return "bubblewrap (own PID namespace; writes only in the task's paths)";
  if (sandbox === 'off')
    return '**OFF** (relais.config.json "sandbox": "off"): agents and verifications ran unprotected';
  if (sandbox === 'unavailable') return 'none available: nothing was run';
  return 'not chosen (the run stopped before any agent started)';
}

/** "1 file", "2 files": a count with its noun in the right number. */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
