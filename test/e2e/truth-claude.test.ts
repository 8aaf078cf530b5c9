import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { relaisScript, roleOf, userText } from '../../source/demo/relais-script.js';
import { type ScriptedModel, startScriptedModel } from '../../source/demo/scripted-model-server.js';
import { renderPrBody } from '../../source/engine/workflow/pr-body.js';
import { type TestProject, task } from '../support/project.js';
import { CLAUDE, claudeEnv } from '../support/real-claude.js';
import {
  ghCalls,
  NO,
  QA_MD,
  runInProcess,
  scriptedGates,
  TASKS_MD,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';

// Issue 15 end to end through the REAL Claude Code binary (only the model behind it is scripted,
// on 127.0.0.1): its Write and Edit tools change the files, its own output is what the runner
// reads. A claim the runner disproves is never "done" anywhere; a builder's question is a question.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
let model: ScriptedModel | null = null;
afterEach(async () => {
  await model?.close();
  model = null;
  project?.dispose();
  project = null;
});

const write = (root: string, path: string, content: string) => ({
  name: 'Write',
  input: { file_path: join(root, path), content },
});

const specTurns = (root: string) => [
  {
    toolUses: [
      write(root, 'specs/SPEC.md', '# Spec\n\nGreet and say bye.\n'),
      write(root, 'specs/TASKS.md', TASKS_MD),
    ],
  },
  { text: 'SPEC.md and TASKS.md are written.\n\nEXIT_SIGNAL: true' },
];

const qaTurns = (root: string) => [
  { toolUses: [write(root, 'specs/QA_REPORT.md', QA_MD)] },
  { text: 'The report is in specs/QA_REPORT.md.\nEXIT_SIGNAL: true' },
];

/** The runner's own check: src/b.ts must say bye. The dev-agent below never writes it. */
const HAS_BYE = {
  id: 'has-bye',
  cmd: 'node',
  args: ['-e', 'process.exit(require("fs").readFileSync("src/b.ts", "utf8").includes("bye") ? 0 : 1)'],
};

describe('e2e: the truth of endings with the real claude binary (issue 15)', () => {
  it('single engine: the dev-agent marks both tasks completed and says EXIT_SIGNAL, the checks fail: no record, status or PR body counts them done', async () => {
    const p = workflowProject((config) => {
      config.claude_code_cli.command = CLAUDE;
      config.workflow.implementation_engine = 'single';
      config.workflow.agent_retries = 1;
      config.verification.templates.push(HAS_BYE);
    });
    project = p;
    const claimed = TASKS_MD.replaceAll('- **Status**: pending', '- **Status**: completed');
    const claim = [
      {
        toolUses: [
          write(p.root, 'src/a.ts', 'export const greet = (n: string) => "Hello, " + n;\n'),
          write(p.root, 'specs/TASKS.md', claimed),
        ],
      },
      { text: 'Both tasks are implemented and tested.\n\nEXIT_SIGNAL: true' },
    ];
    model = await startScriptedModel(
      relaisScript({ orchestrator: [], builder: [], spec: [specTurns(p.root)], dev: [claim, claim] }),
    );
    const run = await runInProcess(p, {
      gates: scriptedGates({ spec: YES, qa: YES }),
      env: claudeEnv(model.url),
    });
    expect(run.outcome, JSON.stringify(run.outcome)).toMatchObject({ state: 'FAILED' });
    // The disproved runs were rolled back: the tree does not carry the claim either.
    expect(p.read('specs/TASKS.md')).toBe(TASKS_MD);
    const firstTurns = model.requests.filter(
      (r) => roleOf(r) === 'dev' && !r.messages.some((m) => m.role === 'assistant'),
    );
    expect(firstTurns).toHaveLength(2);
    // The second run was told why the first claim was not believed.
    const devPrompts = model.requests.filter((r) => roleOf(r) === 'dev').map(userText);
    expect(devPrompts.join('\n')).toContain('the runner checked');

    const workflow = workflowFile(p);
    expect(workflow.tasks.map((t: any) => t.status)).toEqual(['in_progress', 'in_progress']);
    expect(workflow.tasks_completed).toBe(0);
    expect(workflow.tasks.map((t: any) => t.verdict)).toEqual([null, null]);
    expect(workflow.tasks[1].claimed).toBe('the dev-agent marked it completed');
    expect(run.events.some((e) => e.type === 'task.updated' && e.status === 'completed')).toBe(false);

    // `ralphy status` through the CLI counts what the runner verified: none.
    const status = p.cliSync(['status']);
    expect(status.stdout).toContain('Tasks:     0/2');
    expect(status.stdout).not.toContain('2/2');
    // The PR phase is never reached; the body it would write from this record ticks no box.
    const body = renderPrBody({
      workflow,
      objective: '',
      blast: { files_touched: 0, lines_added: 0, lines_deleted: 0, new_files: 0 },
      files: [],
      qaSummary: [],
    });
    expect(body).toContain('## Tasks (0/2 verified by the runner)');
    expect(body).not.toContain('- [x]');
    expect(ghCalls(p)).toEqual([]);
  }, 300_000); // three real claude processes on a loaded machine: slow, not a wait

  it('ticks engine: the builder answers with a question; the question gate is raised and the tick is no failure', async () => {
    const p = workflowProject((config) => {
      config.claude_code_cli.command = CLAUDE;
      // A counted tick for the question would fail the workflow.
      config.workflow.max_ticks_per_task = 1;
    });
    project = p;
    const root = p.root;
    const taskFor = (file: string, id: string) =>
      JSON.stringify(
        task({
          task_id: id,
          intent: `Implement ${file}`,
          scope: {
            allowed_globs: [file],
            forbidden_globs: [],
            allow_new_files: false,
            allow_lockfile_changes: false,
          },
          builder: { mode: 'claude_code', max_turns: 6, instructions: `Implement ${file}` },
        }),
      );
    const edits = (file: string, before: string, after: string) => [
      { toolUses: [{ name: 'Read', input: { file_path: join(root, file) } }] },
      {
        toolUses: [
          { name: 'Edit', input: { file_path: join(root, file), old_string: before, new_string: after } },
        ],
      },
      {
        text: JSON.stringify({
          summary: `wrote ${file}`,
          files_intended: [file],
          commands_ran: [],
          notes: [],
        }),
      },
    ];
    const question = 'Before I edit src/a.ts: should greet() say "Hello" or "Good day"?';
    model = await startScriptedModel(
      relaisScript({
        spec: [specTurns(root)],
        orchestrator: [taskFor('src/a.ts', 'T1'), taskFor('src/a.ts', 'T1'), taskFor('src/b.ts', 'T2')],
        builder: [
          [{ text: question }],
          edits('src/a.ts', 'export const a = 1;', 'export const greet = (n: string) => "Hello, " + n;'),
          edits('src/b.ts', 'export const b = 1;', 'export const bye = (n: string) => "Bye, " + n;'),
        ],
        qa: [qaTurns(root)],
      }),
    );
    const gates = scriptedGates({
      spec: YES,
      input: { decision: 'answer', by: 'human', text: 'Hello.' },
      qa: NO,
    });
    const run = await runInProcess(p, { gates, env: claudeEnv(model.url) });
    expect(run.outcome, JSON.stringify(run.outcome)).toMatchObject({
      state: 'FAILED',
      reason: 'rejected_at_qa',
    });
    // The gate, with the builder's own words as Claude Code printed them.
    const asked = gates.asked.find((g) => g.gate === 'input');
    expect(asked).toMatchObject({ title: 'builder-agent needs input', answer: 'text' });
    expect(asked?.lines[0]).toContain(question);
    // The answer reached the next tick's orchestrator, and no tick was spent on the question.
    const orchestrator = model.requests.filter((r) => roleOf(r) === 'orchestrator').map(userText);
    expect(orchestrator[1]).toContain('The human answered:\nHello.');
    const workflow = workflowFile(p);
    expect(workflow.tasks.map((t: any) => [t.status, t.verdict, t.ticks])).toEqual([
      ['completed', 'verified', 1],
      ['completed', 'verified', 1],
    ]);
    expect(p.read('src/a.ts')).toContain('Hello, ');
    // The question was never shown as a stopped attempt of the task, nor tripped the breaker.
    const rows = run.events.filter((e) => e.type === 'task.updated' && e.number === 1);
    expect(rows.some((e) => e.type === 'task.updated' && e.verdict === 'rejected')).toBe(false);
    expect(workflow.circuit_breaker).toMatchObject({ state: 'closed', attempts: 0 });
  }, 300_000);
});
