import type { PlannerStats } from './stats.js';

/**
 * `relais plan --stats` as text. Its own module, importing only types, because the engine's front
 * door exports it statically (it is synchronous) and every command imports the front door: from
 * stats.ts it pulled in the planner's store, schemas and lock for `relais status` (issue 17).
 */
export function statsLines(stats: PlannerStats): string[] {
  if (stats.sessions.length === 0 && stats.unreadable.length === 0)
    return ['No planning session yet (relais plan, ralphy start or relais plan --issue <n> start one).'];
  const lines = [`Planning sessions: ${stats.sessions.length}`];
  for (const s of stats.sessions) {
    const gate = s.spec_first_gate === null ? 'not judged' : s.spec_first_gate;
    lines.push(
      `  ${s.session_id}  ${s.subject}  ${s.status}`,
      `    ${s.questions_asked} question(s) in ${s.rounds} round(s), ${s.planner_runs} planner run(s)${s.repairs > 0 ? `, ${s.repairs} answer(s) refused` : ''}, $${s.cost_usd.toFixed(4)}`,
      `    gaps closed: ${s.closed.answered} answered, ${s.closed.inferred} inferred, ${s.closed.not_relevant} not relevant; ${s.open_gaps} open`,
      `    spec at the first gate: ${gate}`,
    );
  }
  for (const u of stats.unreadable) lines.push(`  ${u.id}  unreadable: ${u.problem}`);
  lines.push(
    stats.acceptance_rate === null
      ? 'Spec acceptance rate: no spec has met the first gate yet'
      : `Spec acceptance rate: ${stats.passed}/${stats.judged} (${Math.round(stats.acceptance_rate * 100)}%) passed the first gate`,
  );
  return lines;
}
