import type { StampedEvent } from '../../engine/events.js';
import { oneLine } from '../../engine/workspace/printable.js';
import { type CommandIo, println } from '../io.js';

/**
 * The plain front end: one timestamped line per meaningful event (seed 002 §9 style,
 * `[14:30:01] Phase: BUILD`), no escape codes, safe for logs and CI.
 */
export function plainReporter(io: CommandIo): (event: StampedEvent) => void {
  const out = (text: string, at: string) => println(io.stdout, `[${clock(at)}] ${text}`);
  return (event) => {
    const line = describe(event);
    if (line !== null) out(line, event.at);
  };
}

function describe(event: StampedEvent): string | null {
  switch (event.type) {
    case 'run.started':
      return `relais ${event.command} ${event.run_id} in ${event.project}`;
    case 'phase.changed':
      return `Phase: ${event.phase}`;
    case 'agent.started':
      return `${event.role} started (model ${event.model}${event.attempt > 1 ? `, attempt ${event.attempt}` : ''})`;
    case 'agent.output':
      return `  ${event.role}: ${event.text}`;
    case 'agent.tool':
      return `  ${event.role} tool ${event.tool}${event.target ? ` ${oneLine(event.target, 160)}` : ''}`;
    case 'agent.retry':
      return `  ${event.role}: API retry ${event.attempt}/${event.max_retries} (${event.error}), next in ${Math.round(event.retry_delay_ms / 1000)}s`;
    case 'agent.finished':
      return `${event.role} ${event.ok ? 'answered' : 'failed'} in ${seconds(event.duration_ms)}, $${event.cost_usd.toFixed(4)}${event.ok ? '' : `: ${event.summary}`}`;
    case 'judge.finished':
      return `Judge: ${event.blast_radius_line}${event.code ? ` -> ${event.code}` : ', scope ok'}${
        event.violations.length > 0
          ? `\n    ${event.violations
              .slice(0, 5)
              .map((v) => oneLine(v, 200))
              .join('\n    ')}`
          : ''
      }`;
    case 'verify.started':
      return `Verify ${event.template_id} (${event.phase}): ${oneLine([event.cmd, ...event.args].join(' '), 200)}`;
    case 'verify.finished':
      return `Verify ${event.template_id}: ${event.summary}`;
    case 'budget.warning':
      return `Budget warning: ${event.warnings.join('; ')}`;
    case 'log':
      return `${event.level === 'info' ? '' : `${event.level.toUpperCase()}: `}${oneLine(event.message, 400)}`;
    case 'tick.finished':
      return [
        `Result: ${event.verdict.toUpperCase()} ${event.code} (${event.blast_radius_line})${event.commit ? ` committed ${event.commit.slice(0, 12)}` : ''}`,
        ...(event.detail ? [`  Detail: ${oneLine(event.detail, 600)}`] : []),
        ...(event.verdict !== 'success' ? [`  Fix: ${event.remediation}`] : []),
        ...(event.report_path ? [`  Report: ${event.report_path}`] : []),
      ].join('\n');
  }
}

function clock(iso: string): string {
  const d = new Date(iso);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
