// Not the process port: the demo hands the terminal to the real CLI (stdio inherited) and sets up its repo.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import { isCi } from '../cli/front-end/is-ci.js';
import { findExecutable } from '../engine/agents/find-executable.js';
import { PACKAGE_ROOT } from '../engine/workspace/package-assets.js';
import { demoPlan } from './demo-plan.js';
import { optOutOfSandboxIfMissing } from './demo-sandbox.js';
import { notCompleted, USAGE, WHAT_IS_SCRIPTED } from './demo-text.js';
import { DEMO_PR_URL, installGhStandIn, readGhCalls } from './gh-stand-in.js';
import { relaisScript } from './relais-script.js';
import { startScriptedModel } from './scripted-model-server.js';

/**
 * `npm run demo`: `ralphy start` on a bundled example project, the whole workflow (spec, gate,
 * judged implementation, QA, gate, pull request) through the real Claude Code binary, offline.
 * Only the model is scripted (a local server on 127.0.0.1); no API key and no network. A local
 * bare repository stands in for GitHub, and a recording `gh` stand-in (first on PATH, so the
 * run never depends on your own gh) answers `gh pr create`. On a terminal the gates ask you;
 * elsewhere `--yes`. The project is left in a temp folder to look around in.
 */

const CLI = join(PACKAGE_ROOT, 'dist/cli/main.cjs');

function say(text: string): void {
  process.stdout.write(`\n\u2500\u2500 ${text}\n\n`);
}

/** Asynchronous on purpose: the scripted model server lives in this process and must keep answering. */
function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: 'inherit' });
    child.on('error', () => resolve(1));
    child.on('close', (code) => resolve(code ?? 1));
  });
}

async function findClaude(): Promise<string> {
  const local = join(PACKAGE_ROOT, 'node_modules/.bin/claude');
  if (existsSync(local)) return local;
  const onPath = await findExecutable('claude', process.env, process.cwd());
  if (onPath) return onPath;
  throw new Error(
    'Claude Code is not installed: run `npm ci` in the relais folder (it is a dev dependency).',
  );
}

type DemoArgs =
  | { kind: 'fresh' }
  | { kind: 'resume'; folder: string }
  | { kind: 'help' }
  | { kind: 'bad'; message: string };

function readArgs(argv: readonly string[]): DemoArgs {
  if (argv.includes('--help') || argv.includes('-h')) return { kind: 'help' };
  if (argv.length === 0) return { kind: 'fresh' };
  if (argv[0] === '--resume' && argv.length === 2 && argv[1]) return { kind: 'resume', folder: argv[1] };
  return { kind: 'bad', message: `unexpected arguments: ${argv.join(' ')}` };
}

/** The demo's folder from what a user pastes: the demo folder itself or its demo-project inside. */
function demoFolder(given: string): string | null {
  const path = resolve(given);
  const base = basename(path) === 'demo-project' ? dirname(path) : path;
  const parts = ['demo-project', 'github-stand-in.git', 'home', 'bin'];
  return parts.every((part) => existsSync(join(base, part))) ? base : null;
}

async function main(): Promise<number> {
  const args = readArgs(process.argv.slice(2));
  if (args.kind === 'help' || args.kind === 'bad') {
    if (args.kind === 'bad') process.stderr.write(`demo: ${args.message}\n`);
    (args.kind === 'help' ? process.stdout : process.stderr).write(USAGE);
    return args.kind === 'help' ? 0 : 2;
  }
  const base =
    args.kind === 'resume'
      ? demoFolder(args.folder)
      : // RELAIS_DEMO_DIR lets the test suite choose (and clean) the folder; users get a fresh temp one.
        mkdtempSync(join(process.env.RELAIS_DEMO_DIR ?? tmpdir(), 'relais-demo-'));
  if (base === null) {
    process.stderr.write(
      `demo: ${resolve(args.kind === 'resume' ? args.folder : '.')} is not a demo folder (it has no demo-project/, github-stand-in.git/, home/, bin/).\n${USAGE}`,
    );
    return 2;
  }
  const claude = await findClaude();
  const gitEnv = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Relais Demo',
    GIT_AUTHOR_EMAIL: 'demo@relais.invalid',
    GIT_COMMITTER_NAME: 'Relais Demo',
    GIT_COMMITTER_EMAIL: 'demo@relais.invalid',
  };
  let sandboxNote: string | null = null;
  if (args.kind === 'fresh') {
    setUpDemo(base, gitEnv);
    sandboxNote = await optOutOfSandboxIfMissing(join(base, 'demo-project'), CLI, gitEnv);
  }
  return runDemo(base, args.kind === 'resume', claude, gitEnv, sandboxNote);
}

