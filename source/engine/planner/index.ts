/**
 * The Relay planner (seed 004): gaps with short ids, respondents, the proceed gate, assumptions,
 * learnings, and the handoff to the spec-agent. Stateless model, stateful runner: every run
 * rebuilds the context dump from relais/planner/ and executes only answers that keep the rules.
 */

export { withHumanMessage } from './answers.js';
export { type Batch, batchOf, plannerHasNews } from './batch.js';
export { contextDump, type Finding, type SubjectView } from './context-dump.js';
export { handoffText } from './handoff.js';
export { type IssueOutcome, type IssuePassInput, planIssue } from './issue-pass.js';
export { type PassOutcome, plannerPass } from './pass.js';
export { planPrd } from './prd-planning.js';
export { prdHandoff, recordSpecGate } from './prd-session.js';
export * from './schemas.js';
export { loadPlannerStats, plannerStats, statsLines } from './stats.js';
export { listSessions, plannerPaths } from './store.js';
export type { TerminalOutcome } from './terminal-session.js';
export { validateBatch } from './validate.js';
