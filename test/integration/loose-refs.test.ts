import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { countLooseRefs, LOOSE_REFS_LIMIT } from '../../source/engine/judge/compact-refs.js';
import { builderWrites, TestProject, task } from '../support/project.js';
import { successfulTick } from '../support/successful-tick.js';

// Relais runs git with gc.auto=0, so nothing of its own ever packs loose refs; the refs guard reads
// every ref file before each BUILD (issue 17: 10,000 loose tags were about 0.2 s of every tick).
// After a tick that committed, the runner packs them past LOOSE_REFS_LIMIT
// (judge/compact-refs.ts). These ticks run the real CLI on a real repository.

let project: TestProject;
afterEach(() => project?.dispose());

/** `count` tags as `git tag` leaves them before any `git pack-refs`: one file each. */
function addLooseTags(p: TestProject, count: number): void {
  const head = `${p.git('rev-parse', 'HEAD').trim()}\n`;
  const dir = join(p.root, '.git/refs/tags/bulk');
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < count; i++) writeFileSync(join(dir, `t${i}`), head);
}

/** The tags git can read (git show-ref would stop at the garbage ref). */
const bulkTags = (p: TestProject) =>
  p.git('for-each-ref', '--format=%(objectname) %(refname)', 'refs/tags/bulk/');

const looseTags = (p: TestProject) =>
  countLooseRefs(join(p.root, '.git/refs/tags'), Number.POSITIVE_INFINITY);

describe('loose refs after a committed tick', () => {
  it('are packed past the limit: every tag keeps its value, a ref git cannot read stays as it was', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    addLooseTags(project, LOOSE_REFS_LIMIT + 100);
    writeFileSync(join(project.root, '.git/refs/tags/garbage'), 'not an object id\n');
    const tags = bulkTags(project);
    expect(tags.trim().split('\n')).toHaveLength(LOOSE_REFS_LIMIT + 100);

    const stdout = successfulTick(project);
    expect(stdout).toContain('packed the loose git refs');
    expect(bulkTags(project)).toBe(tags);
    // Only the file git could not read is left loose (and untouched).
    expect(looseTags(project)).toBe(1);
    expect(readdirSync(join(project.root, '.git/refs/tags'))).toEqual(['garbage']);
    expect(project.read('.git/refs/tags/garbage')).toBe('not an object id\n');
    expect(project.status()).toBe('');

    // The next tick takes its guards from packed-refs, commits, and the tags still hold.
    successfulTick(project);
    expect(bulkTags(project)).toBe(tags);
  });

  it('are left loose while another checkout shares them (a lane may be judging)', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.git('worktree', 'add', '-q', '--detach', join(project.base, 'other-checkout'));
    addLooseTags(project, LOOSE_REFS_LIMIT + 100);
    const stdout = successfulTick(project);
    expect(stdout).not.toContain('packed the loose git refs');
    expect(looseTags(project)).toBe(LOOSE_REFS_LIMIT + 100);
  });

  it('are left loose up to the limit, and after a tick that did not commit', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    addLooseTags(project, LOOSE_REFS_LIMIT - 30);
    successfulTick(project);
    expect(looseTags(project)).toBe(LOOSE_REFS_LIMIT - 30);

    addLooseTags(project, LOOSE_REFS_LIMIT + 100);
    // The builder writes outside its scope: STOP, rollback, no commit, nothing packed.
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'docs/outside.md': 'no\n' })],
    });
    const run = project.cliSync(['run']);
    expect(project.report().verdict, run.stdout).toBe('stop');
    expect(looseTags(project)).toBe(LOOSE_REFS_LIMIT + 100);
    const packed = existsSync(join(project.root, '.git/packed-refs')) ? project.read('.git/packed-refs') : '';
    expect(packed).not.toContain('refs/tags/bulk/');
  });
});

describe('refs git does not pack', () => {
  it('are said to stay loose, not called packed', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    // Tags naming an object the repository does not have: git leaves them loose.
    const dir = join(project.root, '.git/refs/tags/broken');
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < LOOSE_REFS_LIMIT + 50; i++) writeFileSync(join(dir, `t${i}`), `${'ab'.repeat(20)}\n`);
    const stdout = successfulTick(project);
    expect(stdout).not.toContain('packed the loose git refs');
    expect(stdout).toContain(`${LOOSE_REFS_LIMIT + 50} ref files stay under .git/refs after git pack-refs`);
    expect(looseTags(project)).toBe(LOOSE_REFS_LIMIT + 50);
  });
});

describe('what is never packed', () => {
  it('lock files and dot files under refs/ are not counted as refs: no pack is tried for them', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    const dir = join(project.root, '.git/refs/tags');
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < LOOSE_REFS_LIMIT + 50; i++)
      writeFileSync(join(dir, i % 2 ? `t${i}.lock` : `.t${i}`), 'x\n');
    const stdout = successfulTick(project);
    expect(stdout).not.toContain('packing');
    expect(countLooseRefs(join(project.root, '.git/refs'), Number.POSITIVE_INFINITY)).toBe(1);
  });

  it('a FIFO among the refs stops the pack before git could block on it, and says so', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    addLooseTags(project, LOOSE_REFS_LIMIT + 100);
    expect(spawnSync('mkfifo', [join(project.root, '.git/refs/tags/bulk/fifo')]).status).toBe(0);
    const stdout = successfulTick(project);
    expect(stdout).toContain('loose git refs left unpacked:');
    expect(stdout).toContain('refs/tags/bulk/fifo is neither a file nor a folder');
    expect(looseTags(project)).toBe(LOOSE_REFS_LIMIT + 101);
  });
});

describe('counting loose refs', () => {
  it('counts files in nested folders and stops at the bound', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    addLooseTags(project, 50);
    const refs = join(project.root, '.git/refs');
    const all = countLooseRefs(refs, Number.POSITIVE_INFINITY);
    // The 50 tags and the branch.
    expect(all).toBe(51);
    expect(countLooseRefs(refs, 10)).toBe(10);
    expect(countLooseRefs(join(project.root, '.git/no-such-folder'), 10)).toBe(0);
  });
});
