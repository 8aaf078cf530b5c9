import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { relaisScript } from '../../source/demo/relais-script.js';
import {
  type ModelRequest,
  type ScriptedModel,
  startScriptedModel,
} from '../../source/demo/scripted-model-server.js';
import { laneSteps, lanesProject, maxConcurrent, tasksMd } from '../support/lanes.js';
import { type TestProject, task } from '../support/project.js';
import { CLAUDE, claudeEnv } from '../support/real-claude.js';
import { NO, runInProcess, scriptedGates, YES } from '../support/workflow.js';

// Issue 19 with the REAL Claude Code binary: two lanes, each builder a real claude process in its
// own runner-owned worktree (its Edit tool aimed at the worktree its request names),
// each tick judged, both landing through the merge queue. Only the model is scripted, and it
// answers from what each request asks (lanes call it in no fixed order).

let project: TestProject | null = null;
let model: ScriptedModel | null = null;
afterEach(async () => {
  await model?.close();
  model = null;
  project?.dispose();
  project = null;
});

const FILES = ['src/a.ts', 'src/b.ts'];
const text = (request: ModelRequest) => JSON.stringify(request.messages);

it('two lanes with real claude builders land both tasks', async () => {
  project = lanesProject((config) => {
    config.claude_code_cli.command = CLAUDE;
    config.workflow.parallel = 2;
  });
  const root = project.root;
  const which = (request: ModelRequest) =>
    text(request).includes('Build BRAVO') || text(request).includes('lane BRAVO') ? 1 : 0;
  model = await startScriptedModel(
    relaisScript({
      spec: [
        [
          {
            toolUses: [
              {
                name: 'Write',
                input: { file_path: join(root, 'specs/SPEC.md'), content: '# Spec\n\nTwo constants.\n' },
              },
              {
                name: 'Write',
                input: { file_path: join(root, 'specs/TASKS.md'), content: tasksMd([{}, {}]) },
              },
            ],
          },
          { text: 'Written.\n\nEXIT_SIGNAL: true' },
        ],
      ],
      qa: [
        [
          {
            toolUses: [
              {
                name: 'Write',
                input: {
                  file_path: join(root, 'specs/QA_REPORT.md'),
                  content: '# QA report\n\n## Summary\nFine.\n',
                },
              },
            ],
          },
          { text: 'Done.\nEXIT_SIGNAL: true' },
        ],
      ],
      orchestrator: (request) => {
        const i = which(request);
        const file = FILES[i] as string;
        return JSON.stringify(
          task({
            task_id: `T${i + 1}`,
            intent: `Write ${file}`,
            scope: {
              allowed_globs: [file],
              forbidden_globs: [],
              allow_new_files: false,
              allow_lockfile_changes: false,
            },
            builder: {
              mode: 'claude_code',
              max_turns: 4,
              instructions: `Write ${file} [lane ${i ? 'BRAVO' : 'ALPHA'}]`,
            },
          }),
        );
      },
      builder: (request) => {
        const i = which(request);
        // The lane's worktree, as Claude Code tells the model where it runs.
        const cwd = /\/[^\s"'\\]*\/relais\/worktrees\/task-\d+-\d+/.exec(JSON.stringify(request))?.[0];
        if (!cwd) throw new Error('the builder request names no lane worktree');
        const file = FILES[i] as string;
        // The builder's tools are Read, Edit, Glob, Grep and Bash; Edit wants the file read first.
        return [
          { toolUses: [{ name: 'Read', input: { file_path: join(cwd, file) } }] },
          {
            toolUses: [
              {
                name: 'Edit',
                input: {
                  file_path: join(cwd, file),
                  old_string: `export const ${i ? 'b' : 'a'} = 1;`,
                  new_string: `export const v${i} = 2;`,
                },
              },
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
      },
    }),
  );
  const run = await runInProcess(project, {
    gates: scriptedGates({ spec: YES, qa: NO }),
    env: claudeEnv(model.url),
  });
  expect(run.outcome, JSON.stringify(run.outcome)).toMatchObject({
    state: 'FAILED',
    reason: 'rejected_at_qa',
  });
  expect(project.read('src/a.ts')).toBe('export const v0 = 2;\n');
  expect(project.read('src/b.ts')).toBe('export const v1 = 2;\n');
  const landed = laneSteps(run.events).filter(([, , phase]) => phase === 'landed');
  expect(landed.map(([, t]) => t).sort()).toEqual([1, 2]);
  expect(maxConcurrent(run.events)).toBe(2);
  const builders = run.events.filter((e) => e.type === 'agent.started' && e.role === 'builder');
  expect(new Set(builders.map((e) => e.lane))).toEqual(new Set(['task-1-1', 'task-2-1']));
}, 300_000);
