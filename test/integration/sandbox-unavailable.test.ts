import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pathWithBrokenBwrap, pathWithoutBwrap } from '../support/no-sandbox.js';
import { answer, close, plannerProject, ready } from '../support/planner.js';
import { TestProject, task } from '../support/project.js';
import { specStep, workflowProject } from '../support/workflow.js';

// Issue 14, where no sandbox can be had: every engine refuses to start (BLOCKED, with the fix)
// unless the config opts out with "sandbox": "off", and then every engine says so. Through the
// built CLI, with bwrap taken off PATH (or a bwrap that cannot create a sandbox here).

let project: TestProject | undefined;
afterEach(() => {
  project?.dispose();
  project = undefined;
});

/** `relais cycle init --answers`: the brainstorm's answers, as a file. */
function answersFile(p: TestProject): string {
  const path = join(p.base, 'answers.json');
  writeFileSync(
    path,
    JSON.stringify({
      vision: 'A tiny greeting library.',
      users: 'Developers.',
      success: ['greet works'],
      non_goals: [],
      stack: 'Node 20.',
      constraints: [],
      requirements: [{ id: 'R1', text: 'greet(name) says hello' }],
      phases: [{ id: 'P1', name: 'basics', goal: 'Greet', requirements: ['R1'], success: ['greet works'] }],
    }),
  );
  return path;
}

const NOT_FOUND = 'bwrap (bubblewrap) is not installed or not on PATH';
const INSTALL = 'apt-get install bubblewrap';
const OFF_WARNING = 'sandbox is "off" in relais.config.json: agents and verifications run unprotected';

describe('no bwrap: every engine refuses to start', () => {
  it('relais run and relais loop: BLOCKED_SANDBOX_UNAVAILABLE with the fix, no agent started', () => {
    project = TestProject.create(undefined);
    project.scenario({ orchestrator: [{ result_json: task() }] });
    const env = { PATH: pathWithoutBwrap(project.base) };
    for (const command of ['run', 'loop']) {
      const run = project.cliSync([command], env);
      expect(run.code, `${command}: ${run.stdout}${run.stderr}`).toBe(3);
      expect(project.report()).toMatchObject({
        verdict: 'blocked',
        code: 'BLOCKED_SANDBOX_UNAVAILABLE',
        detail: expect.stringContaining(NOT_FOUND),
      });
      expect(project.report().detail).toContain(INSTALL);
      expect(run.stdout).toContain('BLOCKED_SANDBOX_UNAVAILABLE');
      expect(project.read('relais/REPORT.md')).toContain('Install bubblewrap and allow user namespaces');
    }
    expect(project.calls()).toEqual([]);
    expect(project.status()).toBe('');
  });

  it('ralphy start: refused with the fix, no workflow begun, no agent started', () => {
    const p = workflowProject();
    project = p;
    p.scenario({ spec: [specStep()] });
    const start = p.cliSync(['start', '--yes'], { PATH: pathWithoutBwrap(p.base), IS_SANDBOX: '1' });
    expect(start.code, start.stdout + start.stderr).toBe(3);
    expect(start.stdout).toContain(`BLOCKED_SANDBOX_UNAVAILABLE: ${NOT_FOUND}`);
    expect(start.stdout).toContain(INSTALL);
    expect(p.exists('relais/WORKFLOW.json')).toBe(false);
    expect(p.calls()).toEqual([]);
  });

  it('relais plan: refused with the fix, the planner never called', () => {
    const p = plannerProject();
    project = p;
    p.scenario({ planner: [answer(ready('x', []))] });
    const plan = p.cliSync(['plan', '--yes'], { PATH: pathWithoutBwrap(p.base) });
    expect(plan.code, plan.stdout + plan.stderr).toBe(3);
    expect(plan.stdout).toContain(`Cannot plan: BLOCKED_SANDBOX_UNAVAILABLE: ${NOT_FOUND}`);
    expect(plan.stdout).toContain('Fix: No OS sandbox can be started here');
    expect(p.calls()).toEqual([]);
  });

  it('relais cycle and relais cycle init: a BLOCKED code with the fix (not CYCLE_INTERNAL), nothing run', () => {
    project = TestProject.create(undefined);
    const env = { PATH: pathWithoutBwrap(project.base) };
    const cycle = project.cliSync(['cycle'], env);
    expect(cycle.code, cycle.stdout + cycle.stderr).toBe(3);
    expect(cycle.stderr).toContain(`relais cycle: BLOCKED_SANDBOX_UNAVAILABLE: ${NOT_FOUND}`);
    expect(cycle.stderr).toContain(`Fix: Install bubblewrap (Debian/Ubuntu: ${INSTALL}`);
    expect(cycle.stderr).not.toContain('CYCLE_INTERNAL');
    const init = project.cliSync(['cycle', 'init', '--answers', answersFile(project), '--confirm'], env);
    expect(init.code, init.stdout + init.stderr).toBe(3);
    expect(init.stderr).toContain(`relais cycle init: BLOCKED_SANDBOX_UNAVAILABLE: ${NOT_FOUND}`);
    expect(init.stderr).toContain(`Fix: Install bubblewrap (Debian/Ubuntu: ${INSTALL}`);
    expect(project.exists('specs/VISION.md')).toBe(false);
    expect(project.exists('relais/cycle/STATE.json')).toBe(false);
    expect(project.calls()).toEqual([]);
    expect(project.status()).toBe('');
  });

  it('relais doctor fails its sandbox check with the fix: bwrap missing, or present but unable to sandbox', () => {
    project = TestProject.create(undefined);
    const missing = project.cliSync(['doctor'], { PATH: pathWithoutBwrap(project.base) });
    expect(missing.code).not.toBe(0);
    expect(missing.stdout).toMatch(
      /sandbox.*no sandbox: bwrap \(bubblewrap\) is not installed or not on PATH/,
    );
    expect(missing.stdout).toContain(INSTALL);
    const broken = project.cliSync(['doctor'], { PATH: pathWithBrokenBwrap(project.base) });
    expect(broken.code).not.toBe(0);
    expect(broken.stdout).toContain(
      'no sandbox: bwrap cannot create a sandbox here (bwrap: setting up uid map: Permission denied)',
    );
    const run = project.cliSync(['run'], { PATH: pathWithBrokenBwrap(project.base) });
    expect(run.code).toBe(3);
    expect(project.report().code).toBe('BLOCKED_SANDBOX_UNAVAILABLE');
  });
});

