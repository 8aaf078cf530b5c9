#!/usr/bin/env node
// What issue 18's parts produce on real repositories, with their numbers: `relais cycle init` (the
// mapper, then the brainstorm from an answers file), `ralphy start --engine cycle` with per-phase
// caps (on the mapped copy, so the living docs reach the task packets), `ralphy start --issue`
// after `relais plan --issue` (the issue thread served by a gh stand-in), and a per-phase cap
// reached in the middle of a tick, then raised for a resume. Every agent is the REAL
// Claude Code binary against the scripted model (source/demo/scripted-model-server.ts, 127.0.0.1):
// the mapper's answer is laid out from the runner's facts (test/support/scripted-mapper.mjs), the
// planner is the demo's, the other agents make one small change (a note under relais-report/).
// The OS sandbox is off here ("sandbox": "off"), to measure the flows, not bubblewrap.
// Usage: npm run build && node bench/seeds-report.mjs [repo...] (default: examples/demo-project
// and this repository). Each repository is copied (tracked files, one commit), never touched.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist/cli/main.cjs');
const CLAUDE = join(ROOT, 'node_modules/.bin/claude');
const MAPPER = join(ROOT, 'test/support/scripted-mapper.mjs');
const { startScriptedModel } = await import(join(ROOT, 'dist/demo/scripted-model-server.js'));
const { demoPlanner } = await import(join(ROOT, 'dist/demo/demo-planner.js'));
const { userText } = await import(join(ROOT, 'dist/demo/relais-script.js'));
const { LIVING_DOCS } = await import(join(ROOT, 'dist/engine/cycle/mapper/living-docs.js'));

const NOTE = 'relais-report/NOTE.md';
const ANSWERS = {
  vision: 'Keep a short report note in the repository.',
  users: 'The people who read the repository.',
  success: ['relais-report/NOTE.md exists'],
  stack: 'as mapped',
  requirements: [{ id: 'R1', text: 'write relais-report/NOTE.md' }],
  phases: [
    { id: 'P1', name: 'note', goal: 'Write the note', requirements: ['R1'], success: ['the note exists'] },
  ],
};
const TASKS = [
  '# Tasks',
  '',
  '## Task 1: Write the report note',
  '- **Status**: pending',
  `- **Description**: ${NOTE} says what Relais did here.`,
  `- **Files**: ${NOTE}`,
  '',
].join('\n');
const PRD = '# Report note\n\n## Objective\nWrite relais-report/NOTE.md, a one-line note.\n';
const ISSUE = {
  title: 'Report note',
  body: 'We need relais-report/NOTE.md, a one-line note about the run.',
  author: { login: 'pm' },
  assignees: [{ login: 'dev' }],
};

function sh(cmd, args, cwd, env = process.env) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** Asynchronous: the scripted model lives in this process and must keep answering. */
function cli(args, cwd, env) {
  return new Promise((done) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => done({ code, out, ms: Math.round(performance.now() - started) }));
  });
}

