import type { WorkspacePaths } from '../workspace/paths.js';
import type { SubjectView } from './context-dump.js';
import { handoffText } from './handoff.js';
import {
  newSession,
  type Opened,
  openSession,
  type PlannerPaths,
  plannerPaths,
  prdSessionId,
  readLearnings,
  readSession,
  sha256,
  writeSession,
} from './store.js';

/**
 * Planning on PRD.md at a terminal: the session is keyed by the PRD's text, so `relais plan` and
 * `ralphy start` share it (plan first, then start: the spec-agent gets the same handoff), and a
 * changed PRD is planned afresh.
 */

export interface PrdLike {
  readonly title: string;
  readonly text: string;
}

export function prdSubject(prd: PrdLike): SubjectView {
  return {
    source: 'PRD.md (the product requirements; `ralphy start` turns them into a spec, then code)',
    title: prd.title,
    body: prd.text,
    reporter: "the PRD's author, the human at this terminal",
    assignee: 'the same human, as the developer who will own the change',
  };
}

export function openPrdSession(pp: PlannerPaths, prd: PrdLike, now: Date): Promise<Opened> {
  return openSession(pp, () =>
    newSession({
      id: prdSessionId(prd.text),
      subject: { kind: 'prd', title: prd.title.slice(0, 300), path: 'PRD.md', sha256: sha256(prd.text) },
      reporter: null,
      assignee: null,
      now,
    }),
  );
}

/** The handoff text for the spec prompt, or '' when this PRD was not planned (or not finished). */
export async function prdHandoff(paths: WorkspacePaths, prd: PrdLike): Promise<string> {
  const pp = plannerPaths(paths);
  const read = await readSession(pp, prdSessionId(prd.text));
  if (read.kind !== 'ok' || read.value.status !== 'ready') return '';
  const learnings = await readLearnings(pp);
  return handoffText(read.value, learnings.ok ? learnings.file.learnings : []);
}

/** Seed 004 eval hook: whether the spec built on this planning passed the first gate (once). */
export async function recordSpecGate(paths: WorkspacePaths, prd: PrdLike, passed: boolean): Promise<void> {
  const pp = plannerPaths(paths);
  const read = await readSession(pp, prdSessionId(prd.text));
  if (read.kind !== 'ok' || read.value.status !== 'ready' || read.value.spec_first_gate !== null) return;
  await writeSession(pp, { ...read.value, spec_first_gate: passed ? 'passed' : 'rejected' });
}
