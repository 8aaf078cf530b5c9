import { afterEach, describe, expect, it } from 'vitest';
import { relaisScript, roleOf } from '../../source/demo/relais-script.js';
import { type ScriptedModel, startScriptedModel } from '../../source/demo/scripted-model-server.js';
import { ghStandIn } from '../support/gh-issue.js';
import { CLAUDE, claudeEnv, plannerModelPlan, Q1, Q3 } from '../support/planner-model.js';
import { TestProject } from '../support/project.js';

// `relais plan --issue` with the REAL claude binary as the planner (scripted Messages API on
// 127.0.0.1) and the gh stand-in serving the thread: a bot's whole conversation, pass by pass.

let project: TestProject | null = null;
let model: ScriptedModel | null = null;
afterEach(async () => {
  await model?.close();
  model = null;
  project?.dispose();
  project = null;
});

describe('e2e: relais plan --issue with the real claude binary', () => {
  it('two rounds on the thread, then a proceed comment: ready, with every comment posted once', async () => {
    const p = TestProject.create({ 'src/a.ts': 'export const a = 1;\n' }, (config) => {
      config.claude_code_cli.command = CLAUDE;
    });
    project = p;
    model = await startScriptedModel(relaisScript(plannerModelPlan(p.root)));
    const gh = ghStandIn(p.base, {
      title: 'Greeting service',
      body: 'Greet people by name, politely.',
      author: { login: 'pm' },
      assignees: [{ login: 'dev' }],
    });
    // Asynchronous on purpose: the scripted model answers from this process.
    const pass = async () => {
      const run = await p.cli(['plan', '--issue', '12'], {
        env: { ...gh.env, ...claudeEnv(model?.url ?? '') },
      }).done;
      expect(run.code, run.stdout + run.stderr).toBe(0);
      return run.stdout;
    };

    expect(await pass()).toContain('Issue #12: 2 open question(s). Posted 1 comment(s).');
    expect(gh.posted()[0]).toContain(Q1);
    gh.comment('pm', '1: only the first name\n2: English only');
    expect(await pass()).toContain('Issue #12: 1 open question(s). Posted 1 comment(s).');
    expect(gh.posted()[1]).toContain(Q3);
    gh.comment('dev', 'its own module, src/b.ts');
    await pass();
    expect(gh.posted()[2]).toContain('Shall I proceed?');
    expect(await pass()).toContain('nothing to do (silence does nothing)');
    gh.comment('pm', 'proceed');
    expect(await pass()).toContain('Issue #12: ready for the spec.');

    expect(gh.thread().comments.map((c) => c.author.login)).toEqual([
      'dev',
      'pm',
      'dev',
      'dev',
      'dev',
      'pm',
      'dev',
    ]);
    expect(p.json('relais/planner/sessions/issue-12.json').gaps.map((g: any) => g.closed_note)).toEqual([
      'only the first name',
      'English only',
      'its own module, src/b.ts',
    ]);
    // Four planner runs (the silent pass made none), each a fresh Claude Code process.
    const firstTurns = model.requests.filter(
      (r) => roleOf(r) === 'planner' && !r.messages.some((m) => m.role === 'assistant'),
    );
    expect(firstTurns).toHaveLength(4);
  }, 120_000);
});
