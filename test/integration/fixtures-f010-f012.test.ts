import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builderWrites, TestProject, task } from '../support/project.js';

let project: TestProject;
afterEach(() => project?.dispose());

const edit = builderWrites({ 'src/a.ts': 'export const a = 2;\n' });

describe('seed 000 fixtures F010-F012', () => {
  it('F010 verify_taint_rejected: a parameter with a metacharacter stops before anything runs', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [
        {
          result_json: task({
            verification: { fast: ['ok', 'echo'], slow: [], params: { echo: { word: 'a;rm -rf' } } },
          }),
        },
      ],
      builder: [edit],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(1);
    const report = project.report();
    expect(report.code).toBe('STOP_VERIFY_TAINTED');
    expect(report.detail).toContain('parameter "word" rejected');
    // Nothing executed, not even the untainted template listed first.
    expect(report.verification.runs).toEqual([]);
    expect(project.state().budgets.verify_runs).toBe(0);
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
  });

  it.each([
    ['an unknown template', { fast: ['nope'], slow: [] }, 'unknown verification template "nope"'],
    [
      'a leading dash (option injection)',
      { fast: ['echo'], slow: [], params: { echo: { word: '--inspect' } } },
      'starts with "-"',
    ],
    ['".."', { fast: ['echo'], slow: [], params: { echo: { word: 'a..b' } } }, 'contains ".."'],
    ['a missing parameter', { fast: ['echo'], slow: [] }, 'no value given'],
    [
      'a path escaping the repository',
      { fast: ['cat'], slow: [], params: { cat: { file: '/etc/passwd' } } },
      'path resolves outside the repository',
    ],
  ])('F010 refuses %s', (_name, verification, reason) => {
    project = TestProject.create();
    project.scenario({ orchestrator: [{ result_json: task({ verification }) }], builder: [edit] });
    project.cliSync(['run']);
    expect(project.report().code).toBe('STOP_VERIFY_TAINTED');
    expect(project.report().detail).toContain(reason);
  });

  it('F010 a path parameter through a symlink that leaves the repository is refused', () => {
    project = TestProject.create();
    project.write('docs/readme.txt', 'hello\n');
    project.git('add', '-A');
    project.git('commit', '-qm', 'docs');
    symlinkSync('/etc', join(project.root, 'docs/outside'));
    project.git('add', '-A');
    project.git('commit', '-qm', 'link');
    project.scenario({
      orchestrator: [
        {
          result_json: task({
            verification: { fast: ['cat'], slow: [], params: { cat: { file: 'docs/outside/hostname' } } },
          }),
        },
      ],
      builder: [edit],
    });
    project.cliSync(['run']);
    expect(project.report().code).toBe('STOP_VERIFY_TAINTED');
  });

  it('F010 a clean parameter reaches the command as one argv word', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [
        {
          result_json: task({
            verification: { fast: ['echo'], slow: [], params: { echo: { word: 'hello-world' } } },
          }),
        },
      ],
      builder: [edit],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(0);
    const report = project.report();
    expect(report.verification.runs[0]).toMatchObject({
      template_id: 'echo',
      exit_code: 0,
      args: ['-e', 'console.log(process.argv[1])', 'hello-world'],
    });
    expect(project.read(report.verification.verify_log_path)).toContain('hello-world');
  });

  it('F011 verify_fast_fail_stops: a failing fast verification stops and slow never runs', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result_json: task({ verification: { fast: ['ok', 'fail'], slow: ['ok'] } }) }],
      builder: [edit],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(1);
    const report = project.report();
    expect(report.code).toBe('STOP_VERIFY_FAILED_FAST');
    expect(report.verification.runs.map((r: any) => `${r.phase}:${r.template_id}:${r.exit_code}`)).toEqual([
      'fast:ok:0',
      'fast:fail:3',
    ]);
    expect(project.state().budgets.verify_runs).toBe(2);
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
  });

  it('F011 a failing slow verification is STOP_VERIFY_FAILED_SLOW', () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result_json: task({ verification: { fast: ['ok'], slow: ['fail'] } }) }],
      builder: [edit],
    });
    project.cliSync(['run']);
    expect(project.report().code).toBe('STOP_VERIFY_FAILED_SLOW');
  });

  it('F011 a verification past its timeout is killed and fails', () => {
    project = TestProject.create();
    project.commitConfig((config) => {
      config.verification.templates.push({
        id: 'slowpoke',
        cmd: 'node',
        args: ['-e', 'setTimeout(() => {}, 60000)'],
        timeout_seconds: 1,
      });
    });
    project.scenario({
      orchestrator: [{ result_json: task({ verification: { fast: ['slowpoke'], slow: [] } }) }],
      builder: [edit],
    });
    project.cliSync(['run']);
    const report = project.report();
    expect(report.code).toBe('STOP_VERIFY_FAILED_FAST');
    expect(report.verification.runs[0]).toMatchObject({ timed_out: true, exit_code: -1 });
  });

  it('F012 crash_tmp_cleanup_blocks_if_invalid: a stale .tmp and a corrupt STATE.json block without resetting', () => {
    project = TestProject.create();
    project.scenario({ orchestrator: [{ result_json: task() }], builder: [edit] });
    const statePath = join(project.root, 'relais/STATE.json');
    writeFileSync(`${statePath}.tmp`, '{"half": ');
    writeFileSync(statePath, '{"schema_version": 1, "budgets": ');
    const run = project.cliSync(['run']);
    expect(run.code).toBe(3);
    const report = project.report();
    expect(report.code).toBe('BLOCKED_CRASH_RECOVERY_REQUIRED');
    expect(report.detail).toContain('relais/STATE.json');
    expect(project.exists('relais/STATE.json.tmp')).toBe(false);
    // The corrupt file is left for the human: never silently reset.
    expect(project.read('relais/STATE.json')).toBe('{"schema_version": 1, "budgets": ');
    expect(project.calls()).toEqual([]);
    expect(project.json('relais/BLOCKED.json').code).toBe('BLOCKED_CRASH_RECOVERY_REQUIRED');
  });
});
