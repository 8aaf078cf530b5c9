import type { GateDocument } from '../gates.js';
import { readRepoFile } from '../workspace/safe-read.js';
import type { WorkflowContext } from './context.js';

/**
 * What a human reads before deciding at a gate (issue 16 item 5: "gates ask you to approve what
 * you cannot see"): the files the agent wrote and the branch's diff, in full up to a cap. An agent
 * wrote these files: a symlink or a FIFO in their place is not followed (readRepoFile), and
 * a file too large or missing says so instead of showing nothing.
 */

/** Past this, a document is cut (the app keeps every line in memory while the gate waits). */
export const DOCUMENT_CAP_BYTES = 512 * 1024;

export async function fileDocument(ctx: WorkflowContext, rel: string): Promise<GateDocument> {
  const read = await readRepoFile(ctx.setup.facts.root, rel, DOCUMENT_CAP_BYTES);
  return { name: rel, text: read.ok ? read.text : `(${rel} ${read.reason}: nothing to show)` };
}

/** `git diff base..HEAD`: what the pull request will hold. */
export async function branchDiffDocument(ctx: WorkflowContext): Promise<GateDocument> {
  const base = ctx.workflow.base_commit ?? 'HEAD';
  const name = 'branch diff';
  const out = await ctx.setup.git.run(['diff', '--no-color', '--no-ext-diff', base, 'HEAD'], {
    maxStdoutBytes: 16 * DOCUMENT_CAP_BYTES,
  });
  if (out.code !== 0)
    return { name, text: `(git diff failed: ${out.stderr.trim().slice(0, 300)}; run git diff ${base} HEAD)` };
  const text = out.stdout.toString('utf8');
  if (text.length === 0) return { name, text: '(the branch changes nothing)' };
  if (text.length <= DOCUMENT_CAP_BYTES) return { name, text };
  return {
    name,
    text: `${text.slice(0, DOCUMENT_CAP_BYTES)}\n… (cut here: git diff ${base.slice(0, 12)} HEAD shows it all)`,
  };
}
