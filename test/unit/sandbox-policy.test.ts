import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type AgentRequest, requestSandbox } from '../../source/engine/agents/agent-run.js';
import { configSchema } from '../../source/engine/protocol/config.js';
import { agentConfigOverlay } from '../../source/engine/sandbox/agent-config.js';
import { bwrapArgs, sandboxEnv } from '../../source/engine/sandbox/bwrap-args.js';
import { copyLoginsIn, returnLogins, sameShape } from '../../source/engine/sandbox/login-files.js';
import type { SandboxPolicy } from '../../source/engine/sandbox/policy.js';
import {
  networkFor,
  sandboxForTree,
  sandboxSettings,
  verificationSandbox,
} from '../../source/engine/sandbox/sandbox.js';
import { secretEnvFor } from '../../source/engine/sandbox/secret-env.js';
import {
  makeMissingCacheFolders,
  staticPrefix,
  writableDirsForGlobs,
} from '../../source/engine/sandbox/writable-paths.js';
import { bwrapSandboxValue } from '../support/sandbox-value.js';

// The sandbox's pure half: which folders a task's globs make writable, and the bwrap argv.

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function repo(): string {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'relais-sbx-')));
  const root = join(dir, 'repo');
  for (const d of ['src/lib', 'docs', '.git/hooks', 'relais', 'tests'])
    mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, 'README.md'), 'x');
  return root;
}

describe('static prefixes of scope globs', () => {
  it.each([
    ['src/**', 'src'],
    ['src/lib/*.ts', 'src/lib'],
    ['docs/{a,b}.md', 'docs'],
    ['**/*.ts', ''],
    ['README.md', 'README.md'],
    ['./src/x.ts', 'src/x.ts'],
    ['!src/**', ''],
  ])('%s -> "%s"', (glob, prefix) => {
    expect(staticPrefix(glob)).toBe(prefix);
  });
});

describe('writable folders for a task', () => {
  it('binds the folders of the globs, the nearest existing one for new paths, never .git or the workspace', () => {
    const root = repo();
    const dirs = writableDirsForGlobs(
      root,
      ['src/lib/**', 'src/new/deep/*.ts', 'docs/guide.md', '.git/**', 'relais/**'],
      [join(root, '.git'), join(root, 'relais')],
    );
    expect(dirs).toEqual([join(root, 'docs'), join(root, 'src')]);
  });

  it('a file at the root makes the root writable (the judge still checks the globs)', () => {
    const root = repo();
    expect(writableDirsForGlobs(root, ['README.md', 'src/**'], [])).toEqual([root]);
  });

  it('a negated glob makes nothing writable (it takes paths away)', () => {
    const root = repo();
    expect(writableDirsForGlobs(root, ['!src/secret/**'], [])).toEqual([]);
    expect(writableDirsForGlobs(root, ['docs/**', '!docs/x.md'], [])).toEqual([join(root, 'docs')]);
  });

  it('never follows a symlinked folder out of the repository, nor ".."', () => {
    const root = repo();
    mkdirSync(join(dir, 'outside'));
    symlinkSync(join(dir, 'outside'), join(root, 'escape'));
    expect(writableDirsForGlobs(root, ['escape/**', '../outside/**'], [])).toEqual([]);
  });
});

describe("verification's cache folders (sandbox.verification_writable)", () => {
  it('makes a missing one whose parent exists (cargo target/ before its first build); never its parents', () => {
    const root = repo();
    makeMissingCacheFolders(root, ['target/**', 'node_modules/.cache/**', 'src/lib/.cache/**'], []);
    expect(existsSync(join(root, 'target'))).toBe(true);
    expect(existsSync(join(root, 'src/lib/.cache'))).toBe(true);
    // node_modules/ is not there: neither it nor .cache inside it is made.
    expect(existsSync(join(root, 'node_modules'))).toBe(false);
    expect(writableDirsForGlobs(root, ['target/**'], [], false)).toEqual([join(root, 'target')]);
  });

  it('never through a symlink, out of the repository, or inside the read-only paths', () => {
    const root = repo();
    mkdirSync(join(dir, 'outside'));
    symlinkSync(join(dir, 'outside'), join(root, 'link'));
    makeMissingCacheFolders(
      root,
      ['link/.cache/**', '../elsewhere/**', '.git/cache/**', 'relais/cache/**', '**'],
      [join(root, '.git'), join(root, 'relais')],
    );
    expect(existsSync(join(dir, 'outside/.cache'))).toBe(false);
    expect(existsSync(join(dir, 'elsewhere'))).toBe(false);
    expect(existsSync(join(root, '.git/cache'))).toBe(false);
    expect(existsSync(join(root, 'relais/cache'))).toBe(false);
  });
});

