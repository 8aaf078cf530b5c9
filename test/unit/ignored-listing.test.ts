import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Git } from '../../source/engine/judge/git.js';
import {
  diffIgnored,
  type IgnoredSnapshot,
  snapshotIgnored,
} from '../../source/engine/judge/ignored-files.js';
import { ignoredNow } from '../../source/engine/judge/ignored-listing.js';
import { type IndexCopy, keepIndexCopy } from '../../source/engine/judge/index-copy.js';
import { computeTouchedSet } from '../../source/engine/judge/touched-set.js';

// Issue 17: after BUILD the ignored listing comes from the judge's own `git status
// --ignored=matching` pass instead of a second `git ls-files --others --ignored --directory`
// walk. Real repositories with the trees where the two forms could differ: for each change a
// builder could make, the judgement from the status listing is compared with the one from ls-files.

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
const write = (path: string, text = 'x\n') => {
  mkdirSync(join(dir, path, '..'), { recursive: true });
  writeFileSync(join(dir, path), text);
};

/** Folders that match a pattern, a re-included folder, nested and empty ignored folders, newlines. */
function trickyRepo(): Git {
  dir = mkdtempSync(join(tmpdir(), 'relais-ignored-listing-'));
  git('init', '-q', '-b', 'main');
  write(
    '.gitignore',
    [
      'node_modules/',
      '*.log',
      'cache/*',
      '!cache/keep/',
      'build',
      'nested/',
      'emptyign/',
      'dist/',
      '.env',
      'fifo/',
      'withtracked/',
      '',
    ].join('\n'),
  );
  write('src/a.ts');
  write('withtracked/t.txt');
  git('add', '.gitignore', 'src/a.ts');
  git('add', '-f', 'withtracked/t.txt');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'base');
  write('node_modules/a/b/c.js');
  write('node_modules/top.js');
  write('logs/a.log', 'a\n');
  write('logs/b.log', 'b\n');
  write('mixed/a.log');
  write('cache/keep/a.txt');
  write('cache/secret.txt');
  write('cache/sub/x');
  write('build/inner/o');
  write('nested/deeper/node_modules/z');
  mkdirSync(join(dir, 'emptyign'));
  write('untr/sub/u.log');
  write('untr/sub/node_modules/q');
  write('.env', 'SECRET=1\n');
  write('top.log');
  write('nl\ndir/f.log');
  write('nl\nfile.log');
  write('src/dist/x.js');
  write('withtracked/o.txt');
  mkdirSync(join(dir, 'fifo'));
  execFileSync('mkfifo', [join(dir, 'fifo/p')]);
  mkdirSync(join(dir, 'relais'));
  write('relais/state.json');
  appendFileSync(join(dir, '.git/info/exclude'), 'relais/\n');
  return new Git(dir);
}

interface Judged {
  readonly viaLsFiles: string[];
  readonly viaStatus: string[];
  /** The status listing had the snapshot's form (no ls-files fallback). */
  readonly rode: boolean;
}

/** The judgement both ways, the status one through the judge's real pass. */
async function judgeBothWays(g: Git, before: IgnoredSnapshot, index: IndexCopy): Promise<Judged> {
  const summary = (changes: Awaited<ReturnType<typeof diffIgnored>>) =>
    changes.map((c) => `${c.change} ${c.path}`);
  const viaLsFiles = summary(await diffIgnored(g, 'relais', before));
  let listed: { changed: readonly string[]; ignored: readonly string[] } | null = null;
  let viaStatus: string[] = [];
  const head = git('rev-parse', 'HEAD').trim();
  const touched = await computeTouchedSet(
    g,
    head,
    async (fromStatus) => {
      listed = fromStatus;
      const changes = await diffIgnored(g, 'relais', before, undefined, fromStatus);
      viaStatus = summary(changes);
      return changes;
    },
    [],
    [],
    index,
  );
  await touched.index.dispose();
  const status = listed as { changed: readonly string[]; ignored: readonly string[] } | null;
  const shown = (status?.ignored ?? []).filter((p) => p !== 'relais/');
  const rode = status !== null && ignoredNow(shown, status.changed, before.entries.keys()) !== null;
  return { viaLsFiles, viaStatus, rode };
}

async function snapshot(g: Git): Promise<{ before: IgnoredSnapshot; index: IndexCopy }> {
  const index = await keepIndexCopy(join(dir, '.git'));
  if (!index) throw new Error('no index');
  return { before: await snapshotIgnored(g, 'relais'), index };
}

