import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Git } from '../../source/engine/judge/git.js';
import { damagedObjects, formatOfObjectId, snapshotObjects } from '../../source/engine/judge/object-guard.js';
import { checkAndRestore, guardGitControlFiles } from '../../source/engine/judge/protected-files.js';
import { changedRefs, restoreRefs, snapshotRefs } from '../../source/engine/judge/refs-guard.js';
import { readRepoFacts } from '../../source/engine/judge/repo.js';
import { findUnsafeFiles } from '../../source/engine/judge/unsafe-files.js';
import { workspacePaths } from '../../source/engine/workspace/paths.js';

// The issue 14 guards on a real repository, with the git operations a normal builder does (which
// must pass) next to the attacks (which must not).

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function repo(format = 'sha1'): { root: string; git: Git; sh: (...args: string[]) => string } {
  dir = mkdtempSync(join(tmpdir(), 'relais-guards-'));
  const root = join(dir, 'repo');
  mkdirSync(root);
  const sh = (...args: string[]) => {
    const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      cwd: root,
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  sh('init', '-q', '-b', 'main', `--object-format=${format}`);
  for (let i = 0; i < 5; i++) writeFileSync(join(root, `f${i}.txt`), `content ${i}\n`);
  sh('add', '-A');
  sh('commit', '-qm', 'one');
  writeFileSync(join(root, 'f0.txt'), 'changed\n');
  sh('commit', '-qam', 'two');
  return { root, git: new Git(root), sh };
}

async function factsOf(git: Git, root: string) {
  const read = await readRepoFacts(git, root);
  if (!read.ok) throw new Error(read.detail);
  return read.facts;
}

describe('object guard', () => {
  it('holds through a commit, a gc that packs every loose object, and a re-add of existing content', async () => {
    const { root, git, sh } = repo();
    const facts = await factsOf(git, root);
    const snapshot = await snapshotObjects(git, facts);
    expect(snapshot.loose.size).toBeGreaterThan(5);
    writeFileSync(join(root, 'f1.txt'), 'new\n');
    sh('commit', '-qam', 'three');
    sh('gc', '-q', '--prune=now');
    writeFileSync(join(root, 'f2.txt'), 'content 2\n');
    sh('add', 'f2.txt');
    expect(await damagedObjects(git, snapshot)).toEqual([]);
  });

  // HEAD's tree comes with the repository facts (issue 17: the commit no longer asks for the base
  // tree): it must be the tree git names for that commit, in either object format.
  it.each(['sha1', 'sha256'])('reads HEAD and its tree in one rev-parse (%s)', async (format) => {
    const { root, git, sh } = repo(format);
    const facts = await factsOf(git, root);
    expect(facts.head).toBe(sh('rev-parse', 'HEAD'));
    expect(facts.headTree).toEqual({ commit: facts.head, tree: sh('rev-parse', 'HEAD^{tree}') });
    expect(facts.headTree?.tree).not.toBe(sh('rev-parse', 'HEAD~1^{tree}'));
  });

  // The format comes from HEAD's id (issue 17: one git process less per guard): it must be the one
  // git reports, or every re-hash of a changed loose object would be compared with the wrong hash.
  it.each(['sha1', 'sha256'])('reads the object format (%s) from HEAD as git reports it', async (format) => {
    const { root, git, sh } = repo(format);
    const facts = await factsOf(git, root);
    expect(sh('rev-parse', '--show-object-format')).toBe(format);
    const snapshot = await snapshotObjects(git, facts);
    expect(snapshot.format).toBe(format);
    expect(formatOfObjectId('HEAD')).toBeNull();
    // A loose object written again with the same bytes (a new inode) is re-hashed with that
    // format and found intact; hashed with the other one it would be reported as changed.
    const blob = sh('rev-parse', 'HEAD:f1.txt');
    const path = join(facts.commonDir, 'objects', blob.slice(0, 2), blob.slice(2));
    const bytes = readFileSync(path);
    rmSync(path);
    writeFileSync(path, bytes);
    expect(await damagedObjects(git, snapshot)).toEqual([]);
  });

  it('names a loose object rewritten in place, and one replaced by another valid object', async () => {
    const { root, git, sh } = repo();
    const facts = await factsOf(git, root);
    const snapshot = await snapshotObjects(git, facts);
    const blob = sh('rev-parse', 'HEAD~1:f1.txt');
    const other = sh('rev-parse', 'HEAD:f0.txt');
    const sameSize = sh('rev-parse', 'HEAD:f2.txt');
    const pathOf = (oid: string) => join(facts.commonDir, 'objects', oid.slice(0, 2), oid.slice(2));
    chmodSync(pathOf(blob), 0o644);
    writeFileSync(pathOf(blob), 'garbage');
    const tree = sh('rev-parse', 'HEAD^{tree}');
    chmodSync(pathOf(tree), 0o644);
    writeFileSync(pathOf(tree), readFileSync(pathOf(other)));
    // Same size, same inode: only the change time says it moved (read as a number, not a bigint).
    const bytes = readFileSync(pathOf(sameSize));
    chmodSync(pathOf(sameSize), 0o644);
    writeFileSync(pathOf(sameSize), Buffer.alloc(bytes.length, 0x78));
    expect((await damagedObjects(git, snapshot)).sort()).toEqual(
      [blob, tree, sameSize].map((oid) => `object ${oid} was changed in .git/objects`).sort(),
    );
  });

  it('names a loose object that was deleted and is nowhere else', async () => {
    const { root, git, sh } = repo();
    const facts = await factsOf(git, root);
    const snapshot = await snapshotObjects(git, facts);
    const blob = sh('rev-parse', 'HEAD:f3.txt');
    rmSync(join(facts.commonDir, 'objects', blob.slice(0, 2), blob.slice(2)));
    expect(await damagedObjects(git, snapshot)).toEqual([`object ${blob} is missing from .git/objects`]);
  });

  it('names a pack whose bytes were changed', async () => {
    const { root, git, sh } = repo();
    sh('gc', '-q', '--prune=now');
    const facts = await factsOf(git, root);
    const snapshot = await snapshotObjects(git, facts);
    const pack = [...snapshot.packs.keys()].find((n) => n.endsWith('.pack')) as string;
    const path = join(facts.commonDir, 'objects', 'pack', pack);
    chmodSync(path, 0o644);
    const bytes = readFileSync(path);
    bytes[bytes.length - 30] = (bytes[bytes.length - 30] as number) ^ 0xff;
    writeFileSync(path, bytes);
    expect(await damagedObjects(git, snapshot)).toEqual([
      `pack ${pack.replace(/\.pack$/, '')} fails git verify-pack`,
    ]);
  });
});

describe('refs guard', () => {
  it('sees and undoes created, moved, deleted and packed refs, garbage included', async () => {
    const { root, git, sh } = repo();
    sh('branch', 'keep', 'HEAD~1');
    sh('tag', 'v1');
    const facts = await factsOf(git, root);
    const snapshot = await snapshotRefs(facts);
    const refs = () => sh('for-each-ref', '--format=%(refname) %(objectname)');
    const was = refs();
    sh('branch', 'evil');
    sh('branch', '-D', 'keep');
    sh('tag', '-f', 'v1', 'HEAD~1');
    sh('pack-refs', '--all');
    writeFileSync(join(facts.commonDir, 'refs', 'heads', 'main'), 'garbage\n');
    expect(await changedRefs(snapshot, facts)).toEqual(
      expect.arrayContaining(['packed-refs', 'refs/heads/keep', 'refs/heads/main', 'refs/tags/v1']),
    );
    const notes = await restoreRefs(snapshot, facts);
    expect(notes.length).toBeGreaterThan(0);
    expect(refs()).toBe(was);
    expect(await changedRefs(snapshot, facts)).toEqual([]);
    expect(await restoreRefs(snapshot, facts)).toEqual([]);
  });

  it('reads no FIFO planted among the refs (it would freeze the runner): it is a change, and goes', async () => {
    const { root, git, sh } = repo();
    const facts = await factsOf(git, root);
    const fifo = join(facts.commonDir, 'refs', 'heads', 'fifo');
    execFileSync('mkfifo', [fifo]);
    // Present before the snapshot: not kept (no bytes to keep), read by nobody.
    const snapshot = await snapshotRefs(facts);
    expect(snapshot.files.has(fifo)).toBe(false);
    expect(await changedRefs(snapshot, facts)).toEqual(['refs/heads/fifo']);
    expect(await restoreRefs(snapshot, facts)).toEqual(['removed ref refs/heads/fifo created by the tick']);
    expect(sh('for-each-ref', '--format=%(refname)', 'refs/heads/')).toBe('refs/heads/main');
  });

  it("keeps the ref the runner itself set aside for the run's commits", async () => {
    const { root, git, sh } = repo();
    const facts = await factsOf(git, root);
    const snapshot = await snapshotRefs(facts);
    sh('update-ref', 'refs/relais/recovered/run-1', 'HEAD');
    sh('update-ref', 'refs/relais/recovered/run-2', 'HEAD');
    expect(await restoreRefs(snapshot, facts, ['refs/relais/recovered/run-1'])).toEqual([
      'removed ref refs/relais/recovered/run-2 created by the tick',
    ]);
    expect(sh('for-each-ref', '--format=%(refname)', 'refs/relais/')).toBe('refs/relais/recovered/run-1');
  });
});

describe('unsafe files', () => {
  it('finds new hard links and FIFOs, not old ones, not .git, not the workspace', async () => {
    const { root } = repo();
    writeFileSync(join(dir, 'outside'), 'x');
    linkSync(join(dir, 'outside'), join(root, 'old-link'));
    spawnSync('mkfifo', [join(root, 'old-fifo')]);
    const since = Date.now() + 5_000;
    expect(await findUnsafeFiles(root, join(root, 'relais'), since)).toEqual([]);
    const all = await findUnsafeFiles(root, join(root, 'relais'), 0);
    expect(all.map((f) => `${f.kind} ${f.path}`)).toEqual(['FIFO old-fifo', 'hard link old-link']);
    mkdirSync(join(root, 'relais'));
    spawnSync('mkfifo', [join(root, 'relais', 'fifo')]);
    linkSync(join(root, 'f1.txt'), join(root, '.git', 'linked'));
    const again = await findUnsafeFiles(root, join(root, 'relais'), 0);
    expect(again.map((f) => f.path)).toEqual(['f1.txt', 'old-fifo', 'old-link']);
  });
});

describe('refs guard in a parallel lane (a linked worktree)', () => {
  it("restores the lane's own branch on STOP but never another lane's landing or branches", async () => {
    const { root, sh } = repo();
    const lane = join(dir, 'lane');
    sh('worktree', 'add', '-q', '-b', 'relais/lanes/task-1-1', lane);
    const laneGit = new Git(lane);
    const laneFacts = await factsOf(laneGit, lane);
    expect(laneFacts.gitDir).not.toBe(laneFacts.commonDir);
    const snapshot = await snapshotRefs(laneFacts);

    // Meanwhile, outside this lane: the merge queue lands another lane on main, and a third lane's
    // branch is made.
    writeFileSync(join(root, 'f3.txt'), 'landed by lane 2\n');
    sh('commit', '-qam', 'lane 2 landed');
    const landed = sh('rev-parse', 'main');
    sh('branch', 'relais/lanes/task-3-1');
    // This lane's builder moves its own branch (the tick's commit that is now being rolled back).
    const laneSh = (...args: string[]) =>
      spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
        cwd: lane,
        encoding: 'utf8',
      });
    writeFileSync(join(lane, 'f4.txt'), 'lane 1 work\n');
    laneSh('commit', '-qam', 'lane 1 tick');
    const laneBefore = snapshot.files.get(join(laneFacts.commonDir, 'refs/heads/relais/lanes/task-1-1'));
    expect(laneBefore).toBeDefined();

    await restoreRefs(snapshot, laneFacts);
    expect(sh('rev-parse', 'main')).toBe(landed);
    expect(sh('branch', '--list', 'relais/lanes/task-3-1')).toContain('task-3-1');
    expect(sh('rev-parse', 'relais/lanes/task-1-1')).toBe(laneBefore?.toString('utf8').trim());
  });
});

