import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_HELP, COMMAND_NAMES } from '../../source/cli/help/commands.js';
import { CLI } from '../support/project.js';

/**
 * Issue 16 item 2: every help form prints its usage, exits 0 and touches nothing. Each form runs
 * the built CLI in a real, not yet initialised git repository holding a PRD.md (where `init` or
 * `start` would write files and create a branch), with `claude`, `codex`, `gh` and `git` on PATH
 * replaced by recorders that leave a marker, proxies and model URLs pointing at a local socket
 * that counts connections, and then once more under Node's permission model, where any file
 * write or child process throws.
 */

const RUNNABLE = COMMAND_NAMES.filter((name) => name !== 'help');

/**
 * Every subcommand, read from the help table itself (so a new one cannot be forgotten): a two-word
 * entry (`cycle init`), and each usage line whose second word is a plain word (`config set <key>
 * <value>`, `fleet budget [--usd <n>]`, `worktrees prune [dir]`).
 */
function subcommandsOf(name: string): string[] {
  const words = new Set<string>();
  for (const entry of COMMAND_NAMES)
    if (entry.startsWith(`${name} `)) words.add(entry.slice(name.length + 1));
  for (const usage of COMMAND_HELP[name as keyof typeof COMMAND_HELP].usage) {
    const [first, second] = usage.split(' ');
    if (first === name && second && /^[a-z][a-z-]*$/.test(second)) words.add(second);
  }
  return [...words];
}
const SUBCOMMANDS = RUNNABLE.filter((name) => !name.includes(' ')).flatMap((name) =>
  subcommandsOf(name).map((sub) => ({ parent: name, sub })),
);

/** The entry whose help a subcommand's forms print: its own when it has one, else its parent's. */
const topicOf = (parent: string, sub: string) =>
  COMMAND_NAMES.includes(`${parent} ${sub}` as (typeof COMMAND_NAMES)[number]) ? `${parent} ${sub}` : parent;

const HELP_FORMS: Array<{ argv: string[]; topic: string | null; shows?: string }> = [
  { argv: ['--help'], topic: null },
  { argv: ['-h'], topic: null },
  { argv: ['help'], topic: null },
  ...RUNNABLE.flatMap((name) => {
    const words = name.split(' ');
    return [
      { argv: [...words, '--help'], topic: name },
      { argv: [...words, '-h'], topic: name },
      { argv: ['help', ...words], topic: name },
      { argv: [...words, '.', '--json', '--help'], topic: name },
    ];
  }),
  ...SUBCOMMANDS.flatMap(({ parent, sub }) => {
    const topic = topicOf(parent, sub);
    const shows = `relais ${parent} ${sub}`;
    return [
      { argv: [parent, sub, '--help'], topic, shows },
      { argv: [parent, sub, '-h'], topic, shows },
      { argv: ['help', parent, sub], topic, shows },
      { argv: [parent, sub, 'some-arg', '--help'], topic, shows },
    ];
  }),
];

let base: string;
let repo: string;
let home: string;
let markers: string;
let server: Server;
let connections = 0;
let env: NodeJS.ProcessEnv;

function run(
  argv: string[],
  nodeArgs: string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...nodeArgs, CLI, ...argv],
      { cwd: repo, env, encoding: 'utf8' },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

function git(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    // --no-optional-locks: reading the status must not refresh (rewrite) the index itself.
    execFile('git', ['--no-optional-locks', ...args], { cwd: repo, encoding: 'utf8' }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    );
  });
}

/** Every file and folder under `dir` with its size and modification time. */
function listing(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const stat = statSync(path);
    out.push(`${path} ${entry.isDirectory() ? 'dir' : stat.size} ${stat.mtimeMs}`);
    if (entry.isDirectory()) out.push(...listing(path));
  }
  return out;
}

