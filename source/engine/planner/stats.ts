import type { Learning, Session } from './schemas.js';
import { listSessions, type PlannerPaths, readLearnings } from './store.js';

/**
 * Seed 004's eval hooks ("Add eval hooks/metrics for Planner quality (focus: spec acceptance rate
 * by devs)"): per planning session, the questions asked, the rounds, the gaps closed by reason,
 * and whether the spec built on it passed the first human gate; over sessions, the acceptance rate.
 */

export interface SessionSignals {
  readonly session_id: string;
  readonly subject: string;
  readonly status: Session['status'];
  readonly questions_asked: number;
  readonly rounds: number;
  readonly planner_runs: number;
  readonly repairs: number;
  readonly open_gaps: number;
  readonly closed: { answered: number; inferred: number; not_relevant: number };
  /** Learnings this session added to the workspace (one it proposed again is not counted twice). */
  readonly learnings: number;
  readonly spec_first_gate: Session['spec_first_gate'];
  readonly cost_usd: number;
}

export interface PlannerStats {
  readonly sessions: SessionSignals[];
  /** Sessions whose spec met the first gate, and how many of them passed it. */
  readonly judged: number;
  readonly passed: number;
  /** passed / judged, or null before any spec was judged. */
  readonly acceptance_rate: number | null;
  readonly unreadable: Array<{ id: string; problem: string }>;
}

export function sessionSignals(session: Session, learnings: readonly Learning[]): SessionSignals {
  const closedBy = (reason: string) =>
    session.gaps.filter((g) => g.status === 'closed' && g.closed_reason === reason).length;
  return {
    session_id: session.session_id,
    subject:
      session.subject.kind === 'prd'
        ? `PRD "${session.subject.title}"`
        : `issue #${session.subject.number} "${session.subject.title}"`,
    status: session.status,
    questions_asked: session.gaps.length,
    rounds: session.rounds,
    planner_runs: session.planner_runs,
    repairs: session.repairs,
    open_gaps: session.gaps.filter((g) => g.status === 'open').length,
    closed: {
      answered: closedBy('answered'),
      inferred: closedBy('inferred'),
      not_relevant: closedBy('not_relevant'),
    },
    learnings: learnings.filter((l) => l.session_id === session.session_id).length,
    spec_first_gate: session.spec_first_gate,
    cost_usd: session.cost_usd,
  };
}

/** Every session's signals, from relais/planner/ (an unreadable learnings.json is listed as such). */
export async function loadPlannerStats(pp: PlannerPaths): Promise<PlannerStats> {
  const read = await readLearnings(pp);
  const stats = plannerStats(await listSessions(pp), read.ok ? read.file.learnings : []);
  return read.ok
    ? stats
    : { ...stats, unreadable: [...stats.unreadable, { id: 'learnings.json', problem: read.problem }] };
}

export function plannerStats(
  found: ReadonlyArray<{ id: string; session: Session | null; problem: string | null }>,
  learnings: readonly Learning[],
): PlannerStats {
  const sessions = found.flatMap((f) => (f.session ? [sessionSignals(f.session, learnings)] : []));
  const judged = sessions.filter((s) => s.spec_first_gate !== null).length;
  const passed = sessions.filter((s) => s.spec_first_gate === 'passed').length;
  return {
    sessions,
    judged,
    passed,
    acceptance_rate: judged > 0 ? passed / judged : null,
    unreadable: found.flatMap((f) => (f.session ? [] : [{ id: f.id, problem: f.problem ?? 'unreadable' }])),
  };
}

// Kept in its own file so the engine's front door can export it without loading the store.
export { statsLines } from './stats-lines.js';
