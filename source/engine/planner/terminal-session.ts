import { withHumanMessage } from './answers.js';
import { plannerHasNews } from './batch.js';
import { proceedGate, questionGate } from './gate-lines.js';
import type { PassOutcome } from './pass.js';
import type { Session } from './schemas.js';
import { type PlannerPaths, writeSession } from './store.js';

/**
 * Planning with the human at a terminal (`ralphy start`'s PLANNING phase, `relais plan`): the
 * planner runs when there is something new to answer, its questions wait at a text gate, the
 * answer joins the discussion (saved before the next run, so nothing typed is lost), until the
 * planner is ready for the spec. Silence does nothing: the gate simply waits.
 *
 * Declining to answer (Esc, an empty answer) or nobody to answer (no terminal, `--yes`) leads to
 * one yes/no question: proceed under assumptions? `--yes` approves it, so an unattended run goes
 * on with the planner's stated assumptions; nobody at all stops the phase.
 */

export interface GateReplyLike {
  readonly decision: 'approve' | 'reject' | 'answer';
  readonly text: string | null;
  readonly by: 'human' | 'auto' | 'nobody';
}

export interface TerminalPlanningInput {
  readonly pp: PlannerPaths;
  readonly session: Session;
  readonly signal: AbortSignal;
  readonly now: () => Date;
  readonly runPass: (session: Session) => Promise<PassOutcome>;
  readonly ask: (title: string, lines: string[], answer: 'yes_no' | 'text') => Promise<GateReplyLike>;
  /** Checked before each planner run (the workflow's spend cap): a reason to stop, or null. */
  readonly overBudget?: () => string | null;
}

export type TerminalOutcome =
  | { kind: 'ready'; session: Session }
  | { kind: 'declined'; by: 'human' | 'nobody'; session: Session }
  | { kind: 'invalid'; session: Session; problems: string[] }
  | { kind: 'failed'; session: Session; detail: string }
  | { kind: 'unreadable'; session: Session; detail: string }
  | { kind: 'breaker_open'; session: Session; detail: string }
  | { kind: 'over_budget'; session: Session; detail: string }
  | { kind: 'stopped'; session: Session };

export async function planAtTerminal(input: TerminalPlanningInput): Promise<TerminalOutcome> {
  let session = input.session;
  await writeSession(input.pp, session);
  for (;;) {
    if (session.status === 'ready') return { kind: 'ready', session };
    if (input.signal.aborted) return { kind: 'stopped', session };
    if (plannerHasNews(session)) {
      const over = input.overBudget?.() ?? null;
      if (over) return { kind: 'over_budget', session, detail: over };
      const pass = await input.runPass(session);
      if (pass.kind !== 'applied')
        return pass.kind === 'aborted' ? { kind: 'stopped', session: pass.session } : pass;
      session = pass.applied.session;
      continue;
    }
    const turn = await humanTurn(input, session);
    if (turn.kind !== 'continue') return turn;
    session = turn.session;
  }
}

/** The planner has nothing new to say: the human answers its questions, or chooses to go on. */
async function humanTurn(
  input: TerminalPlanningInput,
  session: Session,
): Promise<TerminalOutcome | { kind: 'continue'; session: Session }> {
  const gate = questionGate(session);
  const reply = await input.ask(gate.title, gate.lines, 'text');
  if (input.signal.aborted) return { kind: 'stopped', session };
  if (reply.decision === 'answer' && reply.text) {
    const answered = withHumanMessage(
      session,
      { text: reply.text, author: 'terminal', role: 'reporter' },
      input.now(),
    );
    return { kind: 'continue', session: await record(input, answered) };
  }
  const question = proceedGate(session);
  const proceed = await input.ask(question.title, question.lines, 'yes_no');
  if (input.signal.aborted) return { kind: 'stopped', session };
  if (proceed.decision !== 'approve')
    return { kind: 'declined', by: reply.by === 'nobody' ? 'nobody' : 'human', session };
  const author = proceed.by === 'auto' ? '--yes' : 'terminal';
  const text =
    proceed.by === 'auto'
      ? 'proceed (ralphy start --yes: nobody is at the terminal to answer)'
      : 'proceed (the human chose to go on without answering)';
  const proceeded = withHumanMessage(session, { text, author, role: 'reporter', proceed: true }, input.now());
  return { kind: 'continue', session: await record(input, proceeded) };
}

async function record(input: TerminalPlanningInput, session: Session): Promise<Session> {
  await writeSession(input.pp, session);
  return session;
}
