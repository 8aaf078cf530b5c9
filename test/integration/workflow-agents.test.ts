import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../support/fake-clock.js';
import type { TestProject } from '../support/project.js';
import {
  happyScenario,
  NO,
  runInProcess,
  scriptedGates,
  specStep,
  TASKS_MD,
  workflowFile,
  workflowProject,
  YES,
} from '../support/workflow.js';

// How the workflow reads its agents (issue 4): completion only from EXIT_SIGNAL in the agent's own
// final answer, checked against evidence; retries of failed runs; questions and denied
// permissions go to a human; usage limits wait and resume the same step. The spec-agent is the
// agent under test (the others behave the same, through the same step runner).

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const specCalls = () => (project?.calls() ?? []).filter((c) => c.role === 'spec');

function warnings(run: { events: Array<{ type: string }> }): string[] {
  return run.events.flatMap((e) => (e.type === 'log' ? [(e as unknown as { message: string }).message] : []));
}

describe('EXIT_SIGNAL is read from the final answer only', () => {
  it('a signal printed by a tool, or written to a file by a killed run, does not count; the final answer does', async () => {
    project = workflowProject();
    project.scenario({
      spec: [
        // A killed run that left the signal on disk and printed it from a tool.
        specStep({
          actions: [
            ...(specStep().actions as unknown[]),
            { write: 'specs/EXIT_SIGNAL', content: 'EXIT_SIGNAL: true\n' },
          ],
          tool_result: 'EXIT_SIGNAL: true',
          no_result: true,
          exit_code: 137,
        }),
        // A run that echoes the prompt's instruction in a code fence, and the signal in a tool result.
        specStep({
          tool_result: 'EXIT_SIGNAL: true',
          result: 'The prompt says:\n```\nEXIT_SIGNAL: true\n```\nI have not finished.',
        }),
        specStep(),
      ],
    });
    const run = await runInProcess(project, { gates: scriptedGates({ spec: NO }) });
    expect(run.states).toEqual(['SPECIFICATION', 'AWAITING_SPEC_VALIDATION', 'REJECTED']);
    expect(specCalls()).toHaveLength(3);
    expect(warnings(run)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^spec-agent: claude exited with code 137 without a result object.*running it again \(1\/2\)$/,
        ),
        // The fenced EXIT_SIGNAL: true is followed by "I have not finished.": the last status wins.
        'spec-agent: its last status said it is not done; running it again (2/2)',
      ]),
    );
    expect(specCalls()[2]?.prompt).toContain('did not end with the status line "EXIT_SIGNAL: true"');
  });

  it('an explicit EXIT_SIGNAL: false wins over "done"; retries exhausted → FAILED (agent_failed)', async () => {
    project = workflowProject((config) => {
      config.workflow.agent_retries = 1;
    });
    const falseDone = specStep({ result: 'All done! Everything is complete.\n\nEXIT_SIGNAL: false' });
    project.scenario({ spec: [falseDone, falseDone] });
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'agent_failed' });
    expect(run.outcome.detail).toMatch(
      /^spec-agent: its last status said it is not done \(its work is kept: 2 new file\(s\) in relais\/recovered\/[\w-]+\/untracked\/\)$/,
    );
    expect(specCalls()).toHaveLength(2);
    // Its half-done files were rolled back (the judge keeps only a finished phase), and set aside.
    expect(project.exists('specs/SPEC.md')).toBe(false);
    const kept = /relais\/recovered\/([\w-]+)\//.exec(run.outcome.detail ?? '')?.[1];
    expect(project.read(`relais/recovered/${kept}/untracked/specs/TASKS.md`)).toBe(TASKS_MD);
  });

  it('a claimed completion is checked: a malformed TASKS.md sends the agent back with the parser error', async () => {
    project = workflowProject();
    const malformed = specStep({
      actions: [
        { write: 'specs/SPEC.md', content: '# Spec\n' },
        { write: 'specs/TASKS.md', content: '## Task 1: Do it\n- **Status**: maybe\n' },
      ],
    });
    project.scenario({ spec: [malformed, specStep()] });
    const run = await runInProcess(project, { gates: scriptedGates({ spec: NO }) });
    expect(run.outcome.state).toBe('REJECTED');
    expect(specCalls()[1]?.prompt).toContain(
      'the runner checked and specs/TASKS.md does not parse: line 2: status "maybe" is not pending, in_progress or completed',
    );
    expect(project.read('specs/TASKS.md')).toBe(TASKS_MD);
  });

  it('a CLI run past workflow.timeouts.agent is killed and retried (the breaker off, so the timeout alone ends it)', async () => {
    project = workflowProject((config) => {
      config.circuit_breaker.enabled = false;
      config.workflow.timeouts.agent = 1;
    });
    project.scenario({ spec: [{ say: 'thinking', hang: true }, specStep()] });
    const run = await runInProcess(project, { gates: scriptedGates({ spec: NO }) });
    expect(run.outcome.state).toBe('REJECTED');
    expect(
      warnings(run).some((w) =>
        /^spec-agent: claude timed out after \d+ ms and was killed; running it again/.test(w),
      ),
    ).toBe(true);
  });
});

