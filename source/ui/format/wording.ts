import type { GateKind, TickPhase } from '../../engine/events.js';
import type { Code, Verdict } from '../../engine/protocol/codes.js';

/**
 * Words the app uses in more than one place, so the log, the timeline and the result say the
 * same thing (issue 16 item 8: `SUCCESS SUCCESS`, `Gate plan: reject (nobody)`, Esc logged as a
 * rejection, `Phase:` for both workflow phases and tick steps).
 */

const GATE_NAMES: Record<GateKind, string> = {
  spec: 'spec gate',
  qa: 'QA gate',
  input: 'agent question',
  resume: 'resume question',
  plan: 'planner question',
};

/** Gates that take typed text: a "reject" there is a human declining to answer. */
const TEXT_GATES: ReadonlySet<GateKind> = new Set(['input', 'plan']);

export function gateName(gate: GateKind): string {
  return GATE_NAMES[gate];
}

/**
 * A gate's outcome in words: `spec gate: approved`, `spec gate: approved by --yes`, `planner
 * question: declined`, `QA gate: nobody could answer` (nobody decided anything, so no decision is
 * named).
 */
export function gateOutcome(
  gate: GateKind,
  decision: 'approve' | 'reject' | 'answer' | 'aborted',
  by: 'human' | 'auto' | 'nobody',
  /** A narrow panel names the gate by its short kind (`spec`, `plan`). */
  name: string = gateName(gate),
  /** What aborted the wait (`the abort key (a) in the app`), for an `aborted` decision. */
  abortedBy: string | null = null,
): string {
  if (decision === 'aborted') return `${name}: aborted${abortedBy ? ` by ${abortedBy}` : ''}`;
  if (by === 'nobody') return `${name}: nobody could answer`;
  const verb =
    decision === 'approve'
      ? 'approved'
      : decision === 'answer'
        ? 'answered'
        : TEXT_GATES.has(gate)
          ? 'declined'
          : 'rejected';
  return `${name}: ${verb}${by === 'auto' ? ' by --yes' : ''}`;
}

const VERDICT_WORDS: Record<Verdict, string> = {
  success: 'succeeded',
  stop: 'stopped',
  blocked: 'blocked',
};

/** `Tick 3 succeeded`, `Tick stopped: STOP_VERIFY_FAILED_FAST` (the code only when it says more). */
export function tickHeadline(verdict: Verdict, code: Code, tick: number | null = null): string {
  const head = `Tick${tick === null ? '' : ` ${tick}`} ${VERDICT_WORDS[verdict]}`;
  return code === 'SUCCESS' ? head : `${head}: ${code}`;
}

/**
 * The step of a tick (LOCK, BUILD, JUDGE…), worded apart from a workflow phase so the header
 * never shows two different things as the same kind of name.
 */
export function tickStepLabel(tick: number, step: TickPhase | null): string {
  return step ? `tick ${tick}, step ${step}` : `tick ${tick}`;
}

/**
 * What `y` and `n` mean at each yes/no gate, in the gate, the footer and the `?` list alike: the
 * resume question's "no" starts a new workflow, the planner's proceed question's "no" stops there.
 */
export function yesNoWords(gate: GateKind): { readonly yes: string; readonly no: string } {
  if (gate === 'resume') return { yes: 'resume', no: 'start a new workflow' };
  if (gate === 'plan') return { yes: 'proceed to the spec', no: 'stop here' };
  return { yes: 'approve', no: 'reject' };
}

/**
 * Only a "no" an agent reads asks why (the spec gate's reason goes to the next spec-agent, the QA
 * gate's to the QA agent); at the resume and the planner's proceed question `n` decides at once.
 */
export function asksWhy(gate: GateKind): boolean {
  return gate === 'spec' || gate === 'qa';
}
