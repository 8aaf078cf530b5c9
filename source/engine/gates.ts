import type { GateKind } from './events.js';

/**
 * Human decisions are an injected async port (docs/ARCHITECTURE.md; the style of codex-cli's
 * getCommandConfirmation): the engine asks, the front end answers from a key, a prompt, `--yes`,
 * or nobody (then the answer is no).
 */
export interface GateRequest {
  readonly gate: GateKind;
  readonly title: string;
  /** What is being approved: task titles, the QA summary, the agent's question. */
  readonly lines: string[];
  readonly answer: 'yes_no' | 'text';
}

export interface GateAnswer {
  readonly decision: 'approve' | 'reject' | 'answer';
  readonly by: 'human' | 'auto' | 'nobody';
  /** The text the human typed, for `answer: 'text'` gates. */
  readonly text?: string;
}

export interface GatePort {
  ask(request: GateRequest, signal: AbortSignal): Promise<GateAnswer>;
}

/** `--yes`: approve every yes/no gate; a question for a human cannot be answered automatically. */
export const approveAll: GatePort = {
  ask: async (request) =>
    request.answer === 'yes_no' ? { decision: 'approve', by: 'auto' } : { decision: 'reject', by: 'nobody' },
};

/** Nobody can answer (no terminal, no --yes): every gate is refused. */
export const denyAll: GatePort = {
  ask: async () => ({ decision: 'reject', by: 'nobody' }),
};
