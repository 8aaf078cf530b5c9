import { lstat, mkdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { GateKind } from '../events.js';
import type { NotifyAction, NotifyEvent } from '../protocol/cycle-policy.js';
import { writeFileAtomic } from '../workspace/atomic-write.js';
import { resolvesUnderRoot } from '../workspace/safe-path.js';
import type { CycleContext } from './context.js';
import type { CycleState } from './state.js';

/**
 * Seed 003 "Notifications (Mode-Dependent)": the mode's action for the event, a file in
 * relais/notifications/ (`{event}-{timestamp}.md`, `complete.md` for the summary) and a bus event.
 * "ask approval" is a gate through the GatePort (the TUI's key, a prompt, --yes, or nobody = no);
 * "pause" is the caller's: it sets needs_human with the reason.
 */

export type NoticeEvent = NotifyEvent | 'escalation' | 'seed_docs' | 'replan' | 'roadmap';

export interface Notice {
  readonly title: string;
  readonly lines: readonly string[];
  /** What a human must do, if anything. */
  readonly action?: string;
}

/** The gate kind a front end shows for an approval (GateKind has no cycle kinds of its own). */
const GATE_FOR: Partial<Record<NoticeEvent, GateKind>> = { new_track: 'spec', task_complete: 'qa' };

/** What a notification needs of the cycle (also before VALIDATE has a nonce). */
export type NotifyContext = Pick<
  CycleContext,
  'root' | 'paths' | 'policy' | 'bus' | 'gates' | 'signal' | 'now'
>;

export async function notify(
  ctx: NotifyContext,
  state: CycleState | null,
  event: NoticeEvent,
  notice: Notice,
  forced?: NotifyAction,
): Promise<{ approved: boolean; path: string | null }> {
  const mode = state?.mode ?? ctx.policy.mode;
  const action: NotifyAction = forced ?? ctx.policy.modes[mode][event as NotifyEvent] ?? 'notify';
  if (action === 'silent') {
    ctx.bus.emit({ type: 'cycle.notification', event, action, title: notice.title, path: null, lines: [] });
    return { approved: true, path: null };
  }
  const at = ctx.now().toISOString();
  const file = await notificationFile(ctx, event, at);
  if (file) await writeFileAtomic(file, render(event, action, at, notice, mode, state));
  else
    ctx.bus.emit({
      type: 'log',
      level: 'warn',
      message: `${relative(ctx.root, ctx.paths.notifications)} is not a folder inside the repository; the notification is not written there`,
    });
  const path = file ? relative(ctx.root, file) : null;
  ctx.bus.emit({
    type: 'cycle.notification',
    event,
    action,
    title: notice.title,
    path,
    lines: [...notice.lines],
  });
  if (action !== 'ask') return { approved: true, path };
  const answer = await ctx.gates.ask(
    { gate: GATE_FOR[event] ?? 'resume', title: notice.title, lines: [...notice.lines], answer: 'yes_no' },
    ctx.signal,
  );
  ctx.bus.emit({
    type: 'gate.resolved',
    gate: GATE_FOR[event] ?? 'resume',
    decision: answer.decision,
    by: answer.by,
    answer: null,
  });
  return { approved: answer.decision === 'approve', path };
}

/**
 * `{event}-{timestamp}.md` (seed 003), `-2`, `-3`... when two of one event fall in the same second,
 * `complete.md` for the summary (rewritten each time). The folder must be a real folder inside the
 * repository; the file is written atomically (temp file, rename), so a link planted under the
 * name is replaced, never written through.
 */
async function notificationFile(ctx: NotifyContext, event: NoticeEvent, at: string): Promise<string | null> {
  const dir = ctx.paths.notifications;
  await mkdir(dir, { recursive: true });
  const info = await lstat(dir).catch(() => null);
  if (!info?.isDirectory() || !(await resolvesUnderRoot(ctx.root, relative(ctx.root, dir)))) return null;
  if (event === 'complete') return join(dir, 'complete.md');
  const stem = `${event.replace(/_/g, '-')}-${at.replace(/\.\d+Z$/, 'Z')}`;
  for (let n = 1; ; n++) {
    const file = join(dir, n === 1 ? `${stem}.md` : `${stem}-${n}.md`);
    if (!(await lstat(file).catch(() => null))) return file;
  }
}

function render(
  event: string,
  action: string,
  at: string,
  notice: Notice,
  mode: string,
  state: CycleState | null,
): string {
  const where = state
    ? `${state.phase}${state.track.id ? `, track ${state.track.id}` : ''}${state.task.id ? `, task ${state.task.id}` : ''}`
    : 'unknown (STATE.json unreadable)';
  return [
    `# ${notice.title}`,
    '',
    `- event: ${event}`,
    `- action: ${action}`,
    `- timestamp: ${at}`,
    `- mode: ${mode}`,
    `- phase: ${where}`,
    '',
    '## Context',
    '',
    ...notice.lines.map((l) => `- ${l}`),
    '',
    '## Human action',
    '',
    notice.action ?? (action === 'ask' ? 'Approve or decline in the terminal.' : 'None required.'),
    '',
  ].join('\n');
}
