#!/usr/bin/env node
// What `relais cycle init` produces on real repositories, and its numbers: the detection, the
// living docs' tokens (4 characters a token, the cycle's estimate) against the 5,000 cap, and the
// wall time. The mapper agent is test/support/scripted-mapper.mjs (no model: docs laid out from
// the runner's facts). Usage: npm run build && node bench/cycle-init-map.mjs [repo...]
// (default: examples/demo-project and this repository). Each repository is copied to a temp
// folder (its tracked files, committed), never touched.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist/cli/main.cjs');
const MAPPER = join(ROOT, 'test/support/scripted-mapper.mjs');
// The seven living docs, as the mapper itself names them (built by `npm run build`).
const { LIVING_DOCS: DOCS } = await import(join(ROOT, 'dist/engine/cycle/mapper/living-docs.js'));
const ANSWERS = {
  vision: 'Measure the mapper.',
  users: 'The bench.',
  success: ['the docs fit the cap'],
  stack: 'as mapped',
  requirements: [{ id: 'R1', text: 'map' }],
  phases: [{ id: 'P1', name: 'map', goal: 'map it', requirements: ['R1'], success: ['mapped'] }],
};

function sh(cmd, args, cwd, env = process.env) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

function copyTracked(source, target) {
  const isRepo = spawnSync('git', ['rev-parse', '--show-toplevel'], { cwd: source, encoding: 'utf8' });
  sh('git', ['init', '-q', '-b', 'main'], target);
  if (isRepo.status === 0 && resolve(isRepo.stdout.trim()) === resolve(source)) {
    // Tracked files at HEAD only (git archive), with a history of one commit.
    const tar = spawnSync('git', ['archive', 'HEAD'], { cwd: source, maxBuffer: 512 << 20 });
    spawnSync('tar', ['-x', '-C', target], { input: tar.stdout });
  } else sh('cp', ['-R', `${source}/.`, target], ROOT);
  sh('git', ['add', '-A'], target);
  sh(
    'git',
    ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'commit', '-q', '-m', 'snapshot'],
    target,
  );
}

for (const source of process.argv.slice(2).length
  ? process.argv.slice(2)
  : [join(ROOT, 'examples/demo-project'), ROOT]) {
  const base = mkdtempSync(join(tmpdir(), 'relais-map-bench-'));
  const repo = join(base, 'repo');
  try {
    sh('mkdir', ['-p', repo], base);
    copyTracked(source, repo);
    const env = { ...process.env, HOME: base, XDG_CONFIG_HOME: join(base, '.config'), CI: 'true' };
    sh(process.execPath, [CLI, 'init'], repo, env);
    const config = JSON.parse(readFileSync(join(repo, 'relais.config.json'), 'utf8'));
    config.claude_code_cli.command = MAPPER;
    writeFileSync(join(repo, 'relais.config.json'), JSON.stringify(config, null, 2));
    sh('git', ['add', 'relais.config.json'], repo);
    sh('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'commit', '-qm', 'relais'], repo);
    writeFileSync(join(base, 'answers.json'), JSON.stringify(ANSWERS));
    const started = performance.now();
    const out = sh(
      process.execPath,
      [CLI, 'cycle', 'init', '--answers', join(base, 'answers.json'), '--confirm'],
      repo,
      env,
    );
    const ms = Math.round(performance.now() - started);
    console.log(`\n== ${source}`);
    for (const line of out.split('\n').filter((l) => /^(Codebase|Living docs|Mapping failed)/.test(l)))
      console.log(line);
    let total = 0;
    for (const d of DOCS) {
      let text = '';
      try {
        text = readFileSync(join(repo, 'specs/p12', d), 'utf8');
      } catch {}
      const tokens = Math.ceil(text.length / 4);
      total += tokens;
      console.log(`  ${d.padEnd(14)} ${String(tokens).padStart(5)} tokens`);
    }
    console.log(`  total          ${String(total).padStart(5)} tokens (cap 4999); cycle init took ${ms} ms`);
    if (process.env.SHOW_DOCS)
      for (const d of DOCS) console.log(`\n--- ${d}\n${readFileSync(join(repo, 'specs/p12', d), 'utf8')}`);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