async function snapshot() {
  return {
    files: [...listing(repo), ...listing(home)],
    status: await git('status', '--porcelain', '--ignored', '--untracked-files=all'),
    refs: await git('for-each-ref', '--format=%(refname) %(objectname)'),
    head: await git('symbolic-ref', 'HEAD'),
    markers: readdirSync(markers),
    connections,
  };
}

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'relais-help-'));
  repo = join(base, 'repo');
  home = join(base, 'home');
  markers = join(base, 'markers');
  const bin = join(base, 'bin');
  for (const dir of [repo, home, markers, bin]) mkdirSync(dir);
  const realGit = (
    await new Promise<string>((resolve) => execFile('sh', ['-c', 'command -v git'], (_, out) => resolve(out)))
  ).trim();
  for (const tool of ['claude', 'codex', 'gh', 'git']) {
    const then = tool === 'git' ? `exec ${realGit} "$@"` : 'exit 0';
    writeFileSync(join(bin, tool), `#!/bin/sh\ntouch "${markers}/${tool}.$$"\n${then}\n`);
    chmodSync(join(bin, tool), 0o755);
  }
  server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  env = {
    PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    ANTHROPIC_BASE_URL: url,
    OPENAI_BASE_URL: url,
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    TERM: 'xterm-256color',
  };
  await git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'PRD.md'), '# Greeter\n\n## Objective\nSay hello.\n');
  await git('add', 'PRD.md');
  await git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'initial');
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(base, { recursive: true, force: true });
});

describe('help prints and touches nothing', () => {
  it('the table has the subcommands a user types', () => {
    // The derivation above must find at least these, or the forms below test too little.
    const found = SUBCOMMANDS.map(({ parent, sub }) => `${parent} ${sub}`);
    for (const known of [
      'config get',
      'config set',
      'config unset',
      'config list',
      'config path',
      'worktrees list',
      'worktrees prune',
      'fleet status',
      'fleet doctor',
      'fleet budget',
      'cycle init',
    ])
      expect(found).toContain(known);
  });

  it.each(HELP_FORMS)('relais $argv', async ({ argv, topic, shows }) => {
    const before = await snapshot();
    const result = await run(argv);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    if (topic === null) {
      expect(result.stdout).toContain('Usage\n  relais <command>');
      for (const name of RUNNABLE) expect(result.stdout).toContain(`  ${name} `);
    } else {
      const help = COMMAND_HELP[topic as keyof typeof COMMAND_HELP];
      expect(result.stdout).toContain(`Usage\n  relais ${help.usage[0]}`);
      for (const option of help.options) expect(result.stdout).toContain(`--${option.name}`);
      expect(result.stdout).toContain(`$ ${help.examples[0]}`);
    }
    // A subcommand's form shows that subcommand's own usage line.
    if (shows) expect(result.stdout).toContain(shows);
    expect(await snapshot()).toEqual(before);
  });

  it('--version prints the package version and touches nothing', async () => {
    const before = await snapshot();
    const result = await run(['--version']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(await snapshot()).toEqual(before);
  });

  it('the git recorder and the snapshot do catch what a real command does', async () => {
    // Without this, an empty marker folder could mean the recorders never work.
    const result = await run(['init']);
    expect(result.code).toBe(0);
    expect(readdirSync(markers).some((m) => m.startsWith('git.'))).toBe(true);
    expect((await git('status', '--porcelain', '--ignored', '--untracked-files=all')).length).toBeGreaterThan(
      0,
    );
  });
});

describe('help under the permission model (a file write or a child process would throw)', () => {
  it.each(HELP_FORMS.filter((_, i) => i % 4 === 0 || i < 3))('relais $argv', async ({ argv }) => {
    const result = await run(argv, ['--experimental-permission', '--allow-fs-read=*', '--no-warnings']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage');
  });
});

describe('usage errors name the help and touch nothing', () => {
  it.each([
    [['run', '--yolo'], 'relais run: unknown option --yolo\nSee `relais run --help`.'],
    [['start', '--force'], 'relais start: unknown option --force\nSee `relais start --help`.'],
    [['init', '--yes'], 'relais init: unknown option --yes'],
    [['loop', '--max-ticks', 'x'], '--max-ticks needs a number'],
    [['deploy'], 'Unknown command: deploy'],
    [['help', 'deploy'], 'Unknown command: deploy'],
  ])('relais %j exits 2: %s', async (argv, message) => {
    const before = await snapshot();
    const result = await run(argv);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(await snapshot()).toEqual(before);
  });
});
