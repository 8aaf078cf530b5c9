import { afterEach, describe, expect, it } from 'vitest';
import { answer, ask, close, comment, plannerProject, ready } from '../support/planner.js';
import type { TestProject } from '../support/project.js';
import { specStep } from '../support/workflow.js';

// `relais plan` on PRD.md as a user runs it (the built CLI, the planner as the scripted fake
// agent), and how `ralphy start` picks up a planning done beforehand.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const Q = 'Should the greeting use the full name or only the first name?';
const ASSUMED = 'Assumption: the first name.\nRationale: "by name, politely" reads as a first name.';

describe('relais plan (PRD.md)', () => {
  it('--yes plans under stated assumptions; ralphy start then hands the same planning to the spec-agent (in the sandbox)', () => {
    // The product's default: the planner's and the spec-agent's processes run in bubblewrap.
    const p = plannerProject();
    project = p;
    p.scenario({
      planner: [
        answer(ask('reporter', [{ q: Q, why: 'It decides what greet() takes.' }])),
        answer(
          close(1, 'inferred', ASSUMED),
          comment('Going ahead, assuming first names.', 'assumptions'),
          ready('Greet by first name.', [1]),
        ),
      ],
      spec: [specStep()],
    });
    const plan = p.cliSync(['plan', '--yes']);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.stdout).toContain('=== Planner, round 1: 1 open question ===');
    expect(plan.stdout).toContain(`    1. ${Q}`);
    expect(plan.stdout).toContain('Gate plan: approved automatically (--yes)');
    expect(plan.stdout).toContain('Proceeding under these assumptions:');
    expect(plan.stdout).toContain('Summary: Greet by first name.');
    expect(plan.stdout).toContain('Planning is done: ralphy start gives this handoff to the spec-agent.');
    expect(plan.stdout).not.toContain('sandbox is "off"');
    // Each planner call ran in the sandbox: its HOME was the sandbox's private scratch one.
    const planners = p.calls().filter((c) => c.role === 'planner');
    expect(planners.length).toBeGreaterThan(0);
    for (const call of planners) expect(call.home).toMatch(/relais-sandbox-[\w.-]+\/home$/);
    expect(p.status()).toBe('');

    const start = p.cliSync(['start', '--yes'], { IS_SANDBOX: '1' });
    expect(start.stdout).toContain('This PRD was planned already');
    expect(p.calls().filter((c) => c.role === 'planner')).toHaveLength(2);
    expect(p.calls().find((c) => c.role === 'spec')?.prompt).toContain(
      `- [gap 1] ${Q}\n  assumed (not answered): ${ASSUMED.replace('\n', ' ')}`,
    );
  });

  it('without a terminal and without --yes nobody can answer: exit 1, saying how to go on', () => {
    const p = plannerProject();
    project = p;
    p.scenario({ planner: [answer(ask('reporter', [{ q: Q }]))] });
    const plan = p.cliSync(['plan']);
    expect(plan.code).toBe(1);
    expect(plan.stdout).toContain(
      "Gate plan: the planner's questions are not answered (nobody at a terminal",
    );
    expect(plan.stdout).toContain(
      'nobody can answer them here. Run relais plan in a terminal, or with --yes',
    );
  });

  it('no PRD.md, or no relais init: exit 3 with the problem', () => {
    const p = plannerProject();
    project = p;
    p.git('rm', '-q', 'PRD.md');
    p.git('commit', '-q', '-m', 'no prd');
    const noPrd = p.cliSync(['plan']);
    expect(noPrd.code).toBe(3);
    expect(noPrd.stdout).toContain('Cannot plan: PRD.md is missing');
    p.git('rm', '-q', 'relais.config.json');
    p.git('commit', '-q', '-m', 'no config');
    const noConfig = p.cliSync(['plan', '--issue', '4']);
    expect(noConfig.code).toBe(3);
    expect(noConfig.stdout).toContain('relais.config.json');
  });
});
