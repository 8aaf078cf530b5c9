import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  applyChange,
  ChangeNotApplied,
  changeBetween,
  treeOf,
  workTreeOf,
} from '../../source/engine/fleet/tree-change.js';

// Issue 20: what an agent call did to the worktree, kept as a binary diff between two trees and
// applied again on a re-created checkout (agent-memo.ts). Real git repositories in temp dirs.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd }).toString();

/** A repository with a commit, relais/ excluded as `relais init` does, and a clone of it. */
function repoAndClone(): { repo: string; clone: string } {
  const base = mkdtempSync(join(tmpdir(), 'relais-tree-change-'));
  dirs.push(base);
  const repo = join(base, 'repo');
  mkdirSync(repo);
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'kept.txt'), 'kept\n');
  writeFileSync(join(repo, 'gone.txt'), 'gone\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'base');
  const clone = join(base, 'clone');
  git(base, 'clone', '-q', repo, clone);
  for (const dir of [repo, clone]) writeFileSync(join(dir, '.git', 'info', 'exclude'), '/relais/\n');
  return { repo, clone };
}

describe('an agent call’s change to the worktree', () => {
  it('is kept with untracked and binary files and deletions, and lands on a clone as the same tree', async () => {
    const { repo, clone } = repoAndClone();
    const here = await workTreeOf(join(repo), process.env);
    const there = await workTreeOf(clone, process.env);
    if (!here || !there) throw new Error('not worktrees');
    const before = await treeOf(here);
    expect(await treeOf(there)).toBe(before);
    // The call: an edit, a new untracked file in a new folder, a binary file, a deletion; and the
    // runner writes its own files meanwhile (not the agent's change).
    writeFileSync(join(repo, 'kept.txt'), 'kept, edited\n');
    mkdirSync(join(repo, 'src'));
    writeFileSync(join(repo, 'src', 'new.ts'), 'export const x = 1;\n');
    writeFileSync(join(repo, 'blob.bin'), Buffer.from([0, 1, 2, 255, 0, 7]));
    unlinkSync(join(repo, 'gone.txt'));
    mkdirSync(join(repo, 'relais'));
    writeFileSync(join(repo, 'relais', 'WORKFLOW.json'), '{}');
    const after = await treeOf(here);
    expect(after).not.toBe(before);
    const change = await changeBetween(here, before, after);
    if (!change) throw new Error('no change');

    await applyChange(there, change, after);
    expect(readFileSync(join(clone, 'kept.txt'), 'utf8')).toBe('kept, edited\n');
    expect(readFileSync(join(clone, 'src', 'new.ts'), 'utf8')).toBe('export const x = 1;\n');
    expect([...readFileSync(join(clone, 'blob.bin'))]).toEqual([0, 1, 2, 255, 0, 7]);
    expect(existsSync(join(clone, 'gone.txt'))).toBe(false);
    expect(existsSync(join(clone, 'relais'))).toBe(false);
    // Neither repository's index or HEAD moved: the trees went through a temporary index.
    expect(git(repo, 'status', '--porcelain')).toContain('?? src/');
    expect(git(clone, 'diff', '--cached', '--name-only')).toBe('');
  });

  it('a change that does not apply leaves the tree as it was and says so', async () => {
    const { repo, clone } = repoAndClone();
    const here = await workTreeOf(repo, process.env);
    const there = await workTreeOf(clone, process.env);
    if (!here || !there) throw new Error('not worktrees');
    const before = await treeOf(here);
    writeFileSync(join(repo, 'kept.txt'), 'edited here\n');
    writeFileSync(join(repo, 'other.txt'), 'new\n');
    const after = await treeOf(here);
    const change = await changeBetween(here, before, after);
    if (!change) throw new Error('no change');
    // The clone is not where the call started: its kept.txt differs.
    writeFileSync(join(clone, 'kept.txt'), 'something else\n');
    const start = await treeOf(there);
    await expect(applyChange(there, change, after)).rejects.toThrow(ChangeNotApplied);
    expect(await treeOf(there)).toBe(start);
    expect(existsSync(join(clone, 'other.txt'))).toBe(false);
  });

  it('outside a git worktree there is nothing to keep', async () => {
    const plain = mkdtempSync(join(tmpdir(), 'relais-tree-change-plain-'));
    dirs.push(plain);
    expect(await workTreeOf(plain, process.env)).toBeNull();
  });
});
