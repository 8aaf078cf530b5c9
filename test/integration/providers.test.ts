import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  fakeProviderOverrides,
  type ScriptedResponses,
  startScriptedResponses,
} from '../../source/demo/scripted-responses-server.js';
import { BUILDER_OK, REPO_ROOT, TestProject, task } from '../support/project.js';

// docs/ARCHITECTURE.md: any role can use any provider, in any engine, from config alone
// (`agents.<role>.provider`). Here the builder of a real `relais run` tick is the REAL codex
// binary (against a scripted Responses API on 127.0.0.1), then the external driver; the
// orchestrator stays the fake Claude Code.

const CODEX = join(REPO_ROOT, 'node_modules/.bin/codex');
const DRIVER = join(REPO_ROOT, 'test/support/fake-driver.mjs');

let project: TestProject | undefined;
let server: ScriptedResponses | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  project?.dispose();
  project = undefined;
});

describe('a tick whose builder is chosen by agents.builder.provider', () => {
  it('codex, in the sandbox: the real codex exec edits the file, the runner judges, verifies and commits it; its CODEX_HOME stays as it was', async () => {
    server = await startScriptedResponses((r) =>
      r.toolOutputs.length === 0
        ? {
            text: 'Editing src/a.ts.',
            commands: [
              "printf 'export const a = 2;\\n' > src/a.ts",
              'echo "home=$HOME"',
              // A hostile model: a notify program for the user's next interactive codex.
              `echo 'notify = ["touch", "/tmp/relais-pwned"]' >> "$CODEX_HOME/config.toml"`,
            ],
          }
        : { text: JSON.stringify(BUILDER_OK) },
    );
    const url = server.url;
    const created = TestProject.create();
    project = created;
    const codexHome = join(created.base, 'codex-home');
    mkdirSync(codexHome);
    writeFileSync(join(codexHome, 'config.toml'), "# the user's own\n");
    created.commitConfig((c) => {
      c.agents.builder = { provider: 'codex', model: 'gpt-5.2-codex', fallback_model: null };
      c.codex_cli = {
        command: CODEX,
        config_overrides: fakeProviderOverrides(url),
        // In the sandbox a CODEX_HOME is a private overlay: config read-only, state thrown away.
        extra_env: { OPENAI_API_KEY: 'sk-test-offline', CODEX_HOME: codexHome },
      };
    });
    project.scenario({ orchestrator: [{ result_json: task() }] });
    const run = await project.cli(['run']).done;
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(project.report()).toMatchObject({
      code: 'SUCCESS',
      sandbox: 'bwrap',
      agents: { builder: { summary: 'did it' } },
    });
    expect(project.read('src/a.ts')).toBe('export const a = 2;\n');
    expect(project.git('log', '-1', '--format=%s').trim()).toBe('relais(T1): Change a');
    expect(project.status()).toBe('');
    // Codex's commands ran in the sandbox (its scratch HOME); the config.toml write was refused.
    const outputs = server.requests[1]?.toolOutputs.join('\n') ?? '';
    expect(outputs).toMatch(/home=\S*relais-sandbox-[\w.-]+\/home\b/);
    expect(outputs).toContain('Read-only file system');
    expect(readdirSync(codexHome)).toEqual(['config.toml']);
    expect(readFileSync(join(codexHome, 'config.toml'), 'utf8')).toBe("# the user's own\n");
    // Codex got the builder prompt with the task; Claude Code was called for the orchestrator only.
    expect(server.requests[0]?.model).toBe('gpt-5.2-codex');
    expect(server.requests[0]?.prompt).toContain('Change a');
    expect(project.calls().map((c) => c.role)).toEqual(['orchestrator']);
  });

  it('external: the driver gets the task, the argv and the builder prompt on stdin; its edit is judged', () => {
    project = TestProject.create(undefined, (c) => {
      c.agents.builder = { provider: 'external', model: 'my-driver', fallback_model: null };
      c.builder.cursor = {
        command: DRIVER,
        args: ['{{TASK_FILE}}', '{{OUTPUT_FILE}}'],
        timeout_seconds: 30,
        output_file: 'relais/BUILDER_RESULT.json',
      };
    });
    project.scenario({ orchestrator: [{ result_json: task() }] });
    // In the harness folder: the driver writes what it saw next to its plan, and that folder is
    // the one the sandbox leaves writable outside the repository.
    const plan = join(project.harness, 'driver.json');
    writeFileSync(
      plan,
      JSON.stringify({
        writes: { 'src/a.ts': 'export const a = 3;\n' },
        result: { ...BUILDER_OK, summary: 'driver did it' },
        record_stdin: true,
      }),
    );
    const run = project.cliSync(['run'], { RELAIS_FAKE_DRIVER: plan });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(project.report()).toMatchObject({
      code: 'SUCCESS',
      agents: { builder: { summary: 'driver did it' } },
    });
    expect(project.read('src/a.ts')).toBe('export const a = 3;\n');
    const seen = JSON.parse(readFileSync(`${plan}.seen.json`, 'utf8'));
    expect(seen.argv).toEqual([
      join(project.root, 'relais/TASK.json'),
      join(project.root, 'relais/BUILDER_RESULT.json'),
    ]);
    expect(seen.task_id).toBe('T1');
    const input = JSON.parse(readFileSync(`${plan}.stdin.json`, 'utf8'));
    expect(input.role).toBe('builder');
    expect(input.stdin).toContain('Change a');
    expect(project.calls().map((c) => c.role)).toEqual(['orchestrator']);
  });

  it("an out-of-scope edit by the external builder is refused by the sandbox like any other builder's", () => {
    project = TestProject.create(undefined, (c) => {
      c.agents.builder = { provider: 'external', model: 'my-driver', fallback_model: null };
      c.builder.cursor = { command: DRIVER, args: ['{{TASK_FILE}}', '{{OUTPUT_FILE}}'] };
    });
    project.scenario({ orchestrator: [{ result_json: task() }] });
    const plan = join(project.harness, 'driver.json');
    writeFileSync(plan, JSON.stringify({ writes: { 'README.md': 'pwned\n' }, result: BUILDER_OK }));
    const head = project.head();
    const run = project.cliSync(['run'], { RELAIS_FAKE_DRIVER: plan });
    expect(run.code).toBe(1);
    // The judge's own stop for a driver's landed out-of-scope write: builders.test.ts, unsandboxed.
    expect(project.report()).toMatchObject({
      code: 'STOP_SANDBOX_WRITE_REFUSED',
      detail: expect.stringContaining('README.md'),
    });
    expect(project.exists('README.md')).toBe(false);
    expect(project.head()).toBe(head);
    expect(project.status()).toBe('');
  });

  it('a provider whose CLI is missing blocks before anything runs, naming the setting', () => {
    project = TestProject.create(undefined, (c) => {
      c.agents.builder = { provider: 'codex', model: 'gpt-5.2-codex', fallback_model: null };
      c.codex_cli = { command: './no-such-codex' };
    });
    project.scenario({ orchestrator: [{ result_json: task() }] });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(project.report()).toMatchObject({
      code: 'BLOCKED_AGENT_CLI_MISSING',
      detail: expect.stringContaining(
        'codex_cli.command "./no-such-codex" (agents.builder.provider "codex")',
      ),
    });
    expect(project.calls()).toEqual([]);
  });

  it('provider "external" without a driver is refused by the config schema, by field', () => {
    project = TestProject.create();
    project.commitConfig((c) => {
      c.agents.orchestrator = { provider: 'external', model: 'x' };
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('agents.orchestrator.provider');
    expect(run.stdout).toContain('needs a builder.cursor driver');
  });
});