describe('the bwrap argv', () => {
  const policy: SandboxPolicy = {
    kind: 'bwrap',
    bwrap: '/usr/bin/bwrap',
    root: '/r',
    writable: ['/r/src'],
    writableFiles: ['/r/relais/OUT.json'],
    readOnly: ['/r/.git', '/r/relais'],
    agentConfigs: [
      {
        at: { home: '.claude' },
        readOnly: ['/home/u/.claude/settings.json', '/home/u/.claude/hooks'],
        logins: ['/home/u/.claude/.credentials.json'],
        copied: [],
      },
      {
        at: { path: '/opt/codex-home' },
        readOnly: ['/opt/codex-home/config.toml'],
        logins: [],
        copied: [],
      },
    ],
    homeFiles: [],
    hidden: [
      { path: '/home/u/.ssh', kind: 'dir' },
      { path: '/home/u/.git-credentials', kind: 'file' },
    ],
    network: false,
  };

  it('read-only root first, writable folders next, .git and the workspace read-only on top', () => {
    const args = bwrapArgs(policy, '/tmp/s', '/r');
    const at = (...words: string[]) => args.findIndex((_, i) => words.every((w, j) => args[i + j] === w));
    expect(at('--ro-bind', '/', '/')).toBe(0);
    expect(at('--bind', '/r/src', '/r/src')).toBeGreaterThan(at('--bind', '/tmp/s', '/tmp/s'));
    expect(at('--ro-bind', '/r/.git', '/r/.git')).toBeGreaterThan(at('--bind', '/r/src', '/r/src'));
    expect(at('--bind', '/r/relais/OUT.json', '/r/relais/OUT.json')).toBeGreaterThan(
      at('--ro-bind', '/r/relais', '/r/relais'),
    );
    // Each agent config folder is a private overlay: the user's config read-only in it, bound
    // after the overlay itself; the login file is never bound (a private copy is in the overlay).
    const overlay = at('--bind', '/tmp/s/config/0', '/tmp/s/home/.claude');
    expect(overlay).toBeGreaterThan(at('--bind', '/tmp/s', '/tmp/s'));
    expect(
      at('--ro-bind', '/home/u/.claude/settings.json', '/tmp/s/home/.claude/settings.json'),
    ).toBeGreaterThan(overlay);
    expect(at('--ro-bind', '/home/u/.claude/hooks', '/tmp/s/home/.claude/hooks')).toBeGreaterThan(overlay);
    expect(args).not.toContain('/home/u/.claude/.credentials.json');
    expect(at('--bind', '/tmp/s/config/1', '/opt/codex-home')).toBeGreaterThan(overlay);
    expect(at('--ro-bind', '/opt/codex-home/config.toml', '/opt/codex-home/config.toml')).toBeGreaterThan(
      at('--bind', '/tmp/s/config/1', '/opt/codex-home'),
    );
    expect(args).not.toContain('/home/u/.claude');
    for (const flag of ['--unshare-pid', '--die-with-parent', '--new-session', '--unshare-net'])
      expect(args).toContain(flag);
    expect(args.slice(-3)).toEqual(['--chdir', '/r', '--']);
  });

  it("hides the user's credential stores right after the read-only root: a folder under an empty read-only tmpfs, a file under /dev/null", () => {
    const args = bwrapArgs(policy, '/tmp/s', '/r');
    const at = (...words: string[]) => args.findIndex((_, i) => words.every((w, j) => args[i + j] === w));
    expect(at('--tmpfs', '/home/u/.ssh', '--remount-ro', '/home/u/.ssh')).toBeGreaterThan(
      at('--proc', '/proc'),
    );
    expect(at('--ro-bind', '/dev/null', '/home/u/.git-credentials')).toBeGreaterThan(0);
    expect(at('--ro-bind', '/dev/null', '/home/u/.git-credentials')).toBeLessThan(
      at('--bind', '/tmp/s', '/tmp/s'),
    );
  });

  it('keeps the host network when the role needs it', () => {
    expect(bwrapArgs({ ...policy, network: true }, '/tmp/s', '/r')).not.toContain('--unshare-net');
  });
});

