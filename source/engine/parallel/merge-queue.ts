import { identityEnv } from '../judge/commit.js';
import { Git } from '../judge/git.js';
import type { VerificationRun } from '../protocol/report.js';
import type { Worktree } from './worktrees.js';

/**
 * The merge queue (issue 19): one lane lands at a time. Its verified branch is rebased onto the
 * current integration branch, the project's checks run again on that merged tree, and only then
 * does the integration branch fast-forward to it. A conflict or a check that fails after the
 * rebase lands nothing and says why; the caller re-runs the task once on the new base, then asks
 * a human. Nothing is ever merged unverified: a tree the rebase changed and no check can verify
 * does not land either.
 */

export interface ChecksResult {
  readonly runs: VerificationRun[];
  readonly problem: string | null;
  readonly aborted: boolean;
  readonly none: boolean;
}

export type MergeStep = 'queued' | 'rebasing' | 'checking' | 'landed' | 'conflict' | 'check_failed';

export type LandOutcome =
  | { kind: 'landed'; commit: string; rebased: boolean; runs: VerificationRun[] }
  | { kind: 'conflict'; files: string[]; detail: string }
  | { kind: 'check_failed'; detail: string; runs: VerificationRun[] }
  | { kind: 'aborted' };

export interface MergePorts {
  /** The integration branch's repository (the main worktree), its git pinned. */
  readonly integration: Pick<Git, 'ok' | 'text'>;
  readonly env: NodeJS.ProcessEnv;
  /** The project's checks in a lane's tree (workflow/project-checks.ts in the workflow). */
  checks(tree: Worktree, git: Git, signal: AbortSignal): Promise<ChecksResult>;
  /** Told each step, for the Lanes panel and the log. */
  onStep?(lane: string, step: MergeStep, detail: string | null): void;
}

export class MergeQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private readonly queued: string[] = [];

  constructor(private readonly ports: MergePorts) {}

  /** Lanes waiting to land, first in line first. */
  get waiting(): readonly string[] {
    return this.queued;
  }

  /**
   * Lands `tree` after every lane queued before it. `afterLanded` runs inside the queue (the
   * task's status commit on the integration branch), so no other lane moves the branch meanwhile.
   */
  land(
    tree: Worktree,
    signal: AbortSignal,
    afterLanded: (commit: string) => Promise<void>,
  ): Promise<LandOutcome> {
    this.queued.push(tree.name);
    this.ports.onStep?.(tree.name, 'queued', null);
    const run = this.tail.then(async () => {
      try {
        return await this.landNow(tree, signal, afterLanded);
      } finally {
        this.queued.splice(this.queued.indexOf(tree.name), 1);
      }
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async landNow(
    tree: Worktree,
    signal: AbortSignal,
    afterLanded: (commit: string) => Promise<void>,
  ): Promise<LandOutcome> {
    if (signal.aborted) return { kind: 'aborted' };
    const step = (s: MergeStep, detail: string | null = null) => this.ports.onStep?.(tree.name, s, detail);
    const lane = new Git(tree.path, this.ports.env);
    const target = await this.ports.integration.text(['rev-parse', 'HEAD']);
    const verified = await lane.text(['rev-parse', 'HEAD']);
    const base = await lane.text(['merge-base', target, verified]);
    let rebased = false;
    if (base !== target) {
      step('rebasing', `onto ${target.slice(0, 12)}`);
      const rebase = await lane.run(['rebase', '-q', target], { env: await identityEnv(lane) });
      if (rebase.code !== 0) {
        const unmerged = await lane.run(['diff', '--name-only', '--diff-filter=U']);
        const files = unmerged.stdout.toString('utf8').split('\n').filter(Boolean);
        await lane.run(['rebase', '--abort']);
        const detail = `rebasing ${tree.branch} onto ${target.slice(0, 12)} conflicts in ${files.join(', ') || '(git named no file)'}`;
        step('conflict', detail);
        return { kind: 'conflict', files, detail };
      }
      rebased = true;
    }
    step('checking', rebased ? 'the rebased tree' : 'the verified tree');
    const checks = await this.ports.checks(tree, lane, signal);
    if (checks.aborted) return { kind: 'aborted' };
    const problem =
      checks.problem ??
      (checks.none && rebased
        ? 'no parameter-free verification template is configured, so the rebased tree cannot be verified'
        : null);
    if (problem) {
      const detail = `after rebasing onto ${target.slice(0, 12)}: ${problem}`;
      step('check_failed', detail);
      return { kind: 'check_failed', detail, runs: checks.runs };
    }
    const head = await lane.text(['rev-parse', 'HEAD']);
    // By commit, not by branch name: what lands is exactly the tree that was just checked.
    await this.ports.integration.ok(['merge', '--ff-only', '-q', head]);
    await afterLanded(head);
    step('landed', head.slice(0, 12));
    return { kind: 'landed', commit: head, rebased, runs: checks.runs };
  }
}
