import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../source/engine/workspace/load-config.js';
import { CLI } from '../support/project.js';

// `relais config` (conf, in the OS config folder) and its place beneath relais.config.json.
// Every store here is a temp folder (RELAIS_CONFIG_DIR or XDG_CONFIG_HOME), never the real one.

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'relais-settings-test-'));
  dirs.push(dir);
  return dir;
}

function config(args: string[], env: NodeJS.ProcessEnv) {
  const r = spawnSync(process.execPath, [CLI, 'config', ...args], {
    env: { ...process.env, CI: 'true', ...env },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
}

describe('relais config get|set|unset|list|path', () => {
  it('keeps settings in the folder it names, checked by the schema, and reads them back', () => {
    const env = { RELAIS_CONFIG_DIR: tempDir() };
    const path = config(['path'], env);
    expect(path).toMatchObject({ code: 0, stdout: join(env.RELAIS_CONFIG_DIR, 'config.json') });
    expect(config(['set', 'agents.builder.provider', 'codex'], env).code).toBe(0);
    expect(config(['set', 'agents.builder.model', 'gpt-5.2-codex'], env).code).toBe(0);
    expect(config(['set', 'notifications.enabled', 'false'], env).code).toBe(0);
    expect(config(['set', 'theme', 'dark'], env).code).toBe(0);
    expect(config(['get', 'agents.builder.provider'], env)).toMatchObject({ code: 0, stdout: 'codex' });
    expect(config(['get', 'notifications.enabled'], env).stdout).toBe('false');
    expect(JSON.parse(config(['list', '--json'], env).stdout)).toEqual({
      agents: { builder: { provider: 'codex', model: 'gpt-5.2-codex' } },
      notifications: { enabled: false },
      theme: 'dark',
    });
    expect(JSON.parse(readFileSync(path.stdout, 'utf8'))).toMatchObject({ theme: 'dark' });
    expect(config(['unset', 'theme'], env).code).toBe(0);
    expect(config(['get', 'theme'], env).code).toBe(1);
  }, 240_000);

  it('a bad value or an unknown key is refused by name, and the file keeps what it had', () => {
    const env = { RELAIS_CONFIG_DIR: tempDir() };
    expect(config(['set', 'theme', 'light'], env).code).toBe(0);
    const before = readFileSync(join(env.RELAIS_CONFIG_DIR, 'config.json'), 'utf8');
    const bad = config(['set', 'agents.builder.provider', 'gemini'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('agents.builder.provider');
    const unknown = config(['set', 'colour', 'red'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('colour');
    expect(readFileSync(join(env.RELAIS_CONFIG_DIR, 'config.json'), 'utf8')).toBe(before);
    expect(config(['set', 'theme'], env).code).toBe(2);
    expect(config(['frobnicate'], env).code).toBe(2);
  }, 240_000);

  it('a hand-edited file that breaks the schema is reported with the fix, not ignored', () => {
    const env = { RELAIS_CONFIG_DIR: tempDir() };
    writeFileSync(join(env.RELAIS_CONFIG_DIR, 'config.json'), JSON.stringify({ theme: 'purple' }));
    const list = config(['list'], env);
    expect(list.code).toBe(1);
    expect(list.stderr).toContain('theme');
    expect(list.stderr).toContain('Fix: relais config unset <key>');
  });

  it('without RELAIS_CONFIG_DIR it is the OS config folder (XDG_CONFIG_HOME/relais on Linux)', () => {
    const xdg = tempDir();
    const env = { RELAIS_CONFIG_DIR: '', XDG_CONFIG_HOME: xdg };
    expect(config(['path'], env).stdout).toBe(join(xdg, 'relais', 'config.json'));
    expect(config(['set', 'theme', 'none'], env).code).toBe(0);
    expect(JSON.parse(readFileSync(join(xdg, 'relais', 'config.json'), 'utf8'))).toEqual({ theme: 'none' });
  });
});

describe('user settings beneath relais.config.json', () => {
  function project(config: Record<string, unknown>): string {
    const root = tempDir();
    writeFileSync(join(root, 'relais.config.json'), JSON.stringify(config));
    return root;
  }

  it("fill what the project omits; the project's own values win", async () => {
    const env = { ...process.env, RELAIS_CONFIG_DIR: tempDir() };
    writeFileSync(
      join(env.RELAIS_CONFIG_DIR, 'config.json'),
      JSON.stringify({
        agents: {
          builder: { provider: 'codex', model: 'gpt-5.2-codex' },
          qa: { model: 'haiku' },
          planner: { provider: 'codex', model: 'gpt-5.2' },
        },
      }),
    );
    const loaded = await loadConfig(
      project({ agents: { planner: { provider: 'claude', model: 'opus' }, qa: { provider: 'claude' } } }),
      env,
    );
    if (!loaded.ok) throw new Error(loaded.detail);
    const { agents } = loaded.config;
    expect(agents.builder).toEqual({ provider: 'codex', model: 'gpt-5.2-codex', fallback_model: 'haiku' });
    expect(agents.planner).toMatchObject({ provider: 'claude', model: 'opus' });
    expect(agents.qa).toMatchObject({ provider: 'claude', model: 'haiku' });
    expect(agents.orchestrator).toMatchObject({ provider: 'claude', model: 'opus' });
  });

  it('with no user settings the project config loads exactly as before', async () => {
    const env = { ...process.env, RELAIS_CONFIG_DIR: tempDir() };
    const loaded = await loadConfig(project({}), env);
    if (!loaded.ok) throw new Error(loaded.detail);
    expect(loaded.config.agents.builder).toEqual({
      provider: 'claude',
      model: 'sonnet',
      fallback_model: 'haiku',
    });
  });
});
