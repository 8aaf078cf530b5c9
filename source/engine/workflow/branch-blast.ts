import type { BlastRadius } from '../protocol/report.js';
import type { WorkflowContext } from './context.js';

/**
 * The whole feature branch's blast radius (base_commit..HEAD), as git measures it: what the PR
 * will hold. Shown at the QA gate, where the human approves the pull request, and in the PR body
 * (issue 16 item 3: the gate showed only the QA report's own change).
 */

export interface BranchBlast {
  readonly blast: BlastRadius;
  readonly files: string[];
}

export async function measureBranchBlast(ctx: WorkflowContext): Promise<BranchBlast> {
  const base = ctx.workflow.base_commit ?? 'HEAD';
  const git = ctx.setup.git;
  const numstat = (await git.run(['diff', '--numstat', '-z', '--no-renames', base, 'HEAD'])).stdout.toString(
    'utf8',
  );
  const added = (await git.run(['diff', '--name-only', '-z', '--diff-filter=A', base, 'HEAD'])).stdout
    .toString('utf8')
    .split('\0')
    .filter(Boolean);
  const files: string[] = [];
  let linesAdded = 0;
  let linesDeleted = 0;
  for (const entry of numstat.split('\0').filter(Boolean)) {
    const [plus, minus, ...path] = entry.split('\t');
    files.push(path.join('\t'));
    linesAdded += Number(plus) || 0;
    linesDeleted += Number(minus) || 0;
  }
  return {
    blast: {
      files_touched: files.length,
      lines_added: linesAdded,
      lines_deleted: linesDeleted,
      new_files: added.length,
    },
    files,
  };
}

/** Tells the front ends: a `judge.finished` for the whole branch (scope `branch`, no verdict code). */
export function announceBranchBlast(ctx: WorkflowContext, measured: BranchBlast): void {
  const b = measured.blast;
  ctx.bus.emit({
    type: 'judge.finished',
    scope: 'branch',
    code: null,
    blast_radius: b,
    blast_radius_line: `${b.files_touched} file(s), +${b.lines_added}/-${b.lines_deleted}, ${b.new_files} new (the whole branch)`,
    violations: [],
    touched_paths: measured.files.slice(0, 200),
  });
}
