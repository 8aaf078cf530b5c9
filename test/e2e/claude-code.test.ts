import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { relaisScript, roleOf } from '../../source/demo/relais-script.js';
import { type ScriptedModel, startScriptedModel } from '../../source/demo/scripted-model-server.js';
import { TestProject, task, unsandboxed } from '../support/project.js';
import { CLAUDE, claudeEnv } from '../support/real-claude.js';

// End to end through the REAL Claude Code binary (@anthropic-ai/claude-code); only the model
// behind it is scripted, served on 127.0.0.1 by the test.

let project: TestProject;
let model: ScriptedModel;
afterEach(async () => {
  await model?.close();
  project?.dispose();
});

// Sandboxed, as a user's run is: the real binary inside bubblewrap.
function setup(files: Record<string, string>): TestProject {
  return TestProject.create(files, (config) => {
    config.claude_code_cli.command = CLAUDE;
    config.verification.templates.push({
      id: 'greeting',
      cmd: 'node',
      args: [
        '-e',
        'const s = require("fs").readFileSync("src/greet.js", "utf8"); process.exit(s.includes("Hello, Relais") ? 0 : 1)',
      ],
    });
  });
}

const builderResult = (summary: string) =>
  JSON.stringify({ summary, files_intended: ['src/greet.js'], commands_ran: [], notes: [] });