describe("the agents' config folders", () => {
  it('claude: settings, hooks, commands, plugins read-only; the login writable; .claude.json copied; runtime state left out', () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'relais-sbx-')));
    const home = join(dir, '.claude');
    for (const d of ['hooks', 'commands', 'plugins', 'projects', 'todos', 'statsig'])
      mkdirSync(join(home, d), { recursive: true });
    for (const f of [
      'settings.json',
      'CLAUDE.md',
      '.credentials.json',
      '.claude.json',
      '.claude.json.backup.1',
      'history.jsonl',
    ])
      writeFileSync(join(home, f), '{}');
    const overlay = agentConfigOverlay('claude', home, { home: '.claude' });
    expect(overlay.readOnly.map((p) => basename(p))).toEqual([
      'CLAUDE.md',
      'commands',
      'hooks',
      'plugins',
      'settings.json',
    ]);
    expect(overlay.logins).toEqual([join(home, '.credentials.json')]);
    expect(overlay.copied).toEqual([join(home, '.claude.json')]);
  });

  it('codex: config.toml, AGENTS.md, skills read-only; auth.json a private copy; installation_id copied; databases and sessions left out', () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'relais-sbx-')));
    const home = join(dir, 'codex');
    for (const d of ['skills', 'prompts', 'sessions', 'log', 'shell_snapshots'])
      mkdirSync(join(home, d), { recursive: true });
    for (const f of [
      'config.toml',
      'AGENTS.md',
      'auth.json',
      'installation_id',
      'state_5.sqlite',
      'state_5.sqlite-wal',
    ])
      writeFileSync(join(home, f), 'x');
    const overlay = agentConfigOverlay('codex', home, { path: home });
    expect(overlay.readOnly.map((p) => basename(p))).toEqual([
      'AGENTS.md',
      'config.toml',
      'prompts',
      'skills',
    ]);
    expect(overlay.logins).toEqual([join(home, 'auth.json')]);
    expect(overlay.copied).toEqual([join(home, 'installation_id')]);
  });

  it('a login name that is a symlink or a folder is never copied in (it is left out)', () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'relais-sbx-')));
    const home = join(dir, 'codex');
    mkdirSync(home);
    writeFileSync(join(dir, 'elsewhere'), 'x');
    symlinkSync(join(dir, 'elsewhere'), join(home, 'auth.json'));
    const overlay = agentConfigOverlay('codex', home, { path: home });
    expect(overlay.logins).toEqual([]);
    expect(overlay.readOnly).toEqual([]);
  });
});

describe('config "sandbox"', () => {
  it('defaults to bwrap; "off" is the shorthand opt-out; the object form sets the network per role', () => {
    expect(sandboxSettings(configSchema.parse({})).mode).toBe('bwrap');
    expect(sandboxSettings(configSchema.parse({ sandbox: 'off' })).mode).toBe('off');
    const custom = sandboxSettings(
      configSchema.parse({
        sandbox: { network: { verification: true }, writable_outside: ['/var/cache/x'] },
      }),
    );
    expect(custom).toEqual({
      mode: 'bwrap',
      network: { agents: true, verification: true, roles: {} },
      writableOutside: ['/var/cache/x'],
      verificationWritable: [],
    });
  });

  it('refuses a relative or ".." extra path and an unknown mode', () => {
    expect(configSchema.safeParse({ sandbox: { writable_outside: ['cache'] } }).success).toBe(false);
    expect(configSchema.safeParse({ sandbox: { writable_outside: ['/a/../etc'] } }).success).toBe(false);
    expect(configSchema.safeParse({ sandbox: 'firejail' }).success).toBe(false);
  });

  it('network per agent role: a role named on its own overrides `agents`, the others keep it', () => {
    const { network } = sandboxSettings(
      configSchema.parse({ sandbox: { network: { agents: true, builder: false, mapper: false } } }),
    );
    expect(networkFor(network, 'builder')).toBe(false);
    expect(networkFor(network, 'mapper')).toBe(false);
    for (const role of ['orchestrator', 'spec', 'dev', 'qa', 'planner'] as const)
      expect(networkFor(network, role)).toBe(true);
    expect(networkFor(network, 'verification')).toBe(false);
    // An old config (agents only) gives every role the same.
    const old = sandboxSettings(configSchema.parse({ sandbox: { network: { agents: false } } })).network;
    expect(networkFor(old, 'planner')).toBe(false);
    expect(configSchema.safeParse({ sandbox: { network: { reviewer: true } } }).success).toBe(false);
  });

  it('verification_writable takes repository paths only: no absolute path, no ".."', () => {
    const ok = configSchema.parse({
      sandbox: { verification_writable: ['node_modules/.cache/**', 'coverage'] },
    });
    expect(sandboxSettings(ok).verificationWritable).toEqual(['node_modules/.cache/**', 'coverage']);
    for (const bad of ['/tmp/cache', '../elsewhere', 'a/../../b', ''])
      expect(configSchema.safeParse({ sandbox: { verification_writable: [bad] } }).success, bad).toBe(false);
  });
});