describe('"sandbox": "off" is never silent', () => {
  const off = (c: any) => {
    c.sandbox.mode = 'off';
  };

  it('relais run and relais loop warn, REPORT.md says OFF, doctor warns; without bwrap on PATH they still run', () => {
    project = TestProject.create(undefined, off);
    project.scenario({
      orchestrator: [
        { result_json: task() },
        { result_json: task({ task_id: 'T2' }) },
        { result_json: { ...task({ task_id: 'DONE' }), control: { action: 'stop', reason: 'done' } } },
      ],
      builder: [
        {
          actions: [{ write: 'src/a.ts', content: 'b\n' }],
          result_json: { summary: 'ok', files_intended: [], commands_ran: [], notes: [] },
        },
        {
          actions: [{ write: 'src/a.ts', content: 'c\n' }],
          result_json: { summary: 'ok', files_intended: [], commands_ran: [], notes: [] },
        },
      ],
    });
    const env = { PATH: pathWithoutBwrap(project.base) };
    const run = project.cliSync(['run'], env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(OFF_WARNING);
    expect(project.report()).toMatchObject({ code: 'SUCCESS', sandbox: 'off' });
    expect(project.read('relais/REPORT.md')).toContain(
      '- Sandbox: **OFF** (relais.config.json "sandbox": "off"): agents and verifications ran unprotected',
    );
    const loop = project.cliSync(['loop'], env);
    expect(loop.stdout).toContain(OFF_WARNING);
    expect(project.read('src/a.ts')).toBe('c\n');
    const doctor = project.cliSync(['doctor'], env);
    expect(doctor.stdout).toMatch(/sandbox.*sandbox is "off" in relais.config.json/);
  });

  it('ralphy start warns, with the single and the cycle engine alike', () => {
    const p = workflowProject(off);
    project = p;
    p.scenario({ spec: [specStep(), specStep()] });
    for (const engine of ['single', 'cycle']) {
      // No --yes and no terminal: the run stops at the spec gate, after its agent ran.
      const start = p.cliSync(['start', '--engine', engine], { IS_SANDBOX: '1' });
      expect(start.stdout, engine).toContain(OFF_WARNING);
      expect(p.calls().map((c) => c.role)).toContain('spec');
      p.cliSync(['abort'], { IS_SANDBOX: '1' });
    }
  });

  it('relais plan, relais cycle and relais cycle init warn', () => {
    const p = plannerProject(off);
    project = p;
    p.scenario({ planner: [answer(close(1, 'inferred'), ready('Greet.', []))] });
    const plan = p.cliSync(['plan', '--yes']);
    expect(plan.stdout).toContain(OFF_WARNING);
    const cycle = p.cliSync(['cycle']);
    expect(cycle.stdout).toContain(OFF_WARNING);
    const init = p.cliSync(['cycle', 'init', '--answers', answersFile(p), '--confirm']);
    expect(init.stdout + init.stderr).toContain(OFF_WARNING);
  });
});
