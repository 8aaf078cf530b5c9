// node bench/integrity-guards.mjs (after npm run build): what issue 14's judge guards add to a
// tick, on generated repositories of 1k and 20k tracked files (all objects loose, the worst case
// for the object guard, and once packed by gc). Each guard is timed alone, in-process, medians.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const load = (p) => import(join(ROOT, 'dist/engine/judge', p));
const { Git } = await load('git.js');
const { readRepoFacts } = await load('repo.js');
const { snapshotObjects, damagedObjects } = await load('object-guard.js');
const { snapshotRefs, changedRefs } = await load('refs-guard.js');
const { findUnsafeFiles } = await load('unsafe-files.js');
const { fileStamps, diskIndex } = await load('verified-tree.js');

const SIZES = (process.env.BENCH_SIZES ?? '1000,20000').split(',').map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'B',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'B',
  GIT_COMMITTER_EMAIL: 'b@b',
};
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, maxBuffer: 1 << 30 });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function time(fn) {
  const out = [];
  for (let i = 0; i < RUNS; i++) {
    const started = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return median(out);
}

function makeRepo(base, files) {
  const repo = join(base, `repo-${files}`);
  for (let i = 0; i < files; i++) {
    const dir = join(repo, 'src', `d${i % 100}`);
    if (i < 100) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${Math.floor(i / 100)}.ts`), `export const v${i} = ${i};\n`);
  }
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'generated');
  return repo;
}

const base = mkdtempSync(join(tmpdir(), 'relais-bench-guards-'));
try {
  console.log(`issue 14 judge guards (${RUNS} runs each, medians in ms; node ${process.version})`);
  for (const size of SIZES) {
    const repo = makeRepo(base, size);
    const g = new Git(repo, env);
    for (const layout of ['loose', 'packed']) {
      if (layout === 'packed') git(repo, 'gc', '-q', '--prune=now');
      const facts = (await readRepoFacts(g, repo)).facts;
      const objects = await snapshotObjects(g, facts);
      const refs = await snapshotRefs(facts);
      const index = join(base, 'index');
      execFileSync('git', ['read-tree', 'HEAD'], { cwd: repo, env: { ...env, GIT_INDEX_FILE: index } });
      const judgeIndex = { file: index, env: { GIT_INDEX_FILE: index }, dispose: async () => undefined };
      const reused = await diskIndex(g, judgeIndex);
      await reused.tree();
      const row = {
        'objects snapshot': await time(() => snapshotObjects(g, facts)),
        'objects check': await time(() => damagedObjects(g, objects)),
        'refs snapshot+check': await time(async () => changedRefs(await snapshotRefs(facts), facts)),
        'refs check': await time(() => changedRefs(refs, facts)),
        'unsafe-file walk': await time(() => findUnsafeFiles(repo, join(repo, 'relais'), 0)),
        'tree on disk, first': await time(async () => {
          const disk = await diskIndex(g, judgeIndex);
          await disk.tree();
          await disk.dispose();
        }),
        'tree on disk, again': await time(() => reused.tree()),
        'file stamps': await time(() => fileStamps(g, judgeIndex)),
      };
      console.log(
        `\n${size} files, ${objects.loose.size} loose objects, ${objects.packs.size} pack files (${layout})`,
      );
      for (const [name, ms] of Object.entries(row)) console.log(`  ${name.padEnd(22)} ${ms.toFixed(1)}`);
    }
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
