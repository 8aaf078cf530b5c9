import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitFoldersReadOnly } from '../../source/engine/sandbox/git-read-only.js';
import { bwrapSandboxValue } from '../support/sandbox-value.js';

// Issue 17: the judge drops its per-object snapshot of .git/objects only when no sandboxed
// process can write the git folders; every doubtful layout keeps the guard.

let dir: string;
let root: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'relais-git-ro-')));
  root = join(dir, 'repo');
  for (const folder of ['.git/objects', 'relais', 'gitdata', 'src'])
    mkdirSync(join(root, folder), { recursive: true });
  mkdirSync(join(dir, 'elsewhere.git', 'objects'), { recursive: true });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const sandbox = (writableOutside: string[] = []) => bwrapSandboxValue(root, { writableOutside });

describe('git folders read-only inside the sandbox', () => {
  it("holds for the repository's own .git, and for a linked worktree's folder inside it", () => {
    mkdirSync(join(root, '.git/worktrees/lane'), { recursive: true });
    expect(gitFoldersReadOnly(sandbox(), [join(root, '.git'), join(root, '.git')])).toBe(true);
    expect(gitFoldersReadOnly(sandbox(), [join(root, '.git/worktrees/lane'), join(root, '.git')])).toBe(true);
  });

  it('does not hold without the sandbox', () => {
    expect(gitFoldersReadOnly({ kind: 'off' }, [join(root, '.git')])).toBe(false);
    expect(gitFoldersReadOnly({ kind: 'unavailable', reason: 'x' }, [join(root, '.git')])).toBe(false);
  });

  it('holds for a git dir outside the repository only while no writable_outside folder touches it', () => {
    const gitDir = join(dir, 'elsewhere.git');
    expect(gitFoldersReadOnly(sandbox(), [gitDir])).toBe(true);
    expect(gitFoldersReadOnly(sandbox([join(dir, 'other')]), [gitDir])).toBe(true);
    for (const writable of [gitDir, dir, join(gitDir, 'objects')])
      expect(gitFoldersReadOnly(sandbox([writable]), [gitDir]), writable).toBe(false);
  });

  it('does not hold for a git dir elsewhere in the tree, or one that does not resolve', () => {
    expect(gitFoldersReadOnly(sandbox(), [join(root, 'gitdata')])).toBe(false);
    expect(gitFoldersReadOnly(sandbox(), [join(root, '.git'), join(dir, 'gone')])).toBe(false);
  });
});
