import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILDER_OK, builderWrites, TestProject, task } from '../support/project.js';

// Seed 000 §5 fixtures, each through the real `relais run` on a real repository.

let project: TestProject;
afterEach(() => project?.dispose());

describe('seed 000 fixtures F001-F004', () => {
  it('F001 one_tick_limits: one orchestrator call, one builder call, no other retries', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'export const a = 2;\n' })],
    });
    const base = project.head();
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const calls = project.calls();
    expect(calls.map((c) => c.role)).toEqual(['orchestrator', 'builder']);
    const report = project.report();
    expect(report).toMatchObject({ verdict: 'success', code: 'SUCCESS', base_commit: base });
    expect(report.agents.orchestrator.calls).toBe(1);
    expect(report.agents.builder.calls).toBe(1);
    expect(project.state().budgets).toMatchObject({
      ticks: 1,
      orchestrator_calls: 1,
      builder_calls: 1,
      verify_runs: 1,
    });
    // The success is committed, so the tree is clean for the next tick.
    expect(project.status()).toBe('');
    expect(project.git('log', '-1', '--format=%s')).toContain('relais(T1): Change a');
    expect(project.read('src/a.ts')).toBe('export const a = 2;\n');
    // History snapshot (seed 000 §14): the five files of the run.
    const history = report.pointers.history_dir;
    expect(readdirSync(join(project.root, history)).sort()).toEqual([
      'diff.patch',
      'meta.json',
      'report.json',
      'report.md',
      'verify.log',
    ]);
    expect(project.read(`${history}/diff.patch`)).toContain('+export const a = 2;');
    expect(project.json(`${history}/report.json`)).toEqual(report);
    expect(project.read(`${history}/report.md`)).toBe(project.read('relais/REPORT.md'));
  });

  it('F001 one_tick_limits: an invalid first answer allows exactly one retry (2 orchestrator calls)', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result: 'Sure! Here is my plan: edit a.ts.' }, { result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'export const a = 3;\n' })],
    });
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout).toBe(0);
    const calls = project.calls();
    expect(calls.map((c) => c.role)).toEqual(['orchestrator', 'orchestrator', 'builder']);
    expect(calls[1]?.prompt).toContain('Your previous answer was rejected by the runner');
    expect(project.state().budgets).toMatchObject({ orchestrator_calls: 2, builder_calls: 1 });
  });

  it('F001 invokes Claude Code with the flags of seed 000 §8-9 as corrected in docs/ARCHITECTURE.md', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'export const a = 2;\n' })],
    });
    project.cliSync(['run']);
    const [orchestrator, builder] = project.calls();
    const flag = (argv: string[], name: string) => argv[argv.indexOf(name) + 1];
    expect(orchestrator?.argv).toContain('-p');
    expect(orchestrator?.argv).toContain('--no-session-persistence');
    // Stream lines for every call: a 429 being retried shows as api_retry lines (issue 15).
    expect(flag(orchestrator?.argv ?? [], '--output-format')).toBe('stream-json');
    expect(flag(orchestrator?.argv ?? [], '--max-turns')).toBe('1');
    expect(flag(orchestrator?.argv ?? [], '--permission-mode')).toBe('plan');
    expect(flag(orchestrator?.argv ?? [], '--tools')).toBe('');
    expect(flag(orchestrator?.argv ?? [], '--model')).toBe('opus');
    expect(flag(builder?.argv ?? [], '--output-format')).toBe('stream-json');
    expect(builder?.argv).toContain('--verbose');
    expect(flag(builder?.argv ?? [], '--permission-mode')).toBe('bypassPermissions');
    expect(flag(builder?.argv ?? [], '--tools')).toBe('Read,Edit,Glob,Grep,Bash');
    expect(flag(builder?.argv ?? [], '--max-turns')).toBe('4');
    expect(builder?.prompt).toContain('"task_id": "T1"');
  });

  it('F002 orchestrator_invalid_json_blocks: prose twice is BLOCKED, the builder never runs', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result: 'I think we should refactor.' }, { result: 'Still prose, sorry.' }],
      builder: [],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(project.report()).toMatchObject({
      verdict: 'blocked',
      code: 'BLOCKED_ORCHESTRATOR_OUTPUT_INVALID',
    });
    expect(project.calls().map((c) => c.role)).toEqual(['orchestrator', 'orchestrator']);
    const blocked = project.json('relais/BLOCKED.json');
    expect(blocked.code).toBe('BLOCKED_ORCHESTRATOR_OUTPUT_INVALID');
    expect(blocked.remediation).toMatch(/orchestrator/);
    expect(run.stdout).toContain('Fix:');
    // The calls were spent, so the run still has its history snapshot.
    const history = project.report().pointers.history_dir;
    expect(readdirSync(join(project.root, history)).sort()).toEqual([
      'meta.json',
      'report.json',
      'report.md',
      'verify.log',
    ]);
  });

  it('F002 a schema-invalid task (additional property, missing field) is refused the same way', () => {
    project = TestProject.create();
    const { builder: _omitted, ...missingBuilder } = task();
    project.scenario({
      orchestrator: [{ result_json: { ...task(), extra: 1 } }, { result_json: missingBuilder }],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    expect(project.report().code).toBe('BLOCKED_ORCHESTRATOR_OUTPUT_INVALID');
    expect(project.report().detail).toMatch(/builder/);
  });

  it('F003 question_no_side_effects: a question task that edits a file is stopped and rolled back', () => {
    project = TestProject.create();
    const base = project.head();
    project.scenario({
      orchestrator: [
        {
          result_json: task({
            task_kind: 'question',
            question: { prompt: 'Which color?', choices: ['red', 'blue'] },
          }),
        },
      ],
      builder: [builderWrites({ 'src/a.ts': 'export const a = 99;\n' })],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(1);
    expect(project.report()).toMatchObject({
      verdict: 'stop',
      code: 'STOP_QUESTION_SIDE_EFFECTS',
      rollback: { performed: true, clean: true },
    });
    expect(project.report().task.question.prompt).toBe('Which color?');
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
    expect(project.status()).toBe('');
    expect(project.head()).toBe(base);
  });

  it('F004 verify_only_no_side_effects: a verify_only task that touches a file is stopped and rolled back', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result_json: task({ task_kind: 'verify_only' }) }],
      builder: [builderWrites({ 'src/a.ts': 'export const a = 5;\n' })],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(1);
    expect(project.report()).toMatchObject({
      code: 'STOP_VERIFY_ONLY_SIDE_EFFECTS',
      rollback: { clean: true },
    });
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
    expect(project.status()).toBe('');
  });

  it('F004 a verify_only task without changes succeeds, runs its verification and commits nothing', () => {
    project = TestProject.create();
    const base = project.head();
    project.scenario({
      orchestrator: [{ result_json: task({ task_kind: 'verify_only' }) }],
      builder: [{ result_json: BUILDER_OK }],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(0);
    expect(project.report().verification.runs).toHaveLength(1);
    expect(project.report().commit).toBeNull();
    expect(project.head()).toBe(base);
  });
});
