import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../source/engine/workspace/load-config.js';
import { builderWrites, CLI, TestProject, task } from '../support/project.js';

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
    expect(config(['set', 'theme', 'none'], env).code).toBe(0);
    expect(config(['get', 'agents.builder.provider'], env)).toMatchObject({ code: 0, stdout: 'codex' });
    expect(config(['get', 'notifications.enabled'], env).stdout).toBe('false');
    expect(JSON.parse(config(['list', '--json'], env).stdout)).toEqual({
      // The first write names the file's JSON Schema, the installed package's copy.
      $schema: expect.stringMatching(/^file:\/\/.*\/schemas\/user_settings\.schema\.json$/),
      agents: { builder: { provider: 'codex', model: 'gpt-5.2-codex' } },
      notifications: { enabled: false },
      theme: 'none',
    });
    expect(JSON.parse(readFileSync(path.stdout, 'utf8'))).toMatchObject({ theme: 'none' });
    expect(config(['unset', 'theme'], env).code).toBe(0);
    expect(config(['get', 'theme'], env).code).toBe(1);
  }, 240_000);

  it('a bad value or an unknown key is refused by name, and the file keeps what it had', () => {
    const env = { RELAIS_CONFIG_DIR: tempDir() };
    expect(config(['set', 'theme', 'auto'], env).code).toBe(0);
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
    expect(JSON.parse(readFileSync(join(xdg, 'relais', 'config.json'), 'utf8'))).toMatchObject({
      theme: 'none',
    });
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

describe('user settings during a run', () => {
  let run: TestProject | null = null;
  afterEach(() => {
    run?.dispose();
    run = null;
  });

  /** A settings folder of its own (RELAIS_CONFIG_DIR), holding `settings` when given. */
  function settingsFolder(settings?: unknown): { env: NodeJS.ProcessEnv; file: string } {
    const folder = tempDir();
    const file = join(folder, 'config.json');
    if (settings !== undefined) writeFileSync(file, JSON.stringify(settings));
    return { env: { RELAIS_CONFIG_DIR: folder }, file };
  }

  it('a broken settings file is not silently ignored: the run warns with its path and goes on without it', () => {
    run = TestProject.create();
    const { env, file } = settingsFolder({ theme: 'purple' });
    run.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'export const a = 2;\n' })],
    });
    const ran = run.cliSync(['run'], env);
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`user settings ignored for this run: ${file}: theme`);
    expect(ran.stdout).toContain('Result: SUCCESS');
  });

  it('notifications.enabled rings the terminal bell on stderr when the work ends, and only then', () => {
    run = TestProject.create();
    const BEL = '\u0007';
    const quiet = run.cliSync(['plan', '--stats'], settingsFolder().env);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr + quiet.stdout).not.toContain(BEL);
    const rung = run.cliSync(
      ['plan', '--stats', '--json'],
      settingsFolder({ notifications: { enabled: true } }).env,
    );
    expect(rung.code).toBe(0);
    expect(rung.stderr.split(BEL)).toHaveLength(2);
    // stdout stays what a script parses.
    expect(rung.stdout).not.toContain(BEL);
    expect(JSON.parse(rung.stdout)).toMatchObject({ sessions: [] });
  });
});
