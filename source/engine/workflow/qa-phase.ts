import { readAgentPrompt, runAgentPhase } from './agent-phase.js';
import type { PhaseResult, WorkflowContext } from './context.js';
import { fill, QA_FILE, readProjectFile, SPEC_FILE, TASKS_FILE } from './phase-helpers.js';

/**
 * QA (seed 002 §3.3): the qa-agent reviews the implementation (quality, OWASP Top 10) in one pass
 * and writes specs/QA_REPORT.md, and nothing else (the judge holds it to that one file).
 */
export async function qaPhase(ctx: WorkflowContext): Promise<PhaseResult> {
  const { workflow } = ctx.setup.config;
  const template = await readAgentPrompt(ctx, 'qa.txt');
  const changes = await changesSinceStart(ctx);
  const outcome = await runAgentPhase(ctx, {
    role: 'qa',
    phase: 'QA',
    phaseTimeoutSeconds: workflow.timeouts.qa,
    runTimeoutMs: workflow.timeouts.agent * 1000,
    maxTurns: workflow.max_turns.qa,
    scope: {
      allowed: [QA_FILE],
      allowNewFiles: true,
      allowLockfileChanges: false,
      maxFiles: 1,
      maxLines: 5000,
    },
    commitMessage: `ralphy: QA report for "${ctx.prd.title}"`,
    prompt: async (note) =>
      fill(template, {
        QA_FILE,
        SPEC_FILE,
        TASKS_FILE,
        SPEC: await readProjectFile(ctx, SPEC_FILE, 30_000),
        TASKS: await readProjectFile(ctx, TASKS_FILE, 20_000),
        CHANGES: changes,
        NOTE: note ?? '',
      }),
    verifyDone: async () =>
      (await readProjectFile(ctx, QA_FILE)).trim().length === 0 ? `${QA_FILE} is missing or empty` : null,
  });
  return outcome.kind === 'end' ? outcome.result : { kind: 'next', event: 'exit_signal' };
}

/** What the workflow changed since it started: the stat and the start of the diff, capped. */
async function changesSinceStart(ctx: WorkflowContext): Promise<string> {
  const base = ctx.workflow.base_commit;
  if (!base) return '(unknown)';
  const git = ctx.setup.git;
  const stat = await git.run(['diff', '--stat', '--no-ext-diff', base, 'HEAD']);
  const diff = await git.run(['diff', '--no-ext-diff', '--no-textconv', base, 'HEAD'], {
    maxStdoutBytes: 4_000_000,
  });
  const text = diff.stdout.toString('utf8');
  const capped = text.length > 40_000 ? `${text.slice(0, 40_000)}\n… (diff truncated; read the files)` : text;
  return `${stat.stdout.toString('utf8').trim() || '(no changes)'}\n\n${capped}`;
}

/** The report's "## Summary" section (or its first lines), for the QA gate. */
export async function qaSummary(ctx: WorkflowContext, maxLines = 15): Promise<string[]> {
  const text = await readProjectFile(ctx, QA_FILE);
  const lines = text.split('\n');
  const start = lines.findIndex((l) => /^#{1,3}\s+(summary|résumé|resume)\b/i.test(l.trim()));
  const body = start >= 0 ? lines.slice(start + 1) : lines;
  const end = start >= 0 ? body.findIndex((l) => /^#{1,3}\s+/.test(l.trim())) : -1;
  return paragraphs(end >= 0 ? body.slice(0, end) : body).slice(0, maxLines);
}

/** A list item, a heading, a quote, a table row or a fence: a line of its own in Markdown. */
const OWN_LINE = /^\s*([-*+]\s|\d+[.)]\s|#|>|\||```)/;

/**
 * The report's lines as its reader sees them: a paragraph's soft line breaks (an agent wraps at
 * 80 columns) are joined, so the gate wraps each paragraph to its own width once (the newcomer's
 * pass, defect 25: "Three tests cover the rules of" / "the spec." re-wrapped as two short rows).
 * A list item's continuation lines join their item; blank lines only separate.
 */
export function paragraphs(lines: readonly string[]): string[] {
  const out: string[] = [];
  let open = false;
  for (const raw of lines) {
    const line = raw.trimEnd();
    if (!line.trim()) {
      open = false;
      continue;
    }
    if (open && !OWN_LINE.test(line) && out.length > 0) out[out.length - 1] = `${out.at(-1)} ${line.trim()}`;
    else out.push(line);
    open = !/^\s*(#|\||```)/.test(line);
  }
  return out;
}