describe('the ignored listing from the judge status pass', () => {
  it('lists what ls-files lists, grouped differently only in folders that match no pattern', async () => {
    trickyRepo();
    const ls = execFileSync(
      'git',
      ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory'],
      {
        cwd: dir,
        encoding: 'utf8',
      },
    ).split('\0');
    const records = (args: string[]) =>
      execFileSync('git', ['status', '--porcelain=v2', '-z', '--untracked-files=all', ...args], {
        cwd: dir,
        encoding: 'utf8',
      })
        .split('\0')
        .filter(Boolean);
    const matching = records(['--ignored=matching']);
    const ignored = matching.filter((r) => r.startsWith('! ')).map((r) => r.slice(2));
    const changed = matching.filter((r) => !r.startsWith('! ')).map((r) => r.slice(2));
    // The snapshot's form: without the workspace, and without paths inside a listed folder.
    const outer = ls.filter(
      (p) => p && p !== 'relais/' && !ls.some((f) => f.endsWith('/') && f !== p && p.startsWith(f)),
    );
    // Folders that match no pattern and hold only ignored files: whole for ls-files, file by file
    // for the status.
    const regrouped = ['logs/', 'mixed/', 'nl\ndir/', 'untr/'];
    expect(outer).toEqual(expect.arrayContaining(regrouped));
    expect(ignored.filter((p) => regrouped.includes(p))).toEqual([]);
    expect(ignored).toEqual(
      expect.arrayContaining(['logs/a.log', 'mixed/a.log', 'nl\ndir/f.log', 'untr/sub/u.log']),
    );
    // Mapped onto the snapshot's folders, the status listing is the ls-files listing.
    const mapped = ignoredNow(
      ignored.filter((p) => p !== 'relais/'),
      changed,
      outer,
    );
    expect(mapped?.sort()).toEqual([...outer].sort());
    // Empty and FIFO-only folders that match a pattern are listed by both.
    expect(ignored).toEqual(expect.arrayContaining(['emptyign/', 'fifo/', 'nested/', 'cache/secret.txt']));
    // The untracked records the judge stages are the same with and without the ignored listing.
    expect(matching.filter((r) => !r.startsWith('! '))).toEqual(records([]));
  });

  const sameJudgement: Array<[string, () => void]> = [
    ['nothing changed', () => undefined],
    [
      'a file inside an ignored folder edited',
      () => appendFileSync(join(dir, 'node_modules/a/b/c.js'), 'y\n'),
    ],
    ['a file created deep in an ignored folder', () => write('node_modules/a/b/new.js')],
    ['a file deleted inside an ignored folder', () => unlinkSync(join(dir, 'node_modules/top.js'))],
    ['an ignored .env edited', () => writeFileSync(join(dir, '.env'), 'SECRET=2\n')],
    ['an ignored .env deleted', () => unlinkSync(join(dir, '.env'))],
    ['a new ignored file at the top', () => write('new.log')],
    ['an ignored file beside a re-included folder', () => write('cache/secret2.txt')],
    ['a file in a re-included folder (git status judges it)', () => write('cache/keep/b.txt')],
    ['a file in an empty ignored folder', () => write('emptyign/first.txt')],
    ['the FIFO of a FIFO-only ignored folder deleted', () => unlinkSync(join(dir, 'fifo/p'))],
    ['a file in a nested ignored folder', () => write('nested/deeper/node_modules/z2')],
    ['an ignored file inside an untracked folder', () => write('untr/sub/new.log')],
    ['an ignored file with a newline in its name', () => write('nl\nnew.log')],
    ['an ignored file beside a tracked one', () => write('withtracked/p.txt')],
    ['a new folder of ignored files only', () => write('newlogs/deep/x.log')],
    ['a new ignored folder', () => write('dist/bundle.js')],
    [
      'a file edited in a folder only ls-files lists whole',
      () => appendFileSync(join(dir, 'logs/a.log'), 'more\n'),
    ],
    ['an ignored file added to that folder', () => write('logs/c.log')],
    ['a file git shows added to that folder (falls back)', () => write('logs/readme.txt')],
  ];

  for (const [what, change] of sameJudgement) {
    it(`judges the same paths both ways: ${what}`, async () => {
      const g = trickyRepo();
      const { before, index } = await snapshot(g);
      change();
      const judged = await judgeBothWays(g, before, index);
      expect(judged.viaStatus).toEqual(judged.viaLsFiles);
      expect(judged.rode).toBe(!what.includes('falls back'));
    });
  }

  it('sees every file of a folder emptied by the build, which ls-files no longer listed', async () => {
    const g = trickyRepo();
    const { before, index } = await snapshot(g);
    unlinkSync(join(dir, 'logs/a.log'));
    unlinkSync(join(dir, 'logs/b.log'));
    const judged = await judgeBothWays(g, before, index);
    // ls-files lists no empty folder that matches no pattern, so the old judgement missed both.
    expect(judged.viaLsFiles).toEqual([]);
    expect(judged.viaStatus).toEqual(['deleted logs/a.log', 'deleted logs/b.log']);
  });

  it('judges an ignored file the build edited and then staged with git add -f', async () => {
    const g = trickyRepo();
    const { before, index } = await snapshot(g);
    writeFileSync(join(dir, '.env'), 'SECRET=2\n');
    git('add', '-f', '.env');
    const judged = await judgeBothWays(g, before, index);
    // ls-files reads .git/index, which the build rewrote: .env is tracked there, so not listed.
    // The status pass reads the index kept from before BUILD, where .env is still ignored.
    expect(judged.viaLsFiles).toEqual([]);
    expect(judged.viaStatus).toEqual(['modified .env']);
  });
});
