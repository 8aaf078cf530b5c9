import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Git } from '../../source/engine/judge/git.js';

/**
 * A small committed git repository for a replayed agent to "work" in: the evidence watcher reads
 * its tree, as the workflow's does the project's.
 */
export interface ReplayRepo {
  readonly root: string;
  readonly git: Git;
  /** Back to the first commit, nothing untracked: the next case starts clean. */
  reset(): void;
  dispose(): void;
}

export function replayRepo(): ReplayRepo {
  const root = mkdtempSync(join(tmpdir(), 'relais-corpus-repo-'));
  const git = (...args: string[]) => {
    const r = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  };
  git('init', '-q', '-b', 'main');
  writeFileSync(join(root, 'README.md'), '# replay\n');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'initial');
  return {
    root,
    git: new Git(root, process.env),
    reset: () => {
      git('reset', '-q', '--hard');
      git('clean', '-qfdx');
    },
    dispose: () => rmSync(root, { recursive: true, force: true }),
  };
}