describe('which paths each process may write', () => {
  const bwrapSandbox = bwrapSandboxValue;

  it("verification: the task's folders plus sandbox.verification_writable, never .git, the workspace or a link out", () => {
    const root = repo();
    mkdirSync(join(root, 'node_modules', '.cache'), { recursive: true });
    mkdirSync(join(dir, 'outside'));
    symlinkSync(join(dir, 'outside'), join(root, 'cache-out'));
    const sandbox = bwrapSandbox(root, {
      // A folder that does not exist is left out, never widened to its parent (the whole tree).
      verificationWritable: [
        'node_modules/.cache/**',
        'cache-out/**',
        '.git/**',
        'relais/x',
        'missing/cache/**',
      ],
    });
    expect(verificationSandbox(sandbox, ['src/lib/**'])?.writable).toEqual([
      join(root, 'node_modules', '.cache'),
      join(root, 'src', 'lib'),
    ]);
    // No task paths (doctor without globs): only the configured ones; never the whole tree.
    expect(verificationSandbox(bwrapSandbox(root))?.writable).toEqual([]);
  });

  it('an agent request that names no paths, or plans, may write nothing in the repository', () => {
    const root = repo();
    const sandbox = bwrapSandbox(root);
    const request = { cwd: root, permissionMode: 'acceptEdits', role: 'planner' } as unknown as AgentRequest;
    expect(requestSandbox(sandbox, request)?.writable).toEqual([]);
    const plan = { ...request, permissionMode: 'plan', writableGlobs: ['src/**'] } as AgentRequest;
    expect(requestSandbox(sandbox, plan)?.writable).toEqual([]);
    const build = { ...request, role: 'builder', writableGlobs: ['docs/**'] } as AgentRequest;
    expect(requestSandbox(sandbox, build)?.writable).toEqual([join(root, 'docs')]);
  });

  it('each agent role gets its own network setting; verification gets none unless configured', () => {
    const root = repo();
    const sandbox = bwrapSandbox(root, {
      network: { agents: true, verification: false, roles: { builder: false } },
    });
    const request = (role: string) =>
      ({ cwd: root, permissionMode: 'plan', role }) as unknown as AgentRequest;
    expect(requestSandbox(sandbox, request('builder'))?.network).toBe(false);
    expect(requestSandbox(sandbox, request('orchestrator'))?.network).toBe(true);
    expect(verificationSandbox(sandbox, [])?.network).toBe(false);
  });
});

describe('login files go back only as a same-shaped refresh', () => {
  it('same keys and types (a refreshed token) is the same shape; a new key, a lost key, another type, not JSON are not', () => {
    const login = { claudeAiOauth: { accessToken: 'a', refreshToken: 'r', expiresAt: 1 } };
    expect(sameShape(login, { claudeAiOauth: { accessToken: 'b', refreshToken: 's', expiresAt: 2 } })).toBe(
      true,
    );
    expect(sameShape(login, { claudeAiOauth: { accessToken: 'b', refreshToken: 's' } })).toBe(false);
    expect(sameShape(login, { claudeAiOauth: { ...login.claudeAiOauth, apiKeyHelper: 'x' } })).toBe(false);
    expect(sameShape(login, { ...login, hooks: {} })).toBe(false);
    expect(sameShape(login, { claudeAiOauth: 'token' })).toBe(false);
    expect(sameShape(login, undefined)).toBe(false);
    expect(sameShape(login, [login])).toBe(false);
  });

  it('a refreshed copy goes back atomically; a swapped one, or one the host changed meanwhile, does not', () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'relais-sbx-')));
    const host = join(dir, '.credentials.json');
    const privateDir = join(dir, 'private');
    mkdirSync(privateDir);
    const write = (path: string, value: unknown) => writeFileSync(path, JSON.stringify(value));
    const round = (inside: unknown, hostMeanwhile?: unknown) => {
      write(host, { claudeAiOauth: { accessToken: 'old' } });
      rmSync(join(privateDir, '.credentials.json'), { force: true });
      const copies = copyLoginsIn([host], privateDir);
      write(copies[0]?.copy as string, inside);
      if (hostMeanwhile !== undefined) write(host, hostMeanwhile);
      return { result: returnLogins(copies), host: JSON.parse(readFileSync(host, 'utf8')) };
    };
    expect(round({ claudeAiOauth: { accessToken: 'new' } })).toEqual({
      result: ['kept'],
      host: { claudeAiOauth: { accessToken: 'new' } },
    });
    expect(round({ evil: true })).toEqual({
      result: ['refused'],
      host: { claudeAiOauth: { accessToken: 'old' } },
    });
    expect(
      round({ claudeAiOauth: { accessToken: 'new' } }, { claudeAiOauth: { accessToken: 'other run' } }),
    ).toEqual({
      result: ['host-changed'],
      host: { claudeAiOauth: { accessToken: 'other run' } },
    });
  });
});

