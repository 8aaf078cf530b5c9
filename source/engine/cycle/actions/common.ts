import { type CycleCode, cycleRemediation } from '../codes.js';
import type { ActionResult, CycleContext } from '../context.js';
import { type CycleState, pause } from '../state.js';
import { readDoc } from '../track-docs.js';

/** Helpers every action uses: results, pauses, and the project documents the planner reads. */

export function okResult(state: CycleState, details: string): ActionResult {
  return { state, ok: true, details, code: null };
}

export function failResult(state: CycleState, details: string, code: CycleCode): ActionResult {
  return { state, ok: false, details, code };
}

/** needs_human with reason, code and remediation: the cycle fails and waits (seed 003 "pause"). */
export function pauseResult(
  ctx: CycleContext,
  state: CycleState,
  code: CycleCode,
  reason: string,
): ActionResult {
  return {
    state: pause(state, { reason, code, remediation: cycleRemediation(code) }, ctx.now()),
    ok: false,
    details: reason,
    code,
  };
}

export const SEED_DOCS = ['VISION.md', 'PROJECT.md', 'REQUIREMENTS.md', 'ROADMAP.md'] as const;

export async function projectDocs(
  ctx: CycleContext,
  names: readonly string[],
): Promise<Record<string, string>> {
  const docs: Record<string, string> = {};
  for (const name of names) {
    const path = `${ctx.policy.docs_dir}/${name}`;
    const text = await readDoc(ctx.root, path);
    if (text) docs[path] = text;
  }
  const ops = await readDoc(ctx.root, 'OPS.md', 6000);
  if (ops) docs['OPS.md'] = ops;
  return docs;
}