describe('e2e: relais run with the real claude binary', () => {
  it("a successful tick edits through Claude Code's own Edit tool, verifies and commits", async () => {
    project = setup({ 'src/greet.js': 'module.exports = () => "Hello, world";\n' });
    const file = join(project.root, 'src/greet.js');
    model = await startScriptedModel(
      relaisScript({
        orchestrator: [
          JSON.stringify(task({ intent: 'Greet Relais', verification: { fast: ['greeting'], slow: [] } })),
        ],
        builder: [
          [
            { text: 'Reading the file first.', toolUses: [{ name: 'Read', input: { file_path: file } }] },
            {
              toolUses: [
                {
                  name: 'Edit',
                  input: { file_path: file, old_string: 'Hello, world', new_string: 'Hello, Relais' },
                },
              ],
            },
            { text: builderResult('Greets Relais now') },
          ],
        ],
      }),
    );
    const base = project.head();
    const run = await project.cli(['run'], { env: claudeEnv(model.url) }).done;
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const report = project.report();
    expect(report).toMatchObject({
      code: 'SUCCESS',
      scope: { touched_paths: ['src/greet.js'] },
      blast_radius: { files_touched: 1, lines_added: 1, lines_deleted: 1 },
    });
    expect(report.agents.builder.summary).toBe('Greets Relais now');
    expect(report.verification.runs).toEqual([
      expect.objectContaining({ template_id: 'greeting', exit_code: 0 }),
    ]);
    expect(project.read('src/greet.js')).toBe('module.exports = () => "Hello, Relais";\n');
    expect(project.git('rev-list', '--count', `${base}..HEAD`).trim()).toBe('1');
    expect(project.status()).toBe('');
    expect(run.stdout).toContain('builder tool Edit');
    // Claude Code really ran its Edit tool: the tool result came back to the model as a success.
    const afterEdit = model.requests.filter((r) => roleOf(r) === 'builder').at(-1);
    expect(JSON.stringify(afterEdit?.messages)).toContain('has been updated');
    // The builder was offered exactly the restricted tool set (`--tools`), plus Claude Code's internal
    // placeholder for deferred tools, which has no behaviour of its own.
    const offered = (model.requests.find((r) => roleOf(r) === 'builder')?.toolNames ?? []).filter(
      (n) => n !== 'DeferredToolPlaceholder',
    );
    expect([...offered].sort()).toEqual(['Bash', 'Edit', 'Glob', 'Grep', 'Read']);
    expect(model.requests.find((r) => roleOf(r) === 'orchestrator')?.toolNames).toEqual([]);
  });

  it('an out-of-scope Edit is refused by Claude Code itself (the scope hook): the file never changes and the model is told', async () => {
    project = setup({
      'src/greet.js': 'module.exports = () => "Hello, world";\n',
      'package.json': '{ "name": "demo" }\n',
    });
    const file = join(project.root, 'package.json');
    const greet = join(project.root, 'src/greet.js');
    model = await startScriptedModel(
      relaisScript({
        orchestrator: [
          JSON.stringify(
            task({
              intent: 'Greet Relais',
              verification: { fast: ['greeting'], slow: [] },
              builder: { mode: 'claude_code', max_turns: 8, instructions: 'Greet Relais' },
            }),
          ),
        ],
        builder: [
          [
            { toolUses: [{ name: 'Read', input: { file_path: file } }] },
            {
              toolUses: [
                { name: 'Edit', input: { file_path: file, old_string: '"demo"', new_string: '"pwned"' } },
              ],
            },
            { text: 'Refused; staying in src.', toolUses: [{ name: 'Read', input: { file_path: greet } }] },
            {
              toolUses: [
                {
                  name: 'Edit',
                  input: { file_path: greet, old_string: 'Hello, world', new_string: 'Hello, Relais' },
                },
              ],
            },
            { text: builderResult('Greets Relais; package.json was refused') },
          ],
        ],
      }),
    );
    const run = await project.cli(['run'], { env: claudeEnv(model.url) }).done;
    // The model adapted after the refusal: the tick goes on and is judged on what really changed.
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const report = project.report();
    expect(report).toMatchObject({
      code: 'SUCCESS',
      sandbox: 'bwrap',
      scope: { touched_paths: ['src/greet.js'] },
    });
    expect(project.read('package.json')).toBe('{ "name": "demo" }\n');
    expect(project.read('src/greet.js')).toBe('module.exports = () => "Hello, Relais";\n');
    // The refusal came from Claude Code's hook (not the sandbox's EROFS), and reached the model.
    const builderRequests = model.requests.filter((r) => roleOf(r) === 'builder');
    const told = JSON.stringify(builderRequests[2]?.messages);
    expect(told).toContain('Relais refused this write before it happened');
    expect(told).toContain("package.json is outside this task's scope.allowed_globs");
    expect(told).not.toContain('EROFS');
    expect(report.budgets.warnings.join('\n')).toContain('builder write refused before it happened');
    expect(project.status()).toBe('');
  });

  it('unsandboxed, an out-of-scope write through Bash reaches the disk and the judge rolls it back', async () => {
    project = TestProject.create(
      { 'src/greet.js': 'module.exports = () => "Hello, world";\n', 'package.json': '{ "name": "demo" }\n' },
      (config) => {
        config.claude_code_cli.command = CLAUDE;
        unsandboxed('the out-of-scope Bash write must reach the disk: the judge rolls it back')(config);
      },
    );
    model = await startScriptedModel(
      relaisScript({
        orchestrator: [JSON.stringify(task())],
        builder: [
          [
            {
              toolUses: [{ name: 'Bash', input: { command: 'echo \'{ "name": "pwned" }\' > package.json' } }],
            },
            { text: builderResult('I only touched src, promise') },
          ],
        ],
      }),
    );
    const run = await project.cli(['run'], { env: claudeEnv(model.url) }).done;
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const report = project.report();
    expect(report.code).toBe('STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED');
    expect(report.agents.builder.summary).toBe('I only touched src, promise');
    expect(report.scope.touched_paths).toEqual(['package.json']);
    expect(report.rollback).toMatchObject({ performed: true, clean: true });
    expect(project.read('package.json')).toBe('{ "name": "demo" }\n');
    expect(project.status()).toBe('');
  });

  it('relais loop: three tasks through Claude Code, then a control stop: three commits and a success summary', async () => {
    project = setup({ 'src/greet.js': 'module.exports = () => "Hello, world";\n' });
    const file = join(project.root, 'src/greet.js');
    const step = (from: string, to: string) => [
      { toolUses: [{ name: 'Read', input: { file_path: file } }] },
      { toolUses: [{ name: 'Edit', input: { file_path: file, old_string: from, new_string: to } }] },
      { text: builderResult(`${from} -> ${to}`) },
    ];
    const { builder: _none, ...stopTask } = task({ task_id: 'DONE' });
    model = await startScriptedModel(
      relaisScript({
        orchestrator: [
          JSON.stringify(task({ task_id: 'T1', intent: 'Say hi' })),
          JSON.stringify(task({ task_id: 'T2', intent: 'Say hey' })),
          JSON.stringify(
            task({ task_id: 'T3', intent: 'Greet Relais', verification: { fast: ['greeting'], slow: [] } }),
          ),
          JSON.stringify({ ...stopTask, control: { action: 'stop', reason: 'greeting done' } }),
        ],
        builder: [
          step('Hello, world', 'Hi, world'),
          step('Hi, world', 'Hey, world'),
          step('Hey, world', 'Hello, Relais'),
        ],
      }),
    );
    const base = project.head();
    const run = await project.cli(['loop', '--mode', 'milestone'], { env: claudeEnv(model.url) }).done;
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(project.git('log', '--format=%s', `${base}..HEAD`).trim().split('\n')).toEqual([
      'relais(T3): Greet Relais',
      'relais(T2): Say hey',
      'relais(T1): Say hi',
    ]);
    expect(run.stdout).toMatch(
      /Loop finished \(milestone\): 4 tick\(s\) \[4 SUCCESS\], 7 agent call\(s\), \$\d+\.\d+; stopped because control stop: greeting done/,
    );
    expect(project.read('src/greet.js')).toBe('module.exports = () => "Hello, Relais";\n');
    expect(project.status()).toBe('');
  });

  it('an orchestrator that answers prose twice ends BLOCKED', async () => {
    project = setup({ 'src/greet.js': 'x\n' });
    model = await startScriptedModel(
      relaisScript({
        orchestrator: ['Let me think about the codebase first.', 'I would suggest refactoring.'],
        builder: [],
      }),
    );
    const run = await project.cli(['run'], { env: claudeEnv(model.url) }).done;
    expect(run.code, run.stdout + run.stderr).toBe(3);
    expect(project.report().code).toBe('BLOCKED_ORCHESTRATOR_OUTPUT_INVALID');
    const orchestratorCalls = model.requests.filter((r) => roleOf(r) === 'orchestrator');
    expect(orchestratorCalls).toHaveLength(2);
    expect(JSON.stringify(orchestratorCalls[1]?.messages)).toContain('Your previous answer was rejected');
    expect(model.requests.filter((r) => roleOf(r) === 'builder')).toEqual([]);
    expect(project.report().agents.orchestrator.cost_usd).toBeGreaterThan(0);
  });
});
