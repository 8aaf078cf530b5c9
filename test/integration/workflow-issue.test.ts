import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ghStandIn } from '../support/gh-issue.js';
import { answer, ask, close, plannerProject, proceedGate, ready } from '../support/planner.js';
import type { TestProject } from '../support/project.js';
import { ghCalls, happyScenario, workflowFile } from '../support/workflow.js';

// `ralphy start --issue <n>` as a user runs it (the built CLI, agents as the scripted fake-claude):
// the issue is planned with `relais plan --issue` until it is ready for the spec (seed 004's
// handoff), then the workflow runs from it and reports back on the issue through gh.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const ISSUE = {
  title: 'Greeting service',
  body: 'We need greet(name) and bye(name) for the front desk.',
  author: { login: 'pm' },
  assignees: [{ login: 'dev' }],
};
const Q = 'Should greet() use the full name or only the first name?';
const ANSWER = '1: the full name, always.';

/**
 * One `gh` for everything: issue commands go to the thread stand-in (which records what is
 * posted), the rest (push, pull request) to the workflow project's recording gh.
 */
function setup() {
  const p = plannerProject();
  project = p;
  const gh = ghStandIn(p.base, ISSUE);
  const both = join(p.base, 'gh-both');
  writeFileSync(
    both,
    [
      '#!/usr/bin/env node',
      "const { spawnSync } = require('node:child_process');",
      'const args = process.argv.slice(2);',
      `const target = ['issue', 'api'].includes(args[0]) ? ${JSON.stringify(join(gh.bin, 'gh'))} : ${JSON.stringify(join(p.base, 'bin', 'gh'))};`,
      "const r = spawnSync(target, args, { stdio: 'inherit' });",
      'process.exit(r.status ?? 1);',
      '',
    ].join('\n'),
  );
  chmodSync(both, 0o755);
  p.commitConfig((config) => {
    config.pr.gh_command = both;
  });
  const env = { IS_SANDBOX: '1' };
  const plan = () => p.cliSync(['plan', '--issue', '12'], env);
  const start = (...extra: string[]) => p.cliSync(['start', '--issue', '12', ...extra], env);
  return { p, gh, plan, start };
}

describe('ralphy start --issue <n>', () => {
  it('refuses until planning is ready for the spec, then runs from the thread and reports the verdicts on the issue', () => {
    const { p, gh, plan, start } = setup();
    p.scenario({
      planner: [
        answer(ask('reporter', [{ q: Q }])),
        answer(close(1, 'answered', 'the full name, always.'), proceedGate()),
        answer(ready('greet(name) and bye(name), with the full name.', [1])),
      ],
      ...happyScenario(),
    });

    // Not planned at all: nothing starts, and the fix names the command that plans it.
    const early = start('--yes');
    expect(early.code, early.stdout + early.stderr).toBe(3);
    expect(early.stdout).toContain('issue #12 has not been planned in this project');
    expect(early.stdout).toContain('Run relais plan --issue 12');
    expect(p.exists('relais/WORKFLOW.json')).toBe(false);

    expect(plan().code).toBe(0);
    gh.comment('pm', ANSWER);
    expect(plan().code).toBe(0);
    // The planner asked to proceed; nobody said so yet.
    const waiting = start('--yes');
    expect(waiting.code).toBe(3);
    expect(waiting.stdout).toContain(
      "issue #12's planning is not ready for the spec yet: the planner asked to proceed and waits for a reporter or assignee to say so",
    );
    expect(p.calls().filter((c) => c.role === 'spec')).toHaveLength(0);

    gh.comment('pm', 'Ship it.');
    expect(plan().stdout).toContain('Issue #12: ready for the spec.');
    const postedBefore = gh.posted().length;

    const run = start('--yes');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('Planning was done on issue #12');
    // No planning in the workflow itself: the three planner calls are the plan passes'.
    expect(p.calls().filter((c) => c.role === 'planner')).toHaveLength(3);
    const spec = p.calls().find((c) => c.role === 'spec')?.prompt ?? '';
    expect(spec).toContain('=== PRD (GitHub issue #12, as planned) ===');
    expect(spec).toContain('# Greeting service');
    expect(spec).toContain('greet(name) and bye(name), with the full name.');
    expect(spec).toContain(ISSUE.body);
    expect(spec).toContain(`- @pm (reporter): ${ANSWER}`);
    expect(spec).toContain(`- [gap 1] ${Q}\n  answered: "the full name, always."`);

    const w = workflowFile(p);
    expect(w).toMatchObject({ state: 'COMPLETED', issue: 12, tasks_completed: 2 });
    expect(w.completed_phases).toContain('PLANNING');
    expect(ghCalls(p).some((c) => c[0] === 'pr' && c[1] === 'create')).toBe(true);

    // Reported back once, from the runner's verdicts, marked as the runner's.
    const posted = gh.posted().slice(postedBefore);
    expect(posted).toHaveLength(1);
    const report = posted[0] ?? '';
    expect(report).toContain('Ralphy finished the workflow for this issue.');
    expect(report).toContain('Pull request: https://github.com/example/greeting/pull/7');
    expect(report).toContain(
      "QA summary (the runner's verdicts, not the agents' claims): 2/2 task(s) verified by the runner.",
    );
    expect(report).toContain('- [x] 1. Greet by name: verified');
    expect(report).toContain('<!-- relais-planner -->');
    expect(report).toBe(p.read('relais/issues/issue-12-report.md'));
    expect(gh.calls().at(-1)?.args.slice(0, 4)).toEqual(['issue', 'comment', '12', '--body-file']);
    expect(run.stdout).toContain(
      'Reported on issue #12: https://github.com/acme/reports/issues/12#issuecomment-',
    );

    // A later planner pass reads the report as the runner's own, not as a human's news.
    expect(plan().stdout).toContain('Issue #12: planning is done');
    expect(p.calls().filter((c) => c.role === 'planner')).toHaveLength(3);
  }, 180_000); // whole workflows through the CLI: slow on a loaded machine, not a wait
});
