import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Git } from '../../source/engine/judge/git.js';
import { readGitSideState } from '../../source/engine/judge/git-side-state.js';
import { refsMayExistUnder } from '../../source/engine/judge/refs-may-exist.js';

// The judge lists replace refs (and `relais status` recovered refs) only when git's files could
// hold one. A real repository each time: a ref made by git itself, loose or packed, must always
// say "may exist", and the judge must then name it.

let repo: string;
const git = (...args: string[]) =>
  execFileSync('git', args, {
    cwd: repo,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  }).trim();
const common = () => join(repo, '.git');

beforeEach(() => {
  repo = mkdtempSync(join(tmpdir(), 'relais-refs-may-exist-'));
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'a.txt'), 'a\n');
  git('add', 'a.txt');
  git('commit', '-qm', 'a');
});
afterEach(() => rmSync(repo, { recursive: true, force: true }));

function replaceBlob(): string {
  const original = git('rev-parse', 'HEAD:a.txt');
  const cheat = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: repo, input: 'cheat\n' })
    .toString()
    .trim();
  git('replace', original, cheat);
  return `refs/replace/${original}`;
}

describe('refsMayExistUnder', () => {
  it('says no for a repository without any, even with other refs packed', () => {
    git('tag', 'v1');
    git('pack-refs', '--all');
    expect(refsMayExistUnder(common(), 'refs/replace')).toBe(false);
    expect(refsMayExistUnder(common(), 'refs/relais/recovered')).toBe(false);
  });

  it('says yes for a loose ref, and for the same ref once packed', () => {
    replaceBlob();
    expect(refsMayExistUnder(common(), 'refs/replace')).toBe(true);
    git('pack-refs', '--all');
    rmSync(join(common(), 'refs/replace'), { recursive: true, force: true });
    expect(refsMayExistUnder(common(), 'refs/replace')).toBe(true);
    // A name that only starts the same is another ref.
    expect(refsMayExistUnder(common(), 'refs/replac')).toBe(false);
  });

  it('says yes when in doubt: a reftable, or a packed-refs it cannot read', () => {
    mkdirSync(join(common(), 'reftable'));
    expect(refsMayExistUnder(common(), 'refs/replace')).toBe(true);
    rmSync(join(common(), 'reftable'), { recursive: true });
    mkdirSync(join(common(), 'packed-refs'));
    expect(refsMayExistUnder(common(), 'refs/replace')).toBe(true);
  });

  it('never waits on a packed-refs that is a FIFO or a link to a device: git is asked', () => {
    execFileSync('mkfifo', [join(common(), 'packed-refs')]);
    // A blocking read would hang here (nothing ever writes the FIFO), and the test with it.
    expect(refsMayExistUnder(common(), 'refs/replace')).toBe(true);
    rmSync(join(common(), 'packed-refs'));
    symlinkSync('/dev/zero', join(common(), 'packed-refs'));
    expect(refsMayExistUnder(common(), 'refs/replace')).toBe(true);
    // A regular file of gigabytes is not read either (a sparse one here: nothing is written).
    rmSync(join(common(), 'packed-refs'));
    writeFileSync(join(common(), 'packed-refs'), '');
    truncateSync(join(common(), 'packed-refs'), 2000 * 1024 * 1024);
    expect(refsMayExistUnder(common(), 'refs/replace')).toBe(true);
  });

  it('the judge finds none where none can exist, then names one made since', async () => {
    const judgeGit = new Git(repo, process.env);
    judgeGit.pin(common(), common());
    expect((await readGitSideState(judgeGit)).replaceRefs.size).toBe(0);
    const ref = replaceBlob();
    expect([...(await readGitSideState(judgeGit)).replaceRefs]).toEqual([ref]);
  });
});
