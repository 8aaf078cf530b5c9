import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { demoPlan } from '../../source/demo/demo-plan.js';
import { demoPlanner } from '../../source/demo/demo-planner.js';
import { notCompleted, WHAT_IS_SCRIPTED } from '../../source/demo/demo-text.js';
import type { ModelRequest } from '../../source/demo/scripted-model-server.js';
import { REPO_ROOT } from '../support/project.js';

// Issue 16 item 9: the demo says what is scripted, and its resume hint resumes the demo.

let dir: string | null = null;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

function request(user: string, assistantTurns = 0): ModelRequest {
  return {
    model: 'opus',
    system: '',
    toolNames: [],
    stream: true,
    messages: [
      { role: 'user', content: user },
      ...Array.from({ length: assistantTurns }, () => ({ role: 'assistant', content: 'ok' })),
    ],
  };
}

function demoRepo(slugify: string): string {
  dir = mkdtempSync(join(tmpdir(), 'relais-demo-plan-'));
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src/slugify.js'), slugify);
  return dir;
}

describe('the demo says what is scripted', () => {
  it('before it runs: the model is scripted and a typed answer does not change what it writes', () => {
    expect(WHAT_IS_SCRIPTED).toContain('scripted demo');
    expect(WHAT_IS_SCRIPTED).toContain(
      'the scripted agents write the same spec and code whatever you answer',
    );
  });

  it("the planner's reply to a typed answer says the scripted spec does not depend on it", () => {
    const dump = '=== OPEN GAPS ===\n[gap 1] accents?\n→ answers gap 1: turn them into ASCII';
    const reply = JSON.parse(demoPlanner(request(dump)).text ?? '{}');
    const comment = reply.actions.find((a: { type: string }) => a.type === 'post_comment');
    expect(comment.data.content).toContain(
      'the scripted spec-agent writes the same spec whatever you answered',
    );
  });
});

describe('the resume hint and the resumed script', () => {
  it('names the command that resumes the demo, and warns that a bare ralphy start runs your own claude', () => {
    const text = notCompleted('/tmp/relais-demo-abc', 1, false, false);
    expect(text).toContain('npm run demo -- --resume /tmp/relais-demo-abc');
    expect(text).toContain('would call your own claude');
    expect(text).not.toMatch(/^\s*(Next: )?ralphy start \//m);
    // The command it names exists: package.json's demo script runs the demo with its arguments.
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(pkg.scripts.demo).toMatch(/node dist\/demo\/run-demo\.js$/);
  });

  it('a resumed orchestrator answers from the code on disk: task 1 unfinished, its honest fix; finished, task 2', () => {
    const untouched = demoRepo(
      "export function slugify(title) {\n  return title.toLowerCase().replace(/ /g, '-');\n}\n",
    );
    const plan = demoPlan(untouched, { resume: true });
    const ask = plan.orchestrator as (r: ModelRequest) => string;
    expect(JSON.parse(ask(request('next task?'))).task_id).toBe('T1-trim-again');
    writeFileSync(join(untouched, 'src/slugify.js'), "title.trim().toLowerCase().replace(/\\s+/g, '-')");
    expect(JSON.parse(ask(request('next task?'))).task_id).toBe('T2-punctuation');
  });

  it('a resumed builder answers the task it is given, whatever came before', () => {
    const repo = demoRepo('');
    const turns = demoPlan(repo, { resume: true }).builder as (r: ModelRequest) => unknown[];
    const inOrder = demoPlan(repo).builder as unknown[][];
    expect(turns(request('TASK: {"task_id":"T2-punctuation"}'))).toEqual(inOrder[2]);
    expect(turns(request('TASK: {"task_id": "T1-trim-again"}'))).toEqual(inOrder[1]);
    expect(turns(request('TASK: {"task_id": "T1-trim"}'))).toEqual(inOrder[0]);
  });
});
