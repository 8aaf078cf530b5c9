import { describe, expect, it } from 'vitest';
import { formatPlain, plainReporter } from '../../source/cli/front-end/plain-reporter.js';
import type { EngineEvent, StampedEvent } from '../../source/engine/events.js';
import { stripControls } from '../../source/engine/workspace/printable.js';

// The plain front end prints model text (TASKS.md titles, the PRD title, what an agent claimed),
// branch names and child output to a terminal or a log: no escape sequence may get through.

const OSC52 = '\u001b]52;c;cm0gLXJmIH4vKg==\u0007';
const CLEAR = '\u001b[2J\u001b[H';

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

const at = '2025-01-01T10:00:00.000Z';
const stamp = (event: EngineEvent) => ({ ...event, at }) as StampedEvent;

describe('stripControls', () => {
  it('removes escape sequences whole and every other control, keeping tab and newline', () => {
    expect(stripControls(`copy ${OSC52}me`)).toBe('copy me');
    expect(stripControls(`${CLEAR}title\u001b[1;31m!\u001b[0m`)).toBe('title!');
    expect(stripControls('bell\u0007 cr\r del\u007f c1\u009b2J\u0085 reset\u001bc')).toBe(
      'bell cr del c1 reset',
    );
    expect(stripControls('osc with ST \u001b]0;t\u001b\\ends')).toBe('osc with ST ends');
    expect(stripControls('a\tb\nc')).toBe('a\tb\nc');
    expect(stripControls('plain')).toBe('plain');
  });
});

describe('the plain reporter with hostile text', () => {
  const events: EngineEvent[] = [
    {
      type: 'workflow.started',
      project: '/tmp/demo',
      prd_title: `Todo${OSC52} app\r`,
      base_branch: 'main',
      feature_branch: `ralphy/todo${CLEAR}`,
      engine: 'ticks',
      resumed_from: null,
      max_cost_usd: null,
      tasks: [],
    },
    {
      type: 'task.updated',
      number: 1,
      title: `Parse${CLEAR} PRD\nPhase: COMPLETED`,
      status: 'completed',
      claimed: `done\u0007${OSC52}`,
      verified: `SUCCESS\u009b2J`,
      verdict: 'verified',
    },
    {
      type: 'gate.requested',
      gate: 'qa',
      title: `Approve${OSC52}?`,
      lines: [`summary${CLEAR}`],
      answer: 'yes_no',
    },
    { type: 'agent.output', role: 'dev', text: `working${CLEAR}\r\u0007`, kind: 'text' },
    {
      type: 'agent.finished',
      role: 'dev',
      ok: false,
      exit_code: 1,
      cost_usd: 0,
      duration_ms: 10,
      summary: `boom${OSC52}`,
    },
    {
      type: 'run.finished',
      state: 'FAILED',
      status: 'failed',
      reason: 'aborted',
      detail: null,
      pr_url: null,
      next_steps: [`ralphy start${CLEAR}`],
    },
  ];

  it('prints no control character, and a title cannot forge a line of its own', () => {
    let out = '';
    const report = plainReporter({
      cwd: '/tmp',
      env: {},
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: () => true },
    });
    for (const event of events) report(stamp(event));
    for (const line of out.split('\n')) expect(line).not.toMatch(CONTROL);
    expect(out).toContain('Workflow "Todo app" in /tmp/demo (ticks engine, branch ralphy/todo)');
    expect(out).toContain(
      'Task 1 Parse PRD ⏎ Phase: COMPLETED: completed (verified: SUCCESS) (agent said: done)',
    );
    expect(out).toContain('=== VALIDATION REQUIRED: Approve? ===');
    expect(out).toContain('  dev: working');
    expect(out).toContain('dev failed in 0.0s, $0.0000: boom');
  });

  it('the summary lines (formatPlain) are clean too', () => {
    const lines = formatPlain(stamp(events.at(-1) as EngineEvent)) ?? '';
    expect(lines).not.toMatch(CONTROL);
    expect(lines).toContain('Next: ralphy start');
  });
});
