import type { AgentRunner } from '../agents/agent-run.js';
import type { EngineBus } from '../events.js';
import type { GatePort } from '../gates.js';
import type { RelaisConfig } from '../protocol/config.js';
import type { Clock } from '../supervise/clock.js';
import type { WorkspacePaths } from '../workspace/paths.js';
import { plannerPass, standaloneCall } from './pass.js';
import { openPrdSession, type PrdLike, prdSubject } from './prd-session.js';
import { plannerPaths } from './store.js';
import { type GateReplyLike, planAtTerminal, type TerminalOutcome } from './terminal-session.js';

/**
 * `relais plan` on PRD.md: the same planning session `ralphy start` opens with, on its own (no
 * branch, no spec): plan now, start later, and the spec-agent gets the handoff. Gates are the
 * command's (a prompt on a terminal, `--yes`, or nobody), announced on the bus like the workflow's.
 */

export interface PrdPlanningInput {
  readonly paths: WorkspacePaths;
  readonly root: string;
  readonly prd: PrdLike;
  readonly config: RelaisConfig;
  readonly bus: EngineBus;
  readonly gates: GatePort;
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly runner: AgentRunner;
  readonly now: () => Date;
}

export async function planPrd(
  input: PrdPlanningInput,
): Promise<TerminalOutcome | { kind: 'unreadable'; detail: string }> {
  const pp = plannerPaths(input.paths);
  const opened = await openPrdSession(pp, input.prd, input.now());
  if (!opened.ok) return { kind: 'unreadable', detail: opened.problem };
  return planAtTerminal({
    pp,
    session: opened.session,
    signal: input.signal,
    now: input.now,
    ask: (title, lines, answer) => ask(input, title, lines, answer),
    runPass: (session) =>
      plannerPass({
        pp,
        session,
        subject: prdSubject(input.prd),
        findings: [],
        config: input.config,
        bus: input.bus,
        now: input.now,
        outbox: false,
        call: standaloneCall(input),
      }),
  });
}

async function ask(
  input: PrdPlanningInput,
  title: string,
  lines: string[],
  answer: 'yes_no' | 'text',
): Promise<GateReplyLike> {
  input.bus.emit({ type: 'gate.requested', gate: 'plan', title, lines, answer });
  const reply = await input.gates.ask({ gate: 'plan', title, lines, answer }, input.signal);
  const text = reply.text?.trim() ? reply.text.trim() : null;
  const decision =
    answer === 'text' && reply.decision !== 'reject' && text
      ? 'answer'
      : reply.decision === 'approve'
        ? 'approve'
        : 'reject';
  input.bus.emit({ type: 'gate.resolved', gate: 'plan', decision, by: reply.by, answer: text });
  return { decision, text, by: reply.by };
}
