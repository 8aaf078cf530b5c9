import type { ModelReply, ModelRequest, ModelScript } from './scripted-model-server.js';

/**
 * Scripts every Relais agent behind one scripted model: requests are told apart by the system
 * prompt Relais gives each role, a call by its first turn, a turn by the assistant messages so
 * far. `orchestrator[i]` answers call i; `builder[i][t]` (and `spec`, `dev`, `qa`) answer turn t
 * of call i. Anything else Claude Code asks on its own (titles, summaries) gets a short "OK".
 */

/**
 * The turns of one call: a list per call in order, or a function choosing a call's turns from the
 * request itself (what it asks for), so a resumed run that repeats or skips a call still gets the
 * answer that fits.
 */
export type CallScript =
  | ReadonlyArray<readonly ModelReply[]>
  | ((request: ModelRequest) => readonly ModelReply[]);

export interface RelaisModelPlan {
  readonly orchestrator: readonly string[] | ((request: ModelRequest) => string);
  readonly builder: CallScript;
  readonly spec?: ReadonlyArray<readonly ModelReply[]>;
  readonly dev?: ReadonlyArray<readonly ModelReply[]>;
  readonly qa?: ReadonlyArray<readonly ModelReply[]>;
  /**
   * The Relay planner (seed 004): replies per call and turn like the agents above, or a function
   * of the request (the planner is stateless: what it answers depends on the context dump).
   */
  readonly planner?: ReadonlyArray<readonly ModelReply[]> | ((request: ModelRequest) => ModelReply);
}

export type RelaisRole = 'orchestrator' | 'builder' | 'spec' | 'dev' | 'qa' | 'planner' | 'other';

const SIGNATURES: ReadonlyArray<[Exclude<RelaisRole, 'other'>, string]> = [
  ['orchestrator', 'You are the Orchestrator (Brain) for Relais'],
  ['builder', 'You are the Builder (Hands) for Relais'],
  ['spec', 'You are the spec-agent of Ralphy (Relais)'],
  ['dev', 'You are the dev-agent of Ralphy (Relais)'],
  ['qa', 'You are the qa-agent of Ralphy (Relais)'],
  ['planner', 'You are Relay — a senior architect'],
];

export function roleOf(request: ModelRequest): RelaisRole {
  return SIGNATURES.find(([, signature]) => request.system.includes(signature))?.[0] ?? 'other';
}

export function relaisScript(plan: RelaisModelPlan): ModelScript {
  const calls: Record<Exclude<RelaisRole, 'other'>, number> = {
    orchestrator: -1,
    builder: -1,
    spec: -1,
    dev: -1,
    qa: -1,
    planner: -1,
  };
  return (request) => {
    const role = roleOf(request);
    if (role === 'other') return { text: 'OK' };
    if (role === 'planner' && typeof plan.planner === 'function') return plan.planner(request);
    const turn = request.messages.filter((m) => m.role === 'assistant').length;
    if (turn === 0) calls[role]++;
    if (role === 'orchestrator') {
      const text =
        typeof plan.orchestrator === 'function'
          ? plan.orchestrator(request)
          : plan.orchestrator[calls.orchestrator];
      if (text === undefined) throw new Error(`no scripted orchestrator answer #${calls.orchestrator + 1}`);
      return { text };
    }
    const script = plan[role];
    const turns = typeof script === 'function' ? callTurns(script, request) : script?.[calls[role]];
    const reply = turns?.[turn];
    if (!reply) throw new Error(`no scripted ${role} turn ${turn + 1} of call #${calls[role] + 1}`);
    return reply;
  };
}

/** A function script's turns; the planner's (one reply per request) is its own single turn. */
function callTurns(
  script: (request: ModelRequest) => readonly ModelReply[] | ModelReply,
  request: ModelRequest,
): readonly ModelReply[] {
  const answer = script(request);
  return Array.isArray(answer) ? answer : [answer as ModelReply];
}

/** What the runner sent as the user's words (Claude Code sends a string or text blocks). */
export function userText(request: ModelRequest): string {
  return request.messages
    .filter((m) => m.role === 'user')
    .flatMap((m) =>
      typeof m.content === 'string'
        ? [m.content]
        : Array.isArray(m.content)
          ? (m.content as Array<{ type?: string; text?: string }>).flatMap((b) =>
              b.type === 'text' && typeof b.text === 'string' ? [b.text] : [],
            )
          : [],
    )
    .join('\n');
}
