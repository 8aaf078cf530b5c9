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
  /**
   * What the human reads before deciding, in full (SPEC.md, TASKS.md, QA_REPORT.md, the branch's
   * diff): the app opens them in a viewer. Front ends that cannot show them ignore them.
   */
  readonly documents?: readonly GateDocument[];
  /**
   * Issue 19: the parallel lane that asks (`task-3-1`), absent for the workflow itself. Lanes may
   * ask at once: a front end shows which lane and task each question belongs to.
   */
  readonly lane?: string;
}

export interface GateDocument {
  /** The file's path in the project, or what it is ("branch diff"). */
  readonly name: string;
  readonly text: string;
}

export interface GateAnswer {
  readonly decision: 'approve' | 'reject' | 'answer';
  readonly by: 'human' | 'auto' | 'nobody';
  /** The text the human typed, for `answer: 'text'` gates. */
  readonly text?: string;
  /**
   * Why a human rejected a yes/no gate (optional): recorded with the decision and handed to the
   * agent on the next attempt.
   */
  readonly reason?: string;
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