describe('a parallel lane is fenced in its own worktree', () => {
  it('rebases the task paths and the read-only .git and workspace onto the lane, never onto the main tree', () => {
    const root = repo();
    const lane = join(root, 'relais', 'worktrees', 'task-1-1');
    mkdirSync(join(lane, 'src'), { recursive: true });
    mkdirSync(join(lane, 'relais'), { recursive: true });
    writeFileSync(join(lane, '.git'), `gitdir: ${join(root, '.git', 'worktrees', 'task-1-1')}\n`);
    const main = bwrapSandboxValue(root);
    const request = {
      cwd: lane,
      permissionMode: 'acceptEdits',
      writableGlobs: ['src/**'],
    } as unknown as AgentRequest;
    const policy = requestSandbox(main, request);
    expect(policy?.root).toBe(lane);
    expect(policy?.writable).toEqual([join(lane, 'src')]);
    // The lane's own .git (a file) and workspace are read-only; the main tree's workspace, which
    // holds the lane, is not re-bound read-only over it.
    expect(policy?.readOnly).toEqual([join(lane, '.git'), join(lane, 'relais')]);
    // In the main tree nothing changes.
    const inMain = requestSandbox(main, { ...request, cwd: root } as AgentRequest);
    expect(inMain?.writable).toEqual([join(root, 'src')]);
    expect(inMain?.readOnly).toEqual([join(root, '.git'), join(root, 'relais')]);
    // A sandbox that is off stays off in a lane.
    expect(sandboxForTree({ kind: 'off' }, lane)).toEqual({ kind: 'off' });
  });
});

describe('the environment inside the sandbox', () => {
  it('drops the doors out (agent sockets, session buses, displays, the fleet database) and keeps the rest', () => {
    const env = sandboxEnv(
      {
        PATH: '/usr/bin',
        ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
        SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1',
        DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/0/bus',
        DISPLAY: ':0',
        RELAIS_FLEET_DB: 'postgresql://relais:secret@db/relais',
        PGPASSWORD: 'secret',
        DATABASE_URL: 'postgres://x',
        HOME: '/root',
      },
      '/tmp/relais-sandbox-x',
    );
    expect(env).toEqual({
      PATH: '/usr/bin',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      HOME: '/tmp/relais-sandbox-x/home',
      TMPDIR: '/tmp/relais-sandbox-x/tmp',
      TMP: '/tmp/relais-sandbox-x/tmp',
      TEMP: '/tmp/relais-sandbox-x/tmp',
    });
  });

  it("drops each role's secrets: publish tokens for everyone, model and cloud keys for verification only", () => {
    const host = { PATH: '/usr/bin', NPM_TOKEN: 'n', ANTHROPIC_API_KEY: 'a', AWS_SECRET_ACCESS_KEY: 'k' };
    const scratch = '/tmp/relais-sandbox-x';
    const agent = sandboxEnv(host, scratch, secretEnvFor('agents'));
    expect(agent).toMatchObject({ ANTHROPIC_API_KEY: 'a', AWS_SECRET_ACCESS_KEY: 'k' });
    expect(agent.NPM_TOKEN).toBeUndefined();
    const check = sandboxEnv(host, scratch, secretEnvFor('verification'));
    expect(Object.keys(check).sort()).toEqual(['HOME', 'PATH', 'TEMP', 'TMP', 'TMPDIR']);
  });
});