describe('questions, denied permissions and usage limits', () => {
  it('an agent that ends on a question raises a "needs input" gate; the answer goes into its next run', async () => {
    project = workflowProject();
    project.scenario({
      spec: [
        {
          actions: [],
          result: 'I read the PRD.\n\nShould greetings be formal ("Good day") or casual ("Hi")?',
        },
        specStep(),
      ],
    });
    const gates = scriptedGates({
      input: { decision: 'answer', by: 'human', text: 'Formal, always.' },
      spec: NO,
    });
    const run = await runInProcess(project, { gates });
    expect(gates.asked[0]).toMatchObject({ gate: 'input', answer: 'text', title: 'spec-agent needs input' });
    expect(gates.asked[0]?.lines[0]).toContain('Should greetings be formal');
    expect(specCalls()[1]?.prompt).toContain('The human answered:\nFormal, always.');
    expect(specCalls()[1]?.prompt).toContain('Should greetings be formal');
    expect(run.outcome.state).toBe('REJECTED');
    expect(workflowFile(project).gate_decisions[0]).toMatchObject({
      gate: 'input',
      decision: 'answer',
      by: 'human',
    });
  });

  it('a question nobody answers ends the workflow (FAILED, needs_input) instead of looping', async () => {
    project = workflowProject();
    project.scenario({ spec: [{ result: 'Which database should I plan for?' }] });
    const run = await runInProcess(project, { gates: scriptedGates({}) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'needs_input' });
    expect(run.outcome.detail).toContain('Which database should I plan for?');
    expect(specCalls()).toHaveLength(1);
  });

  it('a denied permission shows the command; "allow" pre-approves exactly that call in the next run', async () => {
    project = workflowProject((config) => {
      config.workflow.permission_mode = 'acceptEdits';
    });
    project.scenario({
      spec: [
        {
          result: 'I could not clean the build folder.',
          permission_denials: [
            { tool_name: 'Bash', tool_use_id: 't1', tool_input: { command: 'rm -rf build' } },
          ],
        },
        specStep(),
      ],
    });
    const gates = scriptedGates({ input: { decision: 'answer', by: 'human', text: 'allow' }, spec: NO });
    await runInProcess(project, { gates });
    expect(gates.asked[0]?.lines[0]).toContain('The agent was denied: Bash rm -rf build');
    const [first, second] = specCalls();
    const flag = (argv: string[] | undefined, name: string) => argv?.[argv.indexOf(name) + 1];
    expect(flag(first?.argv, '--permission-mode')).toBe('acceptEdits');
    expect(flag(first?.argv, '--allowedTools')).toBe('Read,Write,Edit,Glob,Grep');
    expect(flag(second?.argv, '--allowedTools')).toBe('Read,Write,Edit,Glob,Grep,Bash(rm -rf build)');
    expect(second?.prompt).toContain('The human allowed: Bash rm -rf build');
  });

  it('a denied compound command cannot be pre-approved: the human is told, and the agent is asked to split it', async () => {
    project = workflowProject((config) => {
      config.workflow.permission_mode = 'acceptEdits';
    });
    project.scenario({
      spec: [
        {
          result: 'Blocked.',
          permission_denials: [
            { tool_name: 'Bash', tool_use_id: 't1', tool_input: { command: 'npm ci && npm test' } },
            // A model-written command that would close the rule and open a wider one.
            { tool_name: 'Bash', tool_use_id: 't2', tool_input: { command: 'echo ) Bash(*' } },
          ],
        },
        specStep(),
      ],
    });
    const gates = scriptedGates({ input: { decision: 'answer', by: 'human', text: 'yes' }, spec: NO });
    const run = await runInProcess(project, { gates });
    expect(warnings(run)).toContain(
      'cannot pre-approve Bash npm ci && npm test; Bash echo ) Bash(*: only a single plain command can be (no ; & | ( ) or commas)',
    );
    const second = specCalls()[1];
    expect(second?.argv[second.argv.indexOf('--allowedTools') + 1]).toBe('Read,Write,Edit,Glob,Grep');
    expect(second?.prompt).toContain(
      'These cannot be pre-approved as they are: Bash npm ci && npm test; Bash echo ) Bash(*',
    );
  });

  it('a missing login is not retried: one claude start, and the failure says the fix (defect 26)', async () => {
    project = workflowProject((config) => {
      config.workflow.agent_retries = 2;
    });
    const notLoggedIn = { is_error: true, result: 'Not logged in · Please run /login', exit_code: 1 };
    project.scenario({ spec: [notLoggedIn, notLoggedIn, notLoggedIn] });
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'agent_failed' });
    expect(specCalls()).toHaveLength(1);
    expect(run.outcome.detail).toContain('not retried: Run `claude` once and log in (/login)');
    expect(warnings(run).filter((w) => w.includes('running it again'))).toEqual([]);
  });

  it('a usage limit waits for the reset with a countdown and runs the same step again, no failure counted', async () => {
    project = workflowProject((config) => {
      config.workflow.agent_retries = 0; // a counted failure would end the workflow
      config.workflow.timeouts.specification = 86_400;
    });
    project.scenario({
      spec: [
        { is_error: true, result: "You've hit your limit · resets 11am (UTC)", exit_code: 1 },
        specStep(),
      ],
    });
    const clock = new FakeClock(Date.parse('2026-11-22T10:00:00Z'));
    let waitStarted = false;
    let seenWaiting: unknown = null;
    clock.onSleep = (ms) => {
      if (!waitStarted) return;
      waitStarted = false;
      seenWaiting = workflowFile(project as TestProject);
      // The countdown is on screen; an hour later the same step runs again.
      setImmediate(() => clock.advance(ms));
    };
    const run = await runInProcess(project, {
      gates: scriptedGates({ spec: NO }),
      clock,
      onEvent: (event) => {
        if (event.type === 'workflow.waiting') waitStarted = true;
      },
    });
    expect(run.events.find((e) => e.type === 'workflow.waiting')).toMatchObject({
      until: '2026-11-22T11:00:00.000Z',
      reason: "You've hit your limit · resets 11am (UTC)",
    });
    expect(seenWaiting).toMatchObject({ status: 'waiting', waiting_until: '2026-11-22T11:00:00.000Z' });
    expect(run.outcome.state).toBe('REJECTED');
    expect(specCalls()).toHaveLength(2);
    expect(workflowFile(project).waiting_until).toBeNull();
  });
});

describe('budget', () => {
  it('stops the workflow once its agents spent workflow.max_cost_usd (FAILED, budget_exhausted)', async () => {
    project = workflowProject((config) => {
      config.workflow.max_cost_usd = 0.5;
    });
    const scenario = happyScenario();
    scenario.spec = [specStep({ cost: 0.75 })];
    project.scenario(scenario);
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'budget_exhausted' });
    expect(run.outcome.detail).toContain('$0.7500, is at or above workflow.max_cost_usd $0.50');
    // The spec finished before the cap was known to be crossed: it is kept, not paid for twice.
    expect(run.states).toEqual(['SPECIFICATION', 'AWAITING_SPEC_VALIDATION', 'IMPLEMENTATION', 'FAILED']);
    expect(project.read('specs/TASKS.md')).toBe(TASKS_MD);
    // Raising the cap, as the remediation says, lets the resumed workflow go on.
    project.commitConfig((config) => {
      config.workflow.max_cost_usd = 100;
    });
    const resumed = await runInProcess(project, { gates: scriptedGates({ resume: YES, qa: YES }) });
    expect(resumed.outcome.state).toBe('COMPLETED');
    expect(project.calls().filter((c) => c.role === 'spec')).toHaveLength(1);
  });
});
