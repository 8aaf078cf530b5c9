import { readFileSync } from 'node:fs';
import { delimiter, dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { liveHostPidOf, survivorsOf } from '../support/host-pid.js';
import type { TestProject } from '../support/project.js';
import { ghCalls, happyScenario, workflowFile, workflowProject } from '../support/workflow.js';

// `ralphy start | status | abort` as a user runs them: the built CLI as a child process, agents as
// the scripted fake-claude, gh as a stand-in on PATH that records its arguments.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

function cliProject(configure?: (config: any) => void) {
  const p = workflowProject(configure);
  const gh = p.json('relais.config.json').pr.gh_command as string;
  p.commitConfig((config) => {
    config.pr.gh_command = 'gh'; // found on PATH, as a user has it
  });
  return Object.assign(p, {
    env2: { IS_SANDBOX: '1', PATH: `${dirname(gh)}${delimiter}${process.env.PATH}` },
  });
}

describe('ralphy start (CLI)', () => {
  it('--yes runs the workflow to COMPLETED with the seed §9 lines and opens the PR through gh on PATH', async () => {
    const p = cliProject();
    project = p;
    p.scenario(happyScenario());
    const run = await p.cli(['start', '--yes'], { env: p.env2 }).done;
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const out = run.stdout;
    for (const line of [
      'Phase: SPECIFICATION',
      'Agent: spec-agent started',
      'Agent: spec-agent completed',
      '=== VALIDATION REQUIRED: Approve the specification and tasks? ===',
      '  - specs/TASKS.md (2 tasks)',
      'Gate spec: approved automatically (--yes)',
      'Phase: IMPLEMENTATION',
      'Task 1 Greet by name: completed (verified: SUCCESS',
      'Phase: QA',
      'Agent: qa-agent started',
      'Agent: qa-agent completed',
      'Phase: PR',
      'Pull request: https://github.com/example/greeting/pull/7',
      'Workflow COMPLETED https://github.com/example/greeting/pull/7',
    ])
      expect(out).toContain(line);
    expect(out).toMatch(/^\[\d{2}:\d{2}:\d{2}\] Phase: SPECIFICATION$/m);
    // Seed 002 §9: every line is stamped, the lines of a multi-line event too.
    expect(out).toMatch(/^\[\d{2}:\d{2}:\d{2}\] {5}- specs\/TASKS\.md \(2 tasks\)$/m);
    for (const line of out.split('\n').filter(Boolean)) expect(line).toMatch(/^\[\d{2}:\d{2}:\d{2}\]( |$)/);

    // gh on PATH was asked for exactly this pull request, with the body built from evidence.
    const calls = ghCalls(p);
    expect(calls).toHaveLength(1);
    const args = calls[0] ?? [];
    expect(args.slice(0, 8)).toEqual([
      'pr',
      'create',
      '--base',
      'main',
      '--head',
      'ralphy/greeting-service',
      '--title',
      'Greeting service', // the PRD's title
    ]);
    expect(args[8]).toBe('--body-file');
    expect(args).toHaveLength(10);
    const body = readFileSync(args[9] as string, 'utf8');
    expect(args[9]).toMatch(/\/relais\/PR_BODY\.md$/);
    expect(body).toBe(p.read('relais/PR_BODY.md'));
    expect(body).toContain('## Summary\nGreet people by name, politely.');
    expect(body).toContain('## Tasks (2/2 verified by the runner)');
    expect(body).toMatch(/## Verification \(run by the runner, not the agent\)\nOn [0-9a-f]{12}: ok ✓/);
    expect(body).toMatch(/## Human gates\n- spec: approve \(auto, [^)]+\)\n- qa: approve \(auto, [^)]+\)\n/);

    const status = p.cliSync(['status'], p.env2);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('Workflow:  "Greeting service" COMPLETED on ralphy/greeting-service');
    expect(status.stdout).toContain('Tasks:     2/2');
    // Elapsed from WORKFLOW.json, and the spend (six agent calls at $0.01 each) against the cap.
    expect(status.stdout).toMatch(/^Elapsed: {3}(\d+s|\d+m\d{2}s)$/m);
    expect(status.stdout).toContain('Total:     $0.0600, 6 agent calls, cap $50.00');
    // The tick ledger is said to be the ticks' part of that, in words, not config keys.
    expect(status.stdout).toContain(
      'Ledger:    this milestone (ticks only, part of the workflow spend above):',
    );
    expect(status.stdout).not.toContain('estimated_cost_usd');
    expect(status.stdout).not.toContain('(completed)');
    expect(status.stdout).toContain('PR:        https://github.com/example/greeting/pull/7');
    const json = JSON.parse(p.cliSync(['status', '--json'], p.env2).stdout);
    expect(json.workflow).toMatchObject({
      state: 'COMPLETED',
      tasks: '2/2',
      breaker: 'closed (0/3)',
      cost_usd: 0.06,
    });
    const workflow = workflowFile(p);
    const took = Math.round((Date.parse(workflow.updated_at) - Date.parse(workflow.started_at)) / 1000);
    expect(json.workflow.elapsed_s).toBe(took);
  });

  it('piped to a file (not a terminal), even with CI unset, it prints plain lines with no escape codes', async () => {
    const p = cliProject();
    project = p;
    p.scenario(happyScenario());
    const run = await p.cli(['start', '--yes'], { env: { ...p.env2, CI: '', TERM: 'xterm-256color' } }).done;
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Workflow COMPLETED');
    expect(run.stdout).not.toContain('\x1b');
    expect(run.stderr).not.toContain('\x1b');
  });

  it('--json prints one engine event per line and nothing else', async () => {
    const p = cliProject();
    project = p;
    p.scenario(happyScenario());
    const run = await p.cli(['start', '--yes', '--json'], { env: p.env2 }).done;
    expect(run.code).toBe(0);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.filter((e) => e.type === 'workflow.changed').map((e) => e.state)).toEqual([
      'SPECIFICATION',
      'AWAITING_SPEC_VALIDATION',
      'IMPLEMENTATION',
      'QA',
      'AWAITING_QA_VALIDATION',
      'PR',
      'COMPLETED',
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'run.finished', state: 'COMPLETED' });
  });

  it('without --yes and without a terminal, nobody can approve: the first gate waits, exit 1, and status says how to go on', async () => {
    const p = cliProject();
    project = p;
    p.scenario(happyScenario());
    const run = await p.cli(['start'], { env: p.env2 }).done;
    expect(run.code).toBe(1);
    // Nobody decided anything: the gate waits, it was not rejected.
    expect(run.stdout).toMatch(/^\[\d{2}:\d{2}:\d{2}\] Gate spec: nobody could answer: the gate waits$/m);
    expect(run.stdout).not.toContain('reject');
    expect(run.stdout).toContain('Next: ralphy start');
    const status = p.cliSync(['status'], p.env2);
    expect(status.stdout).toContain('AWAITING_SPEC_VALIDATION (interrupted)');
    expect(status.stdout).toContain('Paused:    nobody could approve the specification');
  });

  it('without a remote and without gh the branch is left ready and the exact commands are printed', async () => {
    const p = cliProject();
    project = p;
    p.git('remote', 'remove', 'origin');
    p.scenario(happyScenario());
    const run = await p.cli(['start', '--yes'], { env: { IS_SANDBOX: '1' } }).done;
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toContain('No pull request opened: no git remote "origin"');
    expect(run.stdout).toContain('Next: git remote add origin <url>');
    expect(run.stdout).toContain('Next: git push --set-upstream origin ralphy/greeting-service');
    expect(run.stdout).toContain(
      "Next: gh pr create --base main --head ralphy/greeting-service --title 'Greeting service' --body-file relais/PR_BODY.md",
    );
    expect(workflowFile(p)).toMatchObject({ state: 'COMPLETED', pr_url: null });
  });

  it('a breaker-killed run prints the seed §9 breaker lines and the FAILED reason line, exit 1', async () => {
    const p = cliProject((config) => {
      config.circuit_breaker = { ...config.circuit_breaker, inactivity_timeout: 1, max_attempts: 1 };
    });
    project = p;
    p.scenario({ spec: [{ say: 'Thinking.', hang: true }] });
    const run = await p.cli(['start', '--yes'], { env: p.env2 }).done;
    expect(run.code, run.stdout).toBe(1);
    const stamp = '\\[\\d{2}:\\d{2}:\\d{2}\\]';
    for (const line of [
      '⚠ Circuit breaker: inactivity detected \\(\\ds without output; threshold 1s, inactivity_timeout\\)',
      '✗ Circuit breaker: OPEN - agent stopped after 1 attempts',
      'State: FAILED \\(reason: circuit_breaker_triggered\\)( .*)?',
      'Workflow FAILED \\(reason: circuit_breaker_triggered\\)',
    ])
      expect(run.stdout).toMatch(new RegExp(`^${stamp} ${line}$`, 'm'));
  });

  it('ralphy abort from a second process during implementation: the agent is gone, FAILED (aborted), exit 1', async () => {
    const p = cliProject();
    project = p;
    const scenario = happyScenario();
    scenario.builder = [
      { actions: [{ write: 'src/a.ts', content: 'half\n' }], say: 'Working on it.', hang: true },
    ];
    p.scenario(scenario);
    const running = p.cli(['start', '--yes'], { env: p.env2 });
    await running.waitFor('builder: Working on it.');
    const status = p.cliSync(['status'], p.env2);
    expect(status.stdout).toContain('IMPLEMENTATION (running)');
    expect(status.stdout).toContain('Next:      ralphy abort stops it');
    const abort = p.cliSync(['abort'], p.env2);
    expect(abort.code, abort.stderr).toBe(0);
    expect(abort.stdout).toContain('Aborted: the workflow is FAILED (reason: aborted).');
    const run = await running.done;
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('State: FAILED (reason: aborted)');
    expect(p.exists('../harness/scenario.json.builder.pid')).toBe(true);
    expect(survivorsOf(p.scenarioPath)).toEqual([]);
    expect(p.status()).toBe('');
    expect(p.exists('relais/lock.json')).toBe(false);
  });

  it('after kill -9, status says interrupted and start --yes recovers the tree and resumes', async () => {
    const p = cliProject();
    project = p;
    const scenario = happyScenario();
    scenario.spec = [
      { actions: [{ write: 'specs/SPEC.md', content: 'partial' }], say: 'Drafting.', hang: true },
      ...(scenario.spec ?? []),
    ];
    p.scenario(scenario);
    const running = p.cli(['start', '--yes'], { env: p.env2 });
    await running.waitFor('spec: Drafting.');
    // The hung spec-agent's host pid (the pid it wrote is its sandbox's: support/host-pid.ts).
    const agent = liveHostPidOf(p.scenarioPath, 'spec');
    running.signal('SIGKILL');
    await running.done;
    // The sandbox dies with its runner (bwrap --die-with-parent): nothing of the run is left.
    // (Unsandboxed, the next start ends such an orphan: recovery.test.ts.)
    expect(survivorsOf(p.scenarioPath)).not.toContain(agent);
    const status = p.cliSync(['status'], p.env2);
    expect(status.stdout).toContain('SPECIFICATION (interrupted)');
    expect(status.stdout).toContain('Next:      ralphy start resumes it');
    const resumed = await p.cli(['start', '--yes'], { env: p.env2 }).done;
    expect(resumed.code, resumed.stdout).toBe(0);
    expect(resumed.stdout).toContain('resuming at SPECIFICATION');
    expect(resumed.stdout).toMatch(
      /recovered interrupted run [\w-]+: the branch is back on the run's base [0-9a-f]{12}/,
    );
    expect(resumed.stdout).toMatch(/moved to relais\/recovered\/[\w-]+\/untracked\//);
    expect(workflowFile(p).state).toBe('COMPLETED');
    expect(p.read('specs/SPEC.md')).not.toBe('partial');
  });
});

describe('ralphy start refuses to begin, with a fix, when', () => {
  it.each([
    [
      'Claude Code is missing',
      (p: TestProject) => p.commitConfig((c) => (c.claude_code_cli.command = 'no-such-claude-binary')),
      'Install Claude Code: npm install -g @anthropic-ai/claude-code',
    ],
    [
      'the tree is dirty',
      (p: TestProject) => p.write('src/a.ts', 'uncommitted\n'),
      'Commit, stash or remove them',
    ],
    [
      'PRD.md has no objective',
      (p: TestProject) => {
        p.write('PRD.md', '# Only a title\n');
        p.git('commit', '-qam', 'prd');
      },
      'an "## Objective" section',
    ],
    [
      'relais.config.json is malformed',
      (p: TestProject) => {
        p.write('relais.config.json', '{ "workflow": { "implementation_engine": "turbo" } }');
        p.git('commit', '-qam', 'bad config');
      },
      'workflow.implementation_engine',
    ],
  ])('%s (exit 3)', async (_name, breakIt, fix) => {
    const p = cliProject();
    project = p;
    p.scenario(happyScenario());
    breakIt(p);
    const before = p.head();
    const run = await p.cli(['start', '--yes'], { env: p.env2 }).done;
    expect(run.code, run.stdout).toBe(3);
    expect(run.stdout).toContain('Cannot start:');
    expect(run.stdout).toContain(fix);
    // Nothing was changed: no branch, no commit, no agent call.
    expect(p.head()).toBe(before);
    expect(p.git('branch', '--list', 'ralphy/*').trim()).toBe('');
    expect(p.calls()).toEqual([]);
  });

  // Only meaningful as root (as the tests run here and in CI): Claude Code's refusal is root-only.
  it.skipIf(process.getuid?.() !== 0)(
    'as root without IS_SANDBOX (bypassPermissions would be refused by Claude Code)',
    async () => {
      const p = cliProject();
      project = p;
      p.scenario(happyScenario());
      const run = await p.cli(['start', '--yes'], { env: { IS_SANDBOX: '' } }).done;
      expect(run.code).toBe(3);
      expect(run.stdout).toContain('set IS_SANDBOX=1 inside a real sandbox');
    },
  );

  it('another run holds the workspace lock', async () => {
    const p = cliProject();
    project = p;
    const scenario = happyScenario();
    scenario.spec = [{ say: 'Drafting.', hang: true }];
    p.scenario(scenario);
    const running = p.cli(['start', '--yes'], { env: p.env2 });
    await running.waitFor('spec: Drafting.');
    const second = p.cliSync(['start', '--yes'], p.env2);
    expect(second.code).toBe(3);
    expect(second.stdout).toContain('another relais or ralphy run holds the workspace lock');
    expect(second.stdout).toContain('Fix: Wait for it to finish (ralphy status), or stop it (ralphy abort).');
    expect(p.cliSync(['abort'], p.env2).code).toBe(0);
    expect((await running.done).code).toBe(1);
  });
});