const commit = (repo, message) =>
  sh('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'commit', '-qm', message], repo);

function copyTracked(source, target) {
  mkdirSync(target, { recursive: true });
  const top = spawnSync('git', ['rev-parse', '--show-toplevel'], { cwd: source, encoding: 'utf8' });
  sh('git', ['init', '-q', '-b', 'main'], target);
  if (top.status === 0 && resolve(top.stdout.trim()) === resolve(source)) {
    const tar = spawnSync('git', ['archive', 'HEAD'], { cwd: source, maxBuffer: 512 << 20 });
    spawnSync('tar', ['-x', '-C', target], { input: tar.stdout });
  } else sh('cp', ['-R', `${source}/.`, target], ROOT);
  sh('git', ['add', '-A'], target);
  commit(target, 'snapshot');
}

/** gh: the issue thread (view, comment, api user) and the pull request, recorded. */
function ghStandIn(base) {
  const thread = join(base, 'issue.json');
  writeFileSync(thread, JSON.stringify({ ...ISSUE, comments: [] }));
  const gh = join(base, 'gh');
  writeFileSync(
    gh,
    [
      '#!/usr/bin/env node',
      "const fs = require('node:fs');",
      'const args = process.argv.slice(2);',
      `const path = ${JSON.stringify(thread)};`,
      "const t = JSON.parse(fs.readFileSync(path, 'utf8'));",
      "if (args[0] === 'api') { console.log('dev'); process.exit(0); }",
      "if (args[0] === 'issue' && args[1] === 'view') { process.stdout.write(JSON.stringify(t)); process.exit(0); }",
      "if (args[0] === 'issue' && args[1] === 'comment') {",
      "  const body = fs.readFileSync(args[args.indexOf('--body-file') + 1], 'utf8');",
      "  t.comments.push({ id: 'IC_' + (t.comments.length + 1), author: { login: 'dev' }, body, createdAt: new Date().toISOString() });",
      '  fs.writeFileSync(path, JSON.stringify(t));',
      "  console.log('https://github.invalid/acme/repo/issues/12#c' + t.comments.length); process.exit(0);",
      '}',
      "if (args[0] === 'pr' && args[1] === 'create') { console.log('https://github.invalid/acme/repo/pull/1'); process.exit(0); }",
      'process.exit(0);',
      '',
    ].join('\n'),
  );
  chmodSync(gh, 0o755);
  const human = (body) => {
    const t = JSON.parse(readFileSync(thread, 'utf8'));
    t.comments.push({
      id: `IC_${t.comments.length + 1}`,
      author: { login: 'pm' },
      body,
      createdAt: new Date().toISOString(),
    });
    writeFileSync(thread, JSON.stringify(t));
  };
  return {
    gh,
    human,
    posted: () => JSON.parse(readFileSync(thread, 'utf8')).comments.filter((c) => c.author.login === 'dev'),
  };
}

const BASH = {
  name: 'Bash',
  input: { command: `mkdir -p relais-report && printf 'Written by the scripted model.\\n' > ${NOTE}` },
};
const TASK = {
  task_id: 'T1',
  milestone_id: 'M1',
  task_kind: 'execute',
  intent: 'Write the report note',
  scope: {
    allowed_globs: ['relais-report/**'],
    forbidden_globs: [],
    allow_new_files: true,
    allow_lockfile_changes: false,
  },
  diff_limits: { max_files_touched: 3, max_lines_changed: 20 },
  verification: { fast: ['note'], slow: [] },
  builder: { mode: 'claude_code', max_turns: 4, instructions: `Write ${NOTE}` },
};
const BUILT = { summary: `wrote ${NOTE}`, files_intended: [NOTE], commands_ran: ['printf'], notes: [] };

/** One reply per turn of a call (the last repeats), for an agent that works in `root`. */
const turns =
  (...replies) =>
  (request) =>
    replies[Math.min(request.messages.filter((m) => m.role === 'assistant').length, replies.length - 1)];

function mapperReply(request) {
  const mapped = spawnSync(process.execPath, [MAPPER], { input: userText(request), encoding: 'utf8' });
  return { text: JSON.parse(mapped.stdout.trim().split('\n').at(-1)).result };
}

function verifierReply(request) {
  const prompt = userText(request);
  const criterion = /Criterion (AC\d+):/.exec(prompt)?.[1];
  const nonce = /This cycle's nonce is ([0-9A-F]{6})/.exec(prompt)?.[1];
  if (!criterion || !nonce) return null;
  return {
    text: `<<<VERDICT:V1:${criterion}:NONCE=${nonce}>>>\nANSWER=YES\nREASON="the note is there"\n<<<END_VERDICT:${criterion}:NONCE=${nonce}>>>`,
  };
}

/** Every agent, told apart by its system prompt; a call's turn by the assistant messages so far. */
function script(root) {
  const write = (path, content) => ({ name: 'Write', input: { file_path: join(root, path), content } });
  const roles = [
    ['You are the Relais codebase mapper', mapperReply],
    ['You are Relay', demoPlanner],
    [
      'spec-agent',
      turns(
        { toolUses: [write('specs/SPEC.md', '# Spec\n\nOne note.\n'), write('specs/TASKS.md', TASKS)] },
        { text: 'Written.\n\nEXIT_SIGNAL: true' },
      ),
    ],
    [
      'qa-agent',
      turns(
        { toolUses: [write('specs/QA_REPORT.md', '# QA report\n\n## Summary\nThe note is there.\n')] },
        { text: 'Done.\nEXIT_SIGNAL: true' },
      ),
    ],
    ['You are the Orchestrator', () => ({ text: JSON.stringify(TASK) })],
    ['You are the Builder', turns({ toolUses: [BASH] }, { text: JSON.stringify(BUILT) })],
    ['you are the implementer', turns({ toolUses: [BASH] }, { text: `Wrote ${NOTE}.` })],
  ];
  return (request) => {
    const role = roles.find(([signature]) => request.system.includes(signature));
    return role ? role[1](request) : (verifierReply(request) ?? { text: 'OK' });
  };
}

async function prepare(source, base, name) {
  const repo = join(base, name);
  copyTracked(source, repo);
  const home = join(base, `${name}-home`);
  mkdirSync(home, { recursive: true });
  const env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    CI: 'true',
    ANTHROPIC_API_KEY: 'sk-bench-offline',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    IS_SANDBOX: '1',
  };
  sh(process.execPath, [CLI, 'init', '--allow', 'relais-report/**'], repo, env);
  // GitHub is a local bare repository: the PR phase pushes there.
  sh('git', ['init', '-q', '--bare', join(base, `${name}-remote.git`)], base);
  sh('git', ['remote', 'add', 'origin', join(base, `${name}-remote.git`)], repo);
  return { repo, env };
}