describe("git control guard in a parallel lane: another lane's branch removal", () => {
  // `git branch -D` (the merge queue removing a landed lane's branch) rewrites packed-refs through
  // a temp file at the top of the shared git folder: packed-refs.lock, then packed-refs.new, then
  // a rename onto packed-refs (seen with strace on git 2.39). A lane whose guard was taken while
  // packed-refs.new existed saw it gone after BUILD: a STOP its builder never caused (the
  // suspected race of parallel-lanes and parallel-budget under load). The test plays git's own
  // steps on the files in that order, so the interleaving is fixed, not left to the scheduler.
  it('is not a change of the lane, and leaves git able to delete the next branch', async () => {
    const { sh } = repo();
    sh('branch', 'relais/lanes/task-2-1');
    sh('branch', 'relais/lanes/task-3-1');
    const lane = join(dir, 'lane');
    sh('worktree', 'add', '-q', '-b', 'relais/lanes/task-1-1', lane);
    const laneFacts = await factsOf(new Git(lane), lane);
    const common = laneFacts.commonDir;

    // The other lane's removal, halfway: git holds the lock and has written the new file.
    writeFileSync(join(common, 'packed-refs.lock'), '');
    writeFileSync(join(common, 'packed-refs.new'), '# pack-refs with: peeled fully-peeled sorted \n');
    const guard = await guardGitControlFiles(laneFacts, [], { HOME: join(dir, 'home') });
    // ...and done: the new file renamed onto packed-refs, the lock dropped, the branch gone.
    renameSync(join(common, 'packed-refs.new'), join(common, 'packed-refs'));
    rmSync(join(common, 'packed-refs.lock'));
    rmSync(join(common, 'refs/heads/relais/lanes/task-2-1'));

    const judged = await checkAndRestore(guard, laneFacts, workspacePaths(lane, 'relais'));
    expect(judged.changes.map((c) => c.display)).toEqual([]);
    expect(existsSync(join(common, 'packed-refs.new'))).toBe(false);
    // Had the guard put the temp file back, this deletion would fail: git creates it O_EXCL.
    sh('branch', '-D', 'relais/lanes/task-3-1');
    expect(sh('branch', '--list', 'relais/lanes/*')).toBe('+ relais/lanes/task-1-1');
  });

  it('still sees a control file the builder changed in the shared git folder', async () => {
    const { sh } = repo();
    const lane = join(dir, 'lane');
    sh('worktree', 'add', '-q', '-b', 'relais/lanes/task-1-1', lane);
    const laneFacts = await factsOf(new Git(lane), lane);
    const guard = await guardGitControlFiles(laneFacts, [], { HOME: join(dir, 'home') });
    const config = join(laneFacts.commonDir, 'config');
    const before = readFileSync(config, 'utf8');
    writeFileSync(config, `${before}[core]\n\tfsmonitor = ./evil\n`);
    const judged = await checkAndRestore(guard, laneFacts, workspacePaths(lane, 'relais'));
    expect(judged.changes.map((c) => [c.kind, c.change])).toEqual([['git_internal', 'modified']]);
    expect(readFileSync(config, 'utf8')).toBe(before);
  });
});
