import { createHash } from 'node:crypto';
import type { GateKind } from '../events.js';
import type { GateAnswer, GatePort, GateRequest } from '../gates.js';

/**
 * Every gate of a fleet run waits durably (issue 20 "a gate waits as a DBOS recv"): the spec and
 * QA gates, the planner's questions and its "proceed?", an agent's question, a lane's merge gate.
 * A step that reaches a gate nobody answered yet ends there; the run's workflow waits on `recv`
 * (no process holds the wait, so it survives every restart); the answer goes into the next step,
 * which asks the same gate again and gets it, or (an agent's question, which its agent does not
 * ask again) hands it to the agent's next run. Each wait has its own id: an answer names the wait
 * it answers, so an answer sent twice, or sent for an earlier wait, answers nothing else.
 */

export interface GateWait {
  /** Unique per wait within the fleet: `<run>#<step>`. */
  readonly id: string;
  readonly gate: GateKind;
  readonly title: string;
  readonly lines: string[];
  readonly answer: 'yes_no' | 'text';
  /** The same question asked again has the same key (a re-asked gate matches its answer). */
  readonly key: string;
}

/** An answer, from `relais approve`, the app attached to the run, or a comment on GitHub. */
export interface GateReply {
  /** The wait this answers (GateWait.id). */
  readonly wait: string;
  /** `approve` on a text gate: go on without an answer (the planner proceeds under its assumptions). */
  readonly decision: 'approve' | 'reject' | 'answer';
  readonly reason: string | null;
  readonly text: string | null;
  /** Who answered, for the record: "alice (relais approve)", "@bob on GitHub", "submit --yes". */
  readonly by: string;
}

export interface AnsweredGate {
  readonly wait: GateWait;
  readonly reply: GateReply;
}

export function gateKey(request: Pick<GateRequest, 'gate' | 'title' | 'lines'>): string {
  return createHash('sha256')
    .update(JSON.stringify([request.gate, request.title, request.lines]))
    .digest('hex')
    .slice(0, 16);
}

export function waitFor(request: GateRequest, id: string): GateWait {
  return {
    id,
    gate: request.gate,
    title: request.title.slice(0, 500),
    lines: request.lines.slice(0, 60).map((l) => l.slice(0, 500)),
    answer: request.answer,
    key: gateKey(request),
  };
}

/** Whether the step's gate request is the one the answer was given for. */
function matches(wait: GateWait, request: GateRequest): boolean {
  if (wait.gate !== request.gate) return false;
  // The spec and QA gates show their documents' lines, which a re-run reads again: one per phase.
  return wait.gate === 'spec' || wait.gate === 'qa' || wait.key === gateKey(request);
}

export interface StepGates {
  readonly port: GatePort;
  /** The first gate nobody answered in this step: the run waits there. */
  pending(): GateRequest | null;
}

/**
 * The gate port of one step. `answered` is the answer the run waited for (null in a step that
 * follows no wait); `autoApprove` is `submit --yes`: every yes/no gate approved, as `ralphy start
 * --yes` does (a question still needs a human).
 */
export function stepGates(answered: AnsweredGate | null, autoApprove: boolean): StepGates {
  let answer = answered;
  // "Go on without answering" a text gate: the yes/no gate that follows it is approved too.
  let proceed: GateKind | null = null;
  let pending: GateRequest | null = null;
  const nobody: GateAnswer = { decision: 'reject', by: 'nobody' };
  const port: GatePort = {
    async ask(request) {
      // Resuming its own workflow is the step's job, never a question.
      if (request.gate === 'resume') return { decision: 'approve', by: 'auto' };
      if (answer && matches(answer.wait, request)) {
        const { reply } = answer;
        answer = null;
        return replyFor(request, reply, (kind) => {
          proceed = kind;
        });
      }
      if (proceed === request.gate && request.answer === 'yes_no') {
        proceed = null;
        return { decision: 'approve', by: 'human' };
      }
      if (autoApprove && request.answer === 'yes_no') return { decision: 'approve', by: 'auto' };
      pending ??= request;
      return nobody;
    },
  };
  return { port, pending: () => pending };
}

function replyFor(request: GateRequest, reply: GateReply, goOn: (gate: GateKind) => void): GateAnswer {
  // `submit --yes` approves on nobody's behalf: a PR body must not name a human for it.
  const by = reply.by === 'submit --yes' ? 'auto' : 'human';
  const reason = reply.reason ? { reason: reply.reason } : {};
  if (request.answer === 'text') {
    if (reply.decision === 'answer' && reply.text) return { decision: 'answer', text: reply.text, by };
    if (reply.decision === 'approve') goOn(request.gate);
    return { decision: 'reject', by, ...reason };
  }
  return { decision: reply.decision === 'approve' ? 'approve' : 'reject', by, ...reason };
}

/**
 * An agent's question is not asked again by its agent (the agent runs again instead): the answer
 * goes to that run as the workflow's pending answer, with the question it answers.
 */
export function answerForAgent(answered: AnsweredGate): string | null {
  if (answered.wait.gate !== 'input') return null;
  const { reply, wait } = answered;
  const question = wait.lines.join('\n').slice(0, 1500);
  if (reply.decision === 'answer' && reply.text)
    return `You asked: ${question}\nThe human answered: ${reply.text}`.slice(0, 4000);
  if (reply.decision === 'approve')
    return `You asked: ${question}\nThe human chose not to answer: use your best judgement and say what you assumed.`.slice(
      0,
      4000,
    );
  return null;
}