function configure(repo, edit) {
  const path = join(repo, 'relais.config.json');
  const config = JSON.parse(readFileSync(path, 'utf8'));
  config.claude_code_cli.command = CLAUDE;
  config.sandbox = 'off';
  // A repository may bring its own relais.config.json (this one does): its fence gets the note too.
  config.scope.default_allowed_globs = [
    ...new Set([...config.scope.default_allowed_globs, 'relais-report/**']),
  ];
  config.verification.templates = [
    { id: 'note', cmd: 'node', args: ['-e', `require('fs').accessSync('${NOTE}')`] },
  ];
  config.workflow.phases = {
    planning: { max_calls: 6 },
    specification: { max_calls: 4, max_cost_usd: 2 },
    implementation: { max_calls: 12, max_cost_usd: 5 },
    qa: { max_calls: 4 },
  };
  edit?.(config);
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`);
  sh('git', ['add', '-A'], repo);
  commit(repo, 'relais config');
}

function tokens(repo) {
  let total = 0;
  for (const d of LIVING_DOCS) {
    const path = join(repo, 'specs/p12', d);
    if (existsSync(path)) total += Math.ceil(readFileSync(path, 'utf8').length / 4);
  }
  return total;
}

function phaseLines(repo) {
  const w = JSON.parse(readFileSync(join(repo, 'relais/WORKFLOW.json'), 'utf8'));
  const phases = Object.entries(w.phases)
    .filter(([, s]) => s.calls > 0)
    .map(
      ([p, s]) =>
        `${p} ${s.calls}${s.max_calls ? `/${s.max_calls}` : ''} call(s) $${s.cost_usd.toFixed(4)}${s.max_cost_usd ? ` of $${s.max_cost_usd}` : ''}`,
    );
  // A task the runner did not verify says why (its last stop code and detail).
  const why = w.tasks
    .filter((t) => t.verdict !== 'verified' && t.verified)
    .map((t) => `task ${t.number}: ${t.verified}`);
  return {
    state: w.state,
    engine: w.engine,
    tasks: `${w.tasks_completed}/${w.tasks_total}`,
    cost: w.cost_usd,
    phases,
    why,
  };
}

async function report(source) {
  const base = mkdtempSync(join(tmpdir(), 'relais-seeds-report-'));
  const lines = [`\n== ${source}`];
  try {
    // 1. relais cycle init, then ralphy start --engine cycle on the mapped copy.
    const a = await prepare(source, base, 'cycle');
    const files = sh('git', ['ls-files'], a.repo).split('\n').filter(Boolean).length;
    configure(a.repo, (config) => {
      config.planner = { ...config.planner, enabled: false };
      config.cycle = {
        mode: 'yolo',
        verify: { tests: ['note'], lint: [] },
        agents: {
          planner: { provider: 'claude', model: 'sonnet' },
          implementer: { provider: 'claude', model: 'sonnet' },
          verifier: { provider: 'claude', model: 'sonnet' },
        },
      };
    });
    const model = await startScriptedModel(script(a.repo));
    const env = { ...a.env, ANTHROPIC_BASE_URL: model.url };
    writeFileSync(join(base, 'answers.json'), JSON.stringify(ANSWERS));
    const init = await cli(
      ['cycle', 'init', '--answers', join(base, 'answers.json'), '--confirm'],
      a.repo,
      env,
    );
    const mapped = init.out.split('\n').filter((l) => /^(Codebase|Living docs|Mapping failed)/.test(l));
    lines.push(`cycle init: exit ${init.code}, ${(init.ms / 1000).toFixed(1)} s, ${files} tracked files`);
    const map = readFileSync(join(a.repo, 'specs/p12/WORKFLOW.md'), 'utf8').split('\n');
    const rows = (kind) => map.filter((l) => l.startsWith(`- ${kind}=`)).length;
    lines.push(
      ...mapped.map((l) => `  ${l}`),
      `  living docs on disk: ${tokens(a.repo)} tokens; loading map: ${rows('track')} track-type rows, ${rows('area')} path rows`,
    );
    writeFileSync(join(a.repo, 'PRD.md'), PRD);
    sh('git', ['add', 'PRD.md'], a.repo);
    commit(a.repo, 'PRD');
    const cycle = await cli(['start', '--engine', 'cycle', '--yes'], a.repo, env);
    const c = phaseLines(a.repo);
    const packet = sh('git', ['ls-files', 'specs/tracks'], a.repo)
      .split('\n')
      .find((f) => f.endsWith('TASK_001.md'));
    const loaded = packet
      ? readFileSync(join(a.repo, packet), 'utf8')
          .split('\n')
          .filter((l) => l.includes('living doc'))
      : [];
    lines.push(
      `ralphy start --engine cycle: exit ${cycle.code}, ${(cycle.ms / 1000).toFixed(1)} s, ${c.state}, tasks ${c.tasks}, $${c.cost.toFixed(4)}`,
      ...c.phases.map((p) => `  ${p}`),
      ...c.why.map((w) => `  ${w}`),
      `  living docs in the task packet: ${loaded.length}${loaded.length ? ` (${loaded.map((l) => /p12\/(\S+)/.exec(l)?.[1]).join(', ')})` : ''}`,
    );
    await model.close();

    // 2. relais plan --issue 12 until ready, then ralphy start --issue 12 (the default ticks engine).
    const b = await prepare(source, base, 'issue');
    const gh = ghStandIn(join(base));
    configure(b.repo, (config) => {
      config.pr.gh_command = gh.gh;
    });
    const model2 = await startScriptedModel(script(b.repo));
    const env2 = { ...b.env, ANTHROPIC_BASE_URL: model2.url };
    const started = performance.now();
    const plans = [];
    plans.push(await cli(['plan', '--issue', '12'], b.repo, env2));
    gh.human('1: keep them as they are');
    plans.push(await cli(['plan', '--issue', '12'], b.repo, env2));
    gh.human('proceed');
    plans.push(await cli(['plan', '--issue', '12'], b.repo, env2));
    const planMs = Math.round(performance.now() - started);
    const start = await cli(['start', '--issue', '12', '--yes'], b.repo, env2);
    const s = phaseLines(b.repo);
    const posted = gh.posted();
    lines.push(
      `relais plan --issue 12 (x3): exits ${plans.map((p) => p.code).join(', ')}, ${(planMs / 1000).toFixed(1)} s, ${posted.length} comment(s) posted`,
      `ralphy start --issue 12: exit ${start.code}, ${(start.ms / 1000).toFixed(1)} s, ${s.state} (${s.engine}), tasks ${s.tasks}, $${s.cost.toFixed(4)}`,
      ...s.phases.map((p) => `  ${p}`),
      ...s.why.map((w) => `  ${w}`),
      `  reported on the issue: ${(gh.posted().at(-1)?.body ?? '')
        .split('\n')
        .filter((l) => /pull|verified|Tasks|QA/i.test(l))
        .slice(0, 3)
        .join(' | ')}`,
    );
    await model2.close();

    // 3. A per-phase cap reached in the middle of a tick, then raised: the resume finishes.
    const c3 = await prepare(source, base, 'caps');
    configure(c3.repo, (config) => {
      config.planner = { ...config.planner, enabled: false };
      config.workflow.phases.implementation = { max_calls: 1 };
    });
    writeFileSync(join(c3.repo, 'PRD.md'), PRD);
    sh('git', ['add', 'PRD.md'], c3.repo);
    commit(c3.repo, 'PRD');
    const model3 = await startScriptedModel(script(c3.repo));
    const env3 = { ...c3.env, ANTHROPIC_BASE_URL: model3.url };
    const capped = await cli(['start', '--yes'], c3.repo, env3);
    const w = JSON.parse(readFileSync(join(c3.repo, 'relais/WORKFLOW.json'), 'utf8'));
    lines.push(
      `ralphy start, implementation max_calls 1: exit ${capped.code}, ${(capped.ms / 1000).toFixed(1)} s, ${w.state} (${w.failure_reason}): ${w.failure_detail}`,
    );
    configure(c3.repo, (config) => {
      config.workflow.phases.implementation = { max_calls: 12 };
    });
    const resumed = await cli(['start', '--yes'], c3.repo, env3);
    const r = phaseLines(c3.repo);
    lines.push(
      `  raised to 12, resumed: exit ${resumed.code}, ${(resumed.ms / 1000).toFixed(1)} s, ${r.state}, tasks ${r.tasks}`,
      ...r.phases.map((p) => `  ${p}`),
    );
    await model3.close();
  } catch (error) {
    lines.push(`failed: ${error.message}`);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
  console.log(lines.join('\n'));
}

for (const source of process.argv.slice(2).length
  ? process.argv.slice(2)
  : [join(ROOT, 'examples/demo-project'), ROOT])
  await report(source);