async function runDemo(
  base: string,
  resuming: boolean,
  claude: string,
  gitEnv: NodeJS.ProcessEnv,
  sandboxNote: string | null,
): Promise<number> {
  const repo = join(base, 'demo-project');
  const remote = join(base, 'github-stand-in.git');
  const home = join(base, 'home');
  const bin = join(base, 'bin');
  const ghLog = join(base, 'gh-calls.jsonl');
  const model = await startScriptedModel(relaisScript(demoPlan(repo, { resume: resuming })));
  const env: NodeJS.ProcessEnv = {
    ...gitEnv,
    // `claude` and `gh` are found on PATH, as on a user's machine: here, the copy relais
    // installed and the demo's stand-in (before any gh of yours).
    PATH: [bin, dirname(claude), process.env.PATH ?? ''].join(delimiter),
    HOME: home, // Claude Code keeps its files in this throwaway home, not yours
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: 'offline-demo-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // The demo repository is a throwaway folder: a sandbox, so bypassPermissions may run as root.
    IS_SANDBOX: '1',
  };
  const interactive = process.stdin.isTTY === true && process.stdout.isTTY === true && !isCi(process.env);
  try {
    say(WHAT_IS_SCRIPTED);
    if (sandboxNote) say(sandboxNote);
    say(`ralphy start ${repo}${interactive ? '' : ' --yes'}${resuming ? '   (resuming the demo)' : ''}`);
    const code = await run(
      process.execPath,
      [CLI, 'start', repo, ...(interactive ? [] : ['--yes'])],
      repo,
      env,
    );
    say('ralphy status');
    await run(process.execPath, [CLI, 'status', repo], repo, env);
    // Claimed only when the bare repository standing in for GitHub really has the branch.
    const pushed = spawnSync('git', ['ls-remote', '--heads', remote], { encoding: 'utf8' }).stdout.includes(
      'refs/heads/ralphy/',
    );
    const pr = readGhCalls(ghLog).find((c) => c.args[0] === 'pr' && c.args[1] === 'create');
    say(
      code === 0 && pushed && pr
        ? [
            `Done: PRD -> spec -> judged ticks${resuming ? '' : ' (one cheating write refused, its tick stopped and rolled back)'} -> QA -> branch pushed.`,
            `   The pull request: the demo's gh stand-in (no GitHub, offline) was asked for it and answered ${DEMO_PR_URL}:`,
            `     gh ${pr.args.map(shellWord).join(' ')}`,
            `   Look around: cd ${repo} && git log --oneline --graph --all && cat relais/PR_BODY.md`,
          ].join('\n')
        : notCompleted(base, code, Boolean(pushed), Boolean(pr)),
    );
    return code === 0 && !(pushed && pr) ? 1 : code;
  } finally {
    await model.close();
  }
}

/** The throwaway project, its bare "GitHub" and the gh stand-in, in a fresh `base`. */
function setUpDemo(base: string, gitEnv: NodeJS.ProcessEnv): void {
  const repo = join(base, 'demo-project');
  const remote = join(base, 'github-stand-in.git');
  mkdirSync(join(base, 'home'));
  mkdirSync(join(base, 'bin'));
  installGhStandIn(join(base, 'bin'), join(base, 'gh-calls.jsonl'));
  cpSync(join(PACKAGE_ROOT, 'examples/demo-project'), repo, { recursive: true });
  const git = (...args: string[]) =>
    spawnSync('git', args, { cwd: repo, env: gitEnv, stdio: 'ignore' }).status;
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'Demo project');
  git('init', '-q', '--bare', remote);
  git('remote', 'add', 'origin', remote);
  git('push', '-q', 'origin', 'main');
}

/** An argument as a human would paste it into a shell. */
function shellWord(value: string): string {
  return /^[A-Za-z0-9._/:@=-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: Error) => {
    process.stderr.write(`demo failed: ${error.message}\n`);
    process.exitCode = 1;
  },
);
