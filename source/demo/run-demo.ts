import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findExecutable } from '../engine/agents/find-executable.js';
import { PACKAGE_ROOT } from '../engine/workspace/package-assets.js';
import { demoPlan } from './demo-plan.js';
import { relaisScript } from './relais-script.js';
import { startScriptedModel } from './scripted-model-server.js';

/**
 * `npm run demo`: two real `relais run` ticks on a bundled example project, through the real
 * Claude Code binary, offline. Only the model is scripted (a local server on 127.0.0.1); no API
 * key and no network are needed. The project is left in a temp folder to look around in.
 */

const CLI = join(PACKAGE_ROOT, 'dist/cli/main.js');

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

async function main(): Promise<number> {
  const claude = await findClaude();
  // RELAIS_DEMO_DIR lets the test suite choose (and clean) the folder; users get a fresh temp one.
  const base = mkdtempSync(join(process.env.RELAIS_DEMO_DIR ?? tmpdir(), 'relais-demo-'));
  const repo = join(base, 'demo-project');
  const home = join(base, 'home');
  mkdirSync(home);
  cpSync(join(PACKAGE_ROOT, 'examples/demo-project'), repo, { recursive: true });
  const gitEnv = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Relais Demo',
    GIT_AUTHOR_EMAIL: 'demo@relais.invalid',
    GIT_COMMITTER_NAME: 'Relais Demo',
    GIT_COMMITTER_EMAIL: 'demo@relais.invalid',
  };
  const git = (...args: string[]) =>
    spawnSync('git', args, { cwd: repo, env: gitEnv, stdio: 'ignore' }).status;
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'Demo project');

  say(`relais init in ${repo}`);
  if ((await run(process.execPath, [CLI, 'init'], repo, gitEnv)) !== 0) return 1;
  const configPath = join(repo, 'relais.config.json');
  const config = JSON.parse(readFileSync(configPath, 'utf8'));
  config.claude_code_cli.command = claude;
  writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
  git('add', 'relais.config.json');
  git('commit', '-q', '-m', 'Add relais config');

  const model = await startScriptedModel(relaisScript(demoPlan(repo)));
  const env: NodeJS.ProcessEnv = {
    ...gitEnv,
    HOME: home, // Claude Code keeps its files in this throwaway home, not yours
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: 'offline-demo-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // The demo repository is a throwaway folder: a sandbox, so bypassPermissions may run as root.
    IS_SANDBOX: '1',
  };
  try {
    say('Tick 1: the builder fixes the bug; Relais judges the diff, runs the tests itself and commits');
    const first = await run(process.execPath, [CLI, 'run'], repo, env);
    say('Tick 2: the builder "makes the tests pass" by editing the test and claims success');
    const second = await run(process.execPath, [CLI, 'run'], repo, env);
    say('relais status');
    await run(process.execPath, [CLI, 'status'], repo, env);
    const ok = first === 0 && second === 1;
    say(
      ok
        ? `Done. Tick 1 committed a verified fix; tick 2 was stopped and rolled back although the builder claimed success.\n   Look around: cd ${repo} && git log --oneline && cat relais/REPORT.md`
        : `Unexpected outcome (tick 1 exit ${first}, tick 2 exit ${second}); see the output above and ${repo}/relais/REPORT.md`,
    );
    return ok ? 0 : 1;
  } finally {
    await model.close();
  }
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
