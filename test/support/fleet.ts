import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { type GhStandIn, type GhThread, ghStandIn } from './gh-issue.js';
import { CLI, FAKE_CLAUDE, type RunningCli, type Scenario, type TestProject } from './project.js';
import { qaStep, specStep, TASKS_MD, workflowProject } from './workflow.js';

/**
 * A repository for the fleet (issue 20): a workflow project whose main branch is pushed to a
 * local bare remote (what workers clone), its own scripted agent (a wrapper that points the
 * fake-claude at this project's scenario, since every worker shares one environment), the
 * `single` engine, and a recording gh that remembers the pull requests it opened (`pr list
 * --head` finds them again, as GitHub's would).
 */

export type FleetProject = TestProject & {
  ghLog: string;
  remote: string;
  prsFile: string;
  /** The issue's thread, when the project has one (`issue` option). */
  thread: GhStandIn | null;
};

export const COSTS = { spec: 0.1, dev: 0.2, qa: 0.05 };
const GREET = { write: 'src/a.ts', content: 'export const greet = (n: string) => "Hello, " + n;\n' };
const BYE = { write: 'src/b.ts', content: 'export const bye = (n: string) => "Bye, " + n;\n' };
const COMPLETED = TASKS_MD.replaceAll('- **Status**: pending', '- **Status**: completed');
const DONE = 'Both tasks are implemented and tested.\nEXIT_SIGNAL: true';

export function fleetProject(
  options: {
    releaseFile?: string;
    configure?: (config: any) => void;
    /** A GitHub issue for the run: `gh issue …` goes to a thread stand-in (gh-issue.ts). */
    issue?: Omit<GhThread, 'comments'>;
  } = {},
): FleetProject {
  const project = workflowProject((config) => {
    config.workflow.implementation_engine = 'single';
    options.configure?.(config);
  }) as FleetProject;
  const agent = join(project.base, 'bin', 'agent');
  writeFileSync(
    agent,
    `#!/bin/sh\nRELAIS_FAKE_SCENARIO=${JSON.stringify(project.scenarioPath)} exec ${JSON.stringify(process.execPath)} ${JSON.stringify(FAKE_CLAUDE)} "$@"\n`,
  );
  chmodSync(agent, 0o755);
  const prsFile = join(project.base, 'prs.json');
  const gh = join(project.base, 'bin', 'gh');
  writeFileSync(
    gh,
    [
      '#!/usr/bin/env node',
      "const fs = require('node:fs');",
      'const argv = process.argv.slice(2);',
      `fs.appendFileSync(${JSON.stringify(project.ghLog)}, JSON.stringify(argv) + '\\n');`,
      `const file = ${JSON.stringify(prsFile)};`,
      "const prs = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};",
      "const head = argv[argv.indexOf('--head') + 1];",
      "if (argv[0] === 'pr' && argv[1] === 'list') { if (prs[head]) console.log(prs[head]); }",
      "else if (argv[0] === 'pr' && argv[1] === 'create') {",
      "  prs[head] = 'https://github.com/example/greeting/pull/' + (Object.keys(prs).length + 1);",
      '  fs.writeFileSync(file, JSON.stringify(prs));',
      '  console.log(prs[head]);',
      '}',
      '',
    ].join('\n'),
  );
  chmodSync(gh, 0o755);
  const thread = options.issue ? ghStandIn(project.base, options.issue, 'relais-bot') : null;
  const ghCommand = thread ? routedGh(project.base, join(thread.bin, 'gh'), gh) : gh;
  project.commitConfig((config) => {
    config.claude_code_cli.command = agent;
    config.pr.gh_command = ghCommand;
  });
  project.git('push', '-q', 'origin', 'main');
  project.git('--git-dir', project.remote, 'symbolic-ref', 'HEAD', 'refs/heads/main');
  Object.assign(project, { prsFile, thread });
  const hold = options.releaseFile
    ? [
        {
          exec: [
            process.execPath,
            '-e',
            // Held until the test writes the release file; gone with the test's folder.
            `const fs=require('fs');const path=require('path');const f=${JSON.stringify(options.releaseFile)};const t=new Int32Array(new SharedArrayBuffer(4));while(!fs.existsSync(f)){if(!fs.existsSync(path.dirname(f)))process.exit(1);Atomics.wait(t,0,0,50);}`,
          ],
        },
      ]
    : [];
  const dev = (extra: unknown[]) => ({
    actions: [...extra, GREET, BYE, { write: 'specs/TASKS.md', content: COMPLETED }],
    result: DONE,
    cost: COSTS.dev,
  });
  // A step cut off by a worker's death runs again elsewhere: its agent is called again and
  // answers the same (the first dev call is held until the test releases it).
  const scenario: Scenario = {
    spec: [0, 1].map(() => ({ ...specStep(), cost: COSTS.spec })),
    dev: [dev(hold), dev([]), dev([])],
    qa: [0, 1].map(() => ({ ...qaStep(), cost: COSTS.qa })),
  };
  project.scenario(scenario);
  return project;
}

/** One gh: `issue` and `api` calls go to the issue thread's stand-in, the rest to the recording gh. */
function routedGh(base: string, issueGh: string, recordingGh: string): string {
  const both = join(base, 'bin', 'gh-both');
  writeFileSync(
    both,
    [
      '#!/usr/bin/env node',
      "const { spawnSync } = require('node:child_process');",
      'const args = process.argv.slice(2);',
      `const target = ['issue', 'api'].includes(args[0]) ? ${JSON.stringify(issueGh)} : ${JSON.stringify(recordingGh)};`,
      "const r = spawnSync(target, args, { stdio: 'inherit' });",
      'process.exit(r.status ?? 1);',
      '',
    ].join('\n'),
  );
  chmodSync(both, 0o755);
  return both;
}

/** The commit subjects of a branch of the bare remote, oldest first, after the base. */
export function remoteLog(project: FleetProject, branch: string): string[] {
  return project
    .git('--git-dir', project.remote, 'log', '--format=%s', `main..${branch}`)
    .trim()
    .split('\n')
    .filter(Boolean)
    .reverse();
}

export function remoteBranches(project: FleetProject): string[] {
  return project
    .git('--git-dir', project.remote, 'for-each-ref', '--format=%(refname:short)', 'refs/heads')
    .trim()
    .split('\n')
    .filter((b) => b && b !== 'main');
}

export function prCreates(project: FleetProject): string[][] {
  if (!existsSync(project.ghLog)) return [];
  return readFileSync(project.ghLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as string[])
    .filter((argv) => argv[0] === 'pr' && argv[1] === 'create');
}

/** A `relais` child process of the built CLI, with the environment every worker shares. */
export function relais(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): RunningCli & { output(): string } {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return {
    done,
    pid: child.pid as number,
    waitFor: () => Promise.reject(new Error('not used')),
    signal: (name) => child.kill(name),
    output: () => `${stdout}\n${stderr}`,
  };
}

/** Polls the database until `check` holds (an event in the database, not a timer guess). */
export async function until<T>(
  db: string,
  query: string,
  check: (rows: T[]) => boolean,
  timeoutMs = 90_000,
): Promise<T[]> {
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // Before the first worker has made the tables, a query fails: not yet.
      const rows = await client.query(query).then(
        (r) => r.rows as T[],
        () => null,
      );
      if (rows && check(rows)) return rows;
      if (Date.now() > deadline) throw new Error(`timed out waiting on: ${query}\n${JSON.stringify(rows)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await client.end();
  }
}
