import { cp, mkdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { identityEnv } from '../judge/commit.js';
import { Git } from '../judge/git.js';
import { loadSetup } from '../session/preflight.js';
import { recoverInterruptedRun } from '../session/recover.js';
import type { WorkspacePaths } from '../workspace/paths.js';
import {
  type LaneRecord,
  readLaneRecords,
  removeLaneRecord,
  worktreesDir,
  writeLaneRecord,
} from './lane-record.js';

/**
 * Runner-owned git worktrees (issue 19): one per lane attempt, under `relais/worktrees/`, on its
 * own branch `relais/lanes/<name>` from the integration branch. A worktree is never reused: a new
 * attempt gets a new name. It is removed after its task merges, kept after a failure (path shown,
 * `relais worktrees` lists and prunes), and one left by a killed runner is an orphan the next
 * start recovers. Removing one never loses work: its commits and any uncommitted change are kept
 * at `refs/relais/recovered/lanes/<name>` first.
 */

/** Files of the main workspace a tick in the lane needs (prompts, schemas, the ledger, FACTS.md). */
const SEEDED = ['prompts', 'schemas', 'history', 'STATE.json', 'FACTS.md'];

export interface Worktree {
  readonly name: string;
  readonly path: string;
  readonly branch: string;
  readonly base: string;
}

export class WorktreeManager {
  private readonly git: Git;
  /** Creations one after another: two attempts at one task must never pick the same free name. */
  private creating: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly paths: WorkspacePaths,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.git = new Git(paths.root, env);
  }

  /** A fresh worktree for `task` at `base`: a name no worktree, branch or record has used. */
  create(task: number, base: string, now: Date): Promise<Worktree> {
    const made = this.creating.then(() => this.createNow(task, base, now));
    this.creating = made.catch(() => undefined);
    return made;
  }

  private async createNow(task: number, base: string, now: Date): Promise<Worktree> {
    const dir = worktreesDir(this.paths);
    await mkdir(dir, { recursive: true });
    const { records } = await readLaneRecords(this.paths);
    let attempt = 1;
    let name = `task-${task}-${attempt}`;
    while (
      records.some((r) => r.name === name) ||
      (await exists(join(dir, name))) ||
      (await this.git.run(['rev-parse', '--verify', '-q', `refs/heads/relais/lanes/${name}`])).code === 0
    )
      name = `task-${task}-${++attempt}`;
    const tree: Worktree = { name, path: join(dir, name), branch: `relais/lanes/${name}`, base };
    // Recorded before git creates anything: a kill -9 in between leaves a record, not a stray tree.
    await writeLaneRecord(this.paths, {
      ...tree,
      task,
      state: 'running',
      pid: process.pid,
      created_at: now.toISOString(),
      detail: null,
    });
    await this.git.ok(['worktree', 'add', '-q', '-b', tree.branch, tree.path, base]);
    const laneWorkspace = join(tree.path, this.paths.relDir);
    await mkdir(laneWorkspace, { recursive: true });
    for (const entry of SEEDED) {
      const from = join(this.paths.dir, entry);
      if (await exists(from)) await cp(from, join(laneWorkspace, entry), { recursive: true });
    }
    return tree;
  }

  /** After a merge: the worktree, its branch and its record go (its commits are on the branch). */
  async remove(tree: Worktree): Promise<void> {
    await this.git.run(['worktree', 'remove', '--force', tree.path]);
    await this.git.run(['branch', '-D', tree.branch]);
    await this.git.run(['worktree', 'prune']);
    await removeLaneRecord(this.paths, tree.name);
  }

  /** After a failure: the worktree stays for a human, marked kept, with why. */
  async keep(tree: Worktree, task: number, detail: string, now: Date): Promise<void> {
    await writeLaneRecord(this.paths, {
      ...tree,
      task,
      state: 'kept',
      pid: process.pid,
      created_at: now.toISOString(),
      detail: detail.slice(0, 2000),
    });
  }

  async list(): Promise<{ records: LaneRecord[]; invalid: string[] }> {
    return readLaneRecords(this.paths);
  }

  /**
   * Removes a kept or orphaned worktree without losing anything: a tick the kill cut short is
   * recovered first (the tick's own recovery: its agent ended, its base restored, its work kept),
   * then uncommitted changes are committed on the lane branch, the branch is kept at
   * `refs/relais/recovered/lanes/<name>`, and the lane's recovered files move to the main
   * workspace. Returns where the work is, for the log.
   */
  async preserveAndRemove(record: LaneRecord): Promise<string> {
    const kept: string[] = [];
    if (await exists(record.path)) {
      const setup = await loadSetup(record.path, this.env);
      if (setup.ok) {
        const recovery = await recoverInterruptedRun(setup.setup.git, setup.setup.facts, setup.setup.paths);
        if (recovery.kind === 'failed') kept.push(`tick recovery: ${recovery.detail}`);
      }
      const lane = new Git(record.path, this.env);
      const dirty = (await lane.run(['status', '--porcelain', '--untracked-files=all'])).stdout.length > 0;
      if (dirty) {
        await lane.ok(['add', '-A']);
        await lane.ok(
          ['commit', '-q', '--no-verify', '-m', `relais: uncommitted work of lane ${record.name}`],
          {
            env: await identityEnv(lane),
          },
        );
      }
      const recovered = join(record.path, this.paths.relDir, 'recovered');
      if (await exists(recovered)) {
        const to = join(this.paths.recoveredDir, `lane-${record.name}`);
        await mkdir(this.paths.recoveredDir, { recursive: true });
        await rename(recovered, to);
        kept.push(to);
      }
    }
    const head = await this.git.run(['rev-parse', '--verify', '-q', `refs/heads/${record.branch}`]);
    const commit = head.stdout.toString('utf8').trim();
    if (head.code === 0 && commit !== record.base) {
      const ref = `refs/relais/recovered/lanes/${record.name}`;
      await this.git.ok(['update-ref', ref, commit]);
      kept.unshift(ref);
    }
    await this.remove({ name: record.name, path: record.path, branch: record.branch, base: record.base });
    return kept.length > 0 ? kept.join(', ') : 'nothing to keep (no change)';
  }
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null)) !== null;
}
