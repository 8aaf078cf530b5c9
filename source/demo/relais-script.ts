import type { ModelReply, ModelRequest, ModelScript } from './scripted-model-server.js';

/**
 * Scripts the two Relais agents behind one scripted model: requests are told apart by the Relais
 * system prompt they carry, a call by its first turn, a turn by the assistant messages so far.
 * `orchestrator[i]` answers call i; `builder[i][t]` answers turn t of builder call i.
 */

export interface RelaisModelPlan {
  readonly orchestrator: readonly string[];
  readonly builder: ReadonlyArray<readonly ModelReply[]>;
}

export type RelaisRole = 'orchestrator' | 'builder' | 'other';

export function roleOf(request: ModelRequest): RelaisRole {
  if (request.system.includes('You are the Orchestrator (Brain) for Relais')) return 'orchestrator';
  if (request.system.includes('You are the Builder (Hands) for Relais')) return 'builder';
  return 'other';
}

export function relaisScript(plan: RelaisModelPlan): ModelScript {
  const calls = { orchestrator: -1, builder: -1 };
  return (request) => {
    const role = roleOf(request);
    if (role === 'other') return { text: 'OK' };
    const turn = request.messages.filter((m) => m.role === 'assistant').length;
    if (turn === 0) calls[role]++;
    if (role === 'orchestrator') {
      const text = plan.orchestrator[calls.orchestrator];
      if (text === undefined) throw new Error(`no scripted orchestrator answer #${calls.orchestrator + 1}`);
      return { text };
    }
    const reply = plan.builder[calls.builder]?.[turn];
    if (!reply) throw new Error(`no scripted builder turn ${turn + 1} of call #${calls.builder + 1}`);
    return reply;
  };
}
