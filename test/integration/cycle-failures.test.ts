import { afterEach, describe, expect, it } from 'vitest';
import type { CycleState } from '../../source/engine/cycle/state.js';
import { EngineBus } from '../../source/engine/events.js';
import { approveAll, denyAll } from '../../source/engine/gates.js';
import {
  type Answer,
  BASE_FILES,
  CycleRepo,
  type Handler,
  nonceOf,
  nothing,
  phaseComplete,
  plan,
  type Script,
  scripted,
  spec,
  type TaskSpec,
  taskFields,
  track,
  verdict,
  writes,
} from '../support/cycle-project.js';

// Seed 003's failure paths on real git repositories, with scripted in-process agents.

let repo: CycleRepo;
afterEach(() => repo?.dispose());

const GOOD = "module.exports = (name) => 'Hello, ' + name;\n// greeted\n";

/** A repo whose cycle has just written TASK_001 (next action: implement_task). */
async function atImplement(tasks: TaskSpec[], more: Script, plannerAfter: Handler[] = []) {
  repo = await CycleRepo.create();
  const agents = scripted({ ...more, planner: [track(), spec(), plan(tasks), ...plannerAfter] });
  const first = await repo.cycles(agents.runners, (o) => o.action === 'generate_task', 6);
  expect(first.at(-1)).toMatchObject({ reply: 'CYCLE_OK' });
  return agents;
}

function verdicts() {
  return repo.events.filter((e) => e.type === 'cycle.verdict') as Array<
    Extract<(typeof repo.events)[number], { type: 'cycle.verdict' }>
  >;
}

describe('verify_task stage 1: each of the six checks failing alone', () => {
  it.each([
    ['tests', { 'src/greet.js': "module.exports = (name) => 'Bye, ' + name;\n" }, 20],
    ['lint', { 'src/greet.js': "module.exports = (name) => 'Hello, ' + name; // TODO\n" }, 20],
    ['diff', { 'src/greet.js': `${GOOD}//\n//\n//\n//\n` }, 1],
    ['paths', { '.env.local': 'DEBUG=1\n' }, 20],
    ['secrets', { 'src/config.js': "module.exports = { id: 'AKIAABCDEFGHIJKLMNOP' };\n" }, 20],
    ['git_clean', { MAKE_TEST_LITTER: 'yes\n' }, 20],
  ] as const)('%s', async (check, files, diff) => {
    const { calls } = await atImplement([{ id: 'T1', diff }], { implementer: [writes(files)] });
    const impl = await repo.cycle(scripted({ implementer: [writes(files)] }).runners);
    expect(impl).toMatchObject({ action: 'implement_task', reply: 'CYCLE_OK' });
    const verify = await repo.cycle(scripted({}).runners);
    expect(verify).toMatchObject({ action: 'verify_task', reply: 'CYCLE_FAIL', code: 'CYCLE_VERIFY_FAILED' });
    const v = verdicts().at(-1);
    expect(v?.result).toBe('FAIL');
    expect(Object.entries(v?.checks ?? {}).filter(([, ok]) => !ok)).toEqual([[check, false]]);
    expect(v?.failures.every((f) => f.startsWith(`${check}:`))).toBe(true);
    // Stage 1 failed: no LLM verifier ran; the report is kept as JSON.
    expect(calls.filter((c) => c.role === 'verifier')).toEqual([]);
    const s = repo.state();
    expect(s.task).toMatchObject({ sub_step: 'implement', retry_count: 1 });
    expect(s.last_result).toMatchObject({ ok: false });
    expect(s.task.failure_context.join('\n')).toContain(`${check}:`);
    const report = JSON.parse(repo.read(`relais/cycle/verify/T1-${s.loop.iteration}.json`));
    expect(report).toMatchObject({ pass: false, checks: { [check]: false } });
    // The runs' output is kept beside it (only the last verification's).
    expect(repo.exists(`relais/cycle/verify/T1-${s.loop.iteration}.tests.log`)).toBe(true);
  });

  it('the secrets check names file and line, never the value', async () => {
    await atImplement([{ id: 'T1' }], {});
    await repo.cycle(
      scripted({
        implementer: [
          writes({
            'src/config.js': "\nmodule.exports = { token: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789' };\n",
          }),
        ],
      }).runners,
    );
    await repo.cycle(scripted({}).runners);
    const failures = verdicts().at(-1)?.failures ?? [];
    expect(failures).toEqual(['secrets: src/config.js:2 looks like a GitHub token']);
  });
});

describe('verify_task stage 1: a DET criterion never passes without a test run', () => {
  it('cycle.verify.tests empty: every parameter-free template but the lint ones runs as the tests', async () => {
    await atImplement([{ id: 'T1' }], {});
    repo.policy.verify.tests = [];
    await repo.cycle(
      scripted({ implementer: [writes({ 'src/greet.js': "module.exports = (name) => 'Bye, ' + name;\n" })] })
        .runners,
    );
    const out = await repo.cycle(scripted({ verifier: verdict('YES') }).runners);
    expect(out).toMatchObject({ action: 'verify_task', code: 'CYCLE_VERIFY_FAILED' });
    expect(verdicts().at(-1)?.checks).toMatchObject({ tests: false, lint: true });
    expect(repo.events).toContainEqual(
      expect.objectContaining({ type: 'verify.started', template_id: 'test' }),
    );
  });

  it('no test command at all: the tests check fails, and the cycle pauses naming cycle.verify.tests', async () => {
    await atImplement([{ id: 'T1' }], {});
    repo.policy.verify.tests = [];
    repo.policy.verify.lint = [];
    repo.config = { ...repo.config, verification: { ...repo.config.verification, templates: [] } };
    await repo.cycle(scripted({ implementer: [writes({ 'src/greet.js': GOOD })] }).runners);
    const { runners, calls } = scripted({ verifier: verdict('YES') });
    const out = await repo.cycle(runners);
    expect(out).toMatchObject({
      action: 'verify_task',
      phase: 'needs_human',
      code: 'CYCLE_VERIFY_UNCONFIGURED',
    });
    expect(out.details).toContain('cycle.verify.tests');
    expect(verdicts().at(-1)?.checks.tests).toBe(false);
    expect(calls).toEqual([]);
    // Not the implementer's failure: no attempt is counted.
    expect(repo.state().task).toMatchObject({ retry_count: 0, sub_step: 'verify' });
    expect(repo.state().needs_human?.remediation).toContain('cycle.verify.tests');
  });
});

describe('stuck -> re-plan -> escalate', () => {
  it('three attempts without progress re-plan the task; three more escalate to a human', async () => {
    const adapted = (r: Parameters<Handler>[0]) =>
      `<<<PLAN:V1:NONCE=${nonceOf(r)}>>>\nTRACK_ID=greet\nTASK_COUNT=1\n${taskFields({ id: 'T1' }).replace('  Do T1.', '  Try a smaller edit first.')}\n<<<END_PLAN:NONCE=${nonceOf(r)}>>>`;
    const { runners, calls } = await atImplement([{ id: 'T1' }], { implementer: Array(6).fill(nothing) }, [
      adapted,
    ]);
    const outcomes = await repo.cycles(runners, (o) => o.phase === 'needs_human', 20);
    expect(outcomes.map((o) => o.action)).toEqual([
      'implement_task',
      'retry_task',
      'implement_task',
      'retry_task',
      'implement_task',
      'replan_task',
      'generate_task',
      'implement_task',
      'retry_task',
      'implement_task',
      'retry_task',
      'implement_task',
      'escalate',
    ]);
    const s = repo.state();
    expect(s).toMatchObject({
      phase: 'needs_human',
      task: { replan_attempted: true },
      loop: { stuck_count: 3 },
    });
    expect(s.needs_human).toMatchObject({ code: 'CYCLE_STUCK', resume_phase: 'execute' });
    // The re-plan asked the planner for fresh guidance (seed P6), which the packet now carries.
    const replan = calls.filter((c) => c.role === 'planner').at(-1)?.request.userPrompt ?? '';
    expect(replan).toContain('re-plan after stuck cycles');
    expect(replan).toContain('no new commit');
    expect(repo.read('specs/tracks/greet/tasks/TASK_001.md')).toContain(
      '### RETRY / ADAPTATION GUIDANCE\nTry a smaller edit first.',
    );
    expect(repo.events).toContainEqual(
      expect.objectContaining({ type: 'log', message: 'Re-planning task T1 after 3 stuck cycles' }),
    );
    const files = repo.notifications();
    expect(files.some((f) => f.startsWith('replan-'))).toBe(true);
    expect(files.some((f) => f.startsWith('stuck-'))).toBe(true);
    expect(repo.status()).toBe('');
    // --resume gives the task a fresh start (not an immediate second escalation): a new packet,
    // counters reset, and a re-plan comes first again if it gets stuck once more.
    const { resumeCycle } = await import('../../source/engine/cycle/status.js');
    expect(await resumeCycle(repo.root, 'relais')).toEqual({ ok: true, phase: 'execute' });
    expect(repo.state()).toMatchObject({
      loop: { stuck_count: 0 },
      task: { retry_count: 0, replan_attempted: false, sub_step: 'generate' },
    });
    expect(await repo.cycle(runners)).toMatchObject({ action: 'generate_task', reply: 'CYCLE_OK' });
  });
});

describe('re-plan with the task fingerprint (issue 15)', () => {
  it('a re-plan that comes back with the plan that already failed is not attempted again: it escalates at once', async () => {
    // The planner "re-plans" by echoing the task: same files, its own summary as the guidance.
    const same = (r: Parameters<Handler>[0]) =>
      `<<<PLAN:V1:NONCE=${nonceOf(r)}>>>\nTRACK_ID=greet\nTASK_COUNT=1\n${taskFields({ id: 'T1' })}\n<<<END_PLAN:NONCE=${nonceOf(r)}>>>`;
    const { runners, calls } = await atImplement([{ id: 'T1' }], { implementer: Array(6).fill(nothing) }, [
      same,
    ]);
    const outcomes = await repo.cycles(runners, (o) => o.phase === 'needs_human', 20);
    expect(outcomes.map((o) => o.action)).toEqual([
      'implement_task',
      'retry_task',
      'implement_task',
      'retry_task',
      'implement_task',
      'replan_task',
      'generate_task',
    ]);
    expect(outcomes.at(-1)).toMatchObject({ code: 'CYCLE_PLAN_REPEATED' });
    const s = repo.state();
    expect(s.needs_human).toMatchObject({ code: 'CYCLE_PLAN_REPEATED' });
    expect(s.needs_human?.reason).toMatch(
      /the re-plan of task T1 is the plan that already failed \(task fingerprint [0-9a-f]{16}\)/,
    );
    expect(s.task.failed_plans).toEqual([s.task.plan_fingerprint]);
    // Three attempts with that plan, none more.
    expect(calls.filter((c) => c.role === 'implementer')).toHaveLength(3);
    expect(repo.status()).toBe('');
  });
});

describe('three failures -> rescue branch and reset', () => {
  it('keeps the failed work on rescue-<run>-<task>-2 (the plain name is taken) and resets to the last good commit', async () => {
    const lintFail = (n: number) =>
      writes({ 'src/greet.js': `module.exports = (name) => 'Hello, ' + name; // TODO ${n}\n` });
    const { runners } = await atImplement([{ id: 'T1' }], {
      implementer: [lintFail(1), lintFail(2), lintFail(3)],
    });
    const s0 = repo.state();
    const good = s0.track.plan_base_commit as string;
    repo.git('branch', `rescue-${s0.run_id}-T1`, good);
    const outcomes = await repo.cycles(runners, (o) => o.phase === 'needs_human', 20);
    expect(outcomes.map((o) => `${o.action}:${o.reply}`)).toEqual([
      'implement_task:CYCLE_OK',
      'verify_task:CYCLE_FAIL',
      'retry_task:CYCLE_OK',
      'implement_task:CYCLE_OK',
      'verify_task:CYCLE_FAIL',
      'retry_task:CYCLE_OK',
      'implement_task:CYCLE_OK',
      'verify_task:CYCLE_FAIL',
      'rollback_and_escalate:CYCLE_FAIL',
    ]);
    const rescue = `rescue-${s0.run_id}-T1-2`;
    expect(repo.git('log', '--format=%s', '-3', rescue).trim().split('\n')).toEqual([
      'relais(T1): Task T1',
      'relais(T1): Task T1',
      'relais(T1): Task T1',
    ]);
    expect(repo.head()).toBe(good);
    expect(repo.git('rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('main');
    expect(repo.status()).toBe('');
    const s = repo.state();
    expect(s).toMatchObject({
      phase: 'needs_human',
      task: { retry_count: 0, sub_step: 'generate' },
      last_result: { ok: false },
    });
    expect(s.last_result?.details).toContain(`Rolled back after 3x failure. Rescue: ${rescue}`);
    expect(s.needs_human?.code).toBe('CYCLE_ROLLED_BACK');
    expect(repo.notifications().some((f) => f.startsWith('rollback-'))).toBe(true);
    // A second rollback of the same task takes the next suffix.
    repo.setState((x) => {
      x.phase = 'execute';
      x.needs_human = null;
      x.task.sub_step = 'implement';
      x.task.retry_count = 3;
      x.last_result = { ok: false, details: 'again', code: null };
    });
    expect(await repo.cycle(scripted({}).runners)).toMatchObject({ action: 'rollback_and_escalate' });
    expect(
      repo
        .git('branch', '--list', 'rescue-*')
        .trim()
        .split('\n')
        .map((b) => b.trim()),
    ).toEqual([`rescue-${s0.run_id}-T1`, rescue, `rescue-${s0.run_id}-T1-3`]);
  });
});

describe('three failures of a later task -> reset to the task before it', () => {
  it("task 2 of two fails three times: HEAD goes back to task 1's last_good.commit, task 2's commits stay on the rescue branch", async () => {
    const lintFail = (n: number) =>
      writes({ 'src/greet.js': `module.exports = (name) => 'Hello, ' + name; // TODO ${n}\n` });
    const { runners } = await atImplement([{ id: 'T1' }, { id: 'T2' }], {
      implementer: [writes({ 'src/greet.js': GOOD }), lintFail(1), lintFail(2), lintFail(3)],
      verifier: verdict('YES'),
    });
    const planBase = repo.state().track.plan_base_commit as string;
    const outcomes = await repo.cycles(runners, (o) => o.phase === 'needs_human', 20);
    expect(outcomes.map((o) => o.action)).toEqual([
      'implement_task',
      'verify_task',
      'reflect',
      'generate_task',
      'implement_task',
      'verify_task',
      'retry_task',
      'implement_task',
      'verify_task',
      'retry_task',
      'implement_task',
      'verify_task',
      'rollback_and_escalate',
    ]);
    const s = repo.state();
    const good = s.last_good.commit as string;
    expect(s.last_good.task_id).toBe('T1');
    expect(good).not.toBe(planBase);
    expect(repo.git('log', '-1', '--format=%s', good).trim()).toBe('relais(T1): Task T1');
    // Reset to task 1's commit, not to the plan's base: task 1's work stays on the branch.
    expect(repo.head()).toBe(good);
    expect(repo.read('src/greet.js')).toBe(GOOD);
    expect(repo.git('rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('main');
    expect(repo.status()).toBe('');
    // Everything task 2 committed after it is on the rescue branch, and nothing else.
    const rescue = `rescue-${s.run_id}-T2`;
    expect(repo.git('log', '--format=%s', `${good}..${rescue}`).trim().split('\n')).toEqual([
      'relais(T2): Task T2',
      'relais(T2): Task T2',
      'relais(T2): Task T2',
      'relais(T2): task packet',
    ]);
    expect(repo.git('show', `${rescue}:src/greet.js`)).toContain('// TODO 3');
    expect(s).toMatchObject({
      phase: 'needs_human',
      track: { task_current: 2 },
      task: { id: 'T2', retry_count: 0, sub_step: 'generate' },
      needs_human: { code: 'CYCLE_ROLLED_BACK', resume_phase: 'execute' },
    });
    expect(s.last_result?.details).toContain(`Rescue: ${rescue}; reset to ${good.slice(0, 12)}`);
  });
});

describe('rescue branch names', () => {
  it('a task id git refuses in a branch name still gets a rescue branch (never CYCLE_INTERNAL)', async () => {
    await atImplement([{ id: 'T1' }], {});
    repo.write('src/greet.js', 'half done\n');
    repo.setState((x) => {
      x.task.id = 'T1.lock';
      x.task.retry_count = 3;
      x.last_result = { ok: false, details: 'failed', code: null };
    });
    const out = await repo.cycle(scripted({}).runners);
    expect(out).toMatchObject({ action: 'rollback_and_escalate', code: 'CYCLE_ROLLED_BACK' });
    const branches = repo.git('branch', '--list', 'rescue-*').trim();
    expect(branches).toMatch(/rescue-\S+-T1-lock$/);
    expect(repo.git('stash', 'list')).toContain('before rollback');
  });
});

describe('verify_task stage 2 and 3: verdicts, format repair', () => {
  const fine = writes({ 'src/greet.js': GOOD });

  it('one NO is FAIL (conservative), its reason becomes the next attempt context', async () => {
    await atImplement(
      [
        {
          id: 'T1',
          acceptance: '- id=AC1 text="LLM: a"\n- id=AC2 text="LLM: b"\n- id=AC3 text="DET: tests pass"',
        },
      ],
      {},
    );
    await repo.cycle(scripted({ implementer: [fine] }).runners);
    // In parallel: no verifier answers before both have started (run one after the other, the
    // first would wait forever and the test time out).
    const started = new Set<string>();
    let bothStarted!: () => void;
    const together = new Promise<void>((resolve) => {
      bothStarted = resolve;
    });
    const { runners, calls } = scripted({
      verifier: async (id, r) => {
        started.add(id);
        if (started.size === 2) bothStarted();
        await together;
        return verdict(id === 'AC2' ? 'NO' : 'YES', `${id} judged`)(id, r);
      },
    });
    expect(await repo.cycle(runners)).toMatchObject({ action: 'verify_task', reply: 'CYCLE_FAIL' });
    expect([...started].sort()).toEqual(['AC1', 'AC2']);
    expect(calls).toHaveLength(2);
    expect(verdicts().at(-1)?.criteria).toEqual([
      { id: 'AC1', kind: 'LLM', answer: 'YES', reason: 'AC1 judged' },
      { id: 'AC2', kind: 'LLM', answer: 'NO', reason: 'AC2 judged' },
      { id: 'AC3', kind: 'DET', answer: 'YES', reason: 'stage 1 checks' },
    ]);
    expect(repo.state().task.failure_context).toEqual(['AC2: AC2 judged']);
    // The next implementation is told why.
    const next = scripted({ implementer: [fine] });
    await repo.cycle(next.runners); // retry_task
    await repo.cycle(next.runners); // implement_task
    expect(next.calls[0]?.request.userPrompt).toContain('## PREVIOUS ATTEMPT FAILED\n- AC2: AC2 judged');
  });

  it("each verifier gets the diff hunks of the files its criterion names; the planned files' otherwise", async () => {
    await atImplement(
      [
        {
          id: 'T1',
          files:
            '- path=src/greet.js action=modify rationale="exclaim"\n- path=src/farewell.js action=add rationale="new"',
          acceptance:
            '- id=AC1 text="DET: All tests pass"\n- id=AC2 text="LLM: src/farewell.js exports a function"\n- id=AC3 text="LLM: The greeting is polite"',
        },
      ],
      {},
    );
    await repo.cycle(
      scripted({
        implementer: [
          writes({
            'src/greet.js': GOOD,
            'src/farewell.js': "module.exports = (name) => 'Goodbye, ' + name;\n",
          }),
        ],
      }).runners,
    );
    const { runners, calls } = scripted({ verifier: verdict('YES') });
    expect(await repo.cycle(runners)).toMatchObject({ reply: 'CYCLE_OK' });
    const prompt = (id: string) =>
      calls.find((c) => c.request.userPrompt.startsWith(`Criterion ${id}:`))?.request.userPrompt ?? '';
    const ac2 = prompt('AC2').split('## Diff hunks for files relevant to this criterion')[1] ?? '';
    expect(ac2).toContain("+module.exports = (name) => 'Goodbye, ' + name;");
    expect(ac2).not.toContain('Hello');
    const ac3 = prompt('AC3');
    expect(ac3).not.toContain('## Diff hunks for files relevant to this criterion');
    expect(ac3).toContain('Goodbye');
    expect(ac3).toContain('Hello');
  });

  it('a garbled verdict gets one format-repair retry with the parser error and the same nonce', async () => {
    await atImplement([{ id: 'T1' }], {});
    await repo.cycle(scripted({ implementer: [fine] }).runners);
    let n = 0;
    const { runners, calls } = scripted({
      verifier: (id, r) => (n++ === 0 ? 'Looks good to me!' : verdict('YES')(id, r)),
    });
    expect(await repo.cycle(runners)).toMatchObject({ action: 'verify_task', reply: 'CYCLE_OK' });
    expect(calls).toHaveLength(2);
    expect(nonceOf(calls[1]?.request as never)).toBe(nonceOf(calls[0]?.request as never));
    expect(calls[1]?.request.userPrompt).toContain(
      'Your output could not be parsed. Error: no VERDICT AC2 block',
    );
    expect(calls[1]?.request.userPrompt).toContain('Please output ONLY the corrected block, no other text.');
    expect(repo.state().task.sub_step).toBe('reflect');
  });

  it('still unparsable after the retry: NEEDS_HUMAN; a verifier answering NEEDS_HUMAN pauses', async () => {
    await atImplement([{ id: 'T1' }], {});
    await repo.cycle(scripted({ implementer: [fine] }).runners);
    const wrongNonce = (id: string) =>
      `<<<VERDICT:V1:${id}:NONCE=000000>>>\nANSWER=YES\nREASON="x"\n<<<END_VERDICT:${id}:NONCE=000000>>>`;
    const out = await repo.cycle(scripted({ verifier: wrongNonce }).runners);
    expect(out).toMatchObject({
      reply: 'CYCLE_FAIL',
      phase: 'needs_human',
      code: 'CYCLE_VERIFIER_OUTPUT_INVALID',
    });
    expect(repo.state().needs_human?.reason).toContain('[wrong_nonce]');
    repo.setState((s) => {
      s.phase = 'execute';
      s.needs_human = null;
    });
    const human = await repo.cycle(
      scripted({ verifier: verdict('NEEDS_HUMAN', 'tone is a matter of taste') }).runners,
    );
    expect(human).toMatchObject({ phase: 'needs_human', code: 'CYCLE_VERIFY_NEEDS_HUMAN' });
    expect(verdicts().at(-1)?.result).toBe('PAUSE');
  });
});

describe('a human verdict for a verification that needs one', () => {
  const fine = writes({ 'src/greet.js': GOOD });
  async function pausedForAHuman() {
    await atImplement([{ id: 'T1' }], {});
    await repo.cycle(scripted({ implementer: [fine] }).runners);
    const out = await repo.cycle(scripted({ verifier: verdict('NEEDS_HUMAN', 'taste') }).runners);
    expect(out).toMatchObject({ phase: 'needs_human', code: 'CYCLE_VERIFY_NEEDS_HUMAN' });
    expect(repo.state().needs_human?.remediation).toContain('--verdict');
    return (await import('../../source/engine/cycle/status.js')).resumeCycle;
  }

  it('--resume with verdict yes: the next verification takes it instead of the verifier, and passes', async () => {
    const resumeCycle = await pausedForAHuman();
    expect(
      await resumeCycle(repo.root, 'relais', { verdict: { answer: 'YES', reason: 'reads well' } }),
    ).toEqual({
      ok: true,
      phase: 'execute',
    });
    const { runners, calls } = scripted({ verifier: verdict('NO') });
    expect(await repo.cycle(runners)).toMatchObject({ action: 'verify_task', reply: 'CYCLE_OK' });
    expect(calls).toEqual([]);
    expect(verdicts().at(-1)?.criteria).toContainEqual({
      id: 'AC2',
      kind: 'LLM',
      answer: 'YES',
      reason: 'human: reads well',
    });
    expect(repo.state().task).toMatchObject({ sub_step: 'reflect', human_verdict: null });
  });

  it('verdict no fails the attempt with the reason as context; a verdict for another commit is not used', async () => {
    const resumeCycle = await pausedForAHuman();
    await resumeCycle(repo.root, 'relais', { verdict: { answer: 'NO', reason: 'too terse' } });
    expect(await repo.cycle(scripted({}).runners)).toMatchObject({ code: 'CYCLE_VERIFY_FAILED' });
    expect(repo.state().task.failure_context).toEqual(['AC2: human: too terse']);
    // Every report is kept; only the last verification's logs.
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(`${repo.root}/relais/cycle/verify`).sort()).toEqual([
      'T1-7.json',
      'T1-8.json',
      'T1-8.lint.log',
      'T1-8.tests.log',
    ]);

    repo.dispose();
    const again = await pausedForAHuman();
    await again(repo.root, 'relais', { verdict: { answer: 'YES', reason: 'ok' } });
    repo.write('README.md', 'moved on\n');
    repo.git('add', 'README.md');
    repo.git('commit', '-qm', 'a human commit after the verdict');
    const { runners, calls } = scripted({ verifier: verdict('YES') });
    await repo.cycle(runners);
    expect(calls).toHaveLength(1);
  });

  it('a verdict is refused when no verification waits for one', async () => {
    repo = await CycleRepo.create({ ...BASE_FILES });
    await repo.cycle(scripted({}).runners);
    const { resumeCycle } = await import('../../source/engine/cycle/status.js');
    const out = await resumeCycle(repo.root, 'relais', { verdict: { answer: 'YES', reason: 'x' } });
    expect(out).toMatchObject({ ok: false });
    expect(out.ok ? '' : out.detail).toContain('CYCLE_SEED_DOCS_MISSING');
    expect(repo.state().phase).toBe('needs_human');
  });
});

describe('planner output and generate_task hard stops', () => {
  it('a planner that fails the format twice: CYCLE_FAIL, nothing changes, the next cycle asks again', async () => {
    repo = await CycleRepo.create();
    const wrong = (r: Parameters<Handler>[0]): Answer =>
      track()(r).replace(/NONCE=[0-9A-F]{6}/g, 'NONCE=ABCDEF');
    const { runners, calls } = scripted({ planner: [() => 'prose', wrong, track()] });
    await repo.cycle(runners); // seed_docs
    const failed = await repo.cycle(runners);
    expect(failed).toMatchObject({
      action: 'pick_track',
      reply: 'CYCLE_FAIL',
      code: 'CYCLE_PLANNER_OUTPUT_INVALID',
      phase: 'select-track',
    });
    expect(failed.details).toMatch(
      /after one format-repair retry: line 2: the TRACK block carries nonce ABCDEF/,
    );
    expect(repo.state().track.id).toBeNull();
    const again = await repo.cycle(runners);
    expect(again).toMatchObject({ action: 'pick_track', reply: 'CYCLE_OK' });
    expect(nonceOf(calls[2]?.request as never)).not.toBe(nonceOf(calls[0]?.request as never));
  });

  it('the format-repair prompt quotes a long previous answer only in part', async () => {
    repo = await CycleRepo.create();
    const huge = `${'prose '.repeat(20_000)}THE END`;
    const { runners, calls } = scripted({ planner: [() => huge, track()] });
    await repo.cycle(runners); // seed_docs
    expect(await repo.cycle(runners)).toMatchObject({ action: 'pick_track', reply: 'CYCLE_OK' });
    const first = calls[0]?.request.userPrompt ?? '';
    const repair = calls[1]?.request.userPrompt ?? '';
    expect(repair.length - first.length).toBeLessThan(10_000);
    expect(repair).toContain('THE END');
    expect(repair).toMatch(/\[\.\.\. \d+ characters of your answer left out \.\.\.\]/);
  });

  it('REPLAN_REQUIRED: a planned modify target that does not exist (no drift)', async () => {
    repo = await CycleRepo.create();
    const { runners } = scripted({
      planner: [
        track(),
        spec(),
        plan([{ id: 'T1', files: '- path=src/missing.js action=modify rationale="x"' }]),
      ],
    });
    const outcomes = await repo.cycles(runners, (o) => o.action === 'generate_task', 6);
    expect(outcomes.at(-1)).toMatchObject({ phase: 'needs_human', code: 'CYCLE_REPLAN_REQUIRED' });
    expect(outcomes.at(-1)?.details).toContain('src/missing.js (modify) does not exist at HEAD');
  });

  it('drift: the file moved after planning, the planner adapts the bindings; acceptance stays verbatim', async () => {
    repo = await CycleRepo.create();
    const adapted = (r: Parameters<Handler>[0]) =>
      `<<<PLAN:V1:NONCE=${nonceOf(r)}>>>\nTRACK_ID=greet\nTASK_COUNT=1\n${taskFields({
        id: 'T1',
        files: '- path=src/hello.js action=modify rationale="moved"',
        acceptance: '- id=AC1 text="LLM: something else entirely"',
      })}\n<<<END_PLAN:NONCE=${nonceOf(r)}>>>`;
    const { runners, calls } = scripted({ planner: [track(), spec(), plan([{ id: 'T1' }]), adapted] });
    await repo.cycles(runners, (o) => o.action === 'create_plan', 6);
    repo.git('mv', 'src/greet.js', 'src/hello.js');
    repo.git('commit', '-q', '-m', 'rename');
    expect(await repo.cycle(runners)).toMatchObject({ action: 'generate_task', reply: 'CYCLE_OK' });
    expect(calls.at(-1)?.request.userPrompt).toContain(
      'the tree moved since the plan (src/greet.js (modify) does not exist at HEAD)',
    );
    const packet = repo.read('specs/tracks/greet/tasks/TASK_001.md');
    expect(packet).toContain('- path=src/hello.js | action: modify');
    expect(packet).toContain('- AC2: LLM: The change does what the title says');
    expect(packet).not.toContain('something else entirely');
  });

  it('drift: verification judges the scope against the adapted bindings, not the stale plan', async () => {
    repo = await CycleRepo.create();
    const adapted = (r: Parameters<Handler>[0]) =>
      `<<<PLAN:V1:NONCE=${nonceOf(r)}>>>\nTRACK_ID=greet\nTASK_COUNT=1\n${taskFields({
        id: 'T1',
        files: '- path=src/hello.js action=modify rationale="moved"',
      })}\n<<<END_PLAN:NONCE=${nonceOf(r)}>>>`;
    const { runners, calls } = scripted({
      planner: [track(), spec(), plan([{ id: 'T1' }]), adapted],
      implementer: [writes({ 'src/hello.js': GOOD })],
      verifier: verdict('YES'),
    });
    await repo.cycles(runners, (o) => o.action === 'create_plan', 6);
    repo.git('mv', 'src/greet.js', 'src/hello.js');
    repo.write('tests/greet.test.js', repo.read('tests/greet.test.js').replace('greet.js', 'hello.js'));
    repo.git('commit', '-q', '-am', 'rename');
    await repo.cycles(runners, (o) => o.action === 'verify_task', 3);
    expect(repo.state().task.sub_step).toBe('reflect');
    expect(repo.state().task.files).toEqual([{ path: 'src/hello.js', action: 'modify', rationale: 'moved' }]);
    const prompt = calls.find((c) => c.role === 'verifier')?.request.userPrompt ?? '';
    expect(prompt).not.toContain('Files outside the planned scope');
    expect(prompt).toContain('src/hello.js');
  });

  it('REQUEST_SPLIT: the adapted task needs more than 3x ESTIMATED_DIFF; or the implementer says so', async () => {
    repo = await CycleRepo.create();
    const big = (r: Parameters<Handler>[0]) =>
      `<<<PLAN:V1:NONCE=${nonceOf(r)}>>>\nTRACK_ID=greet\nTASK_COUNT=1\n${taskFields({ id: 'T1', files: '- path=src/hello.js action=modify rationale="moved"', diff: 61 })}\n<<<END_PLAN:NONCE=${nonceOf(r)}>>>`;
    const { runners } = scripted({ planner: [track(), spec(), plan([{ id: 'T1' }]), big] });
    await repo.cycles(runners, (o) => o.action === 'create_plan', 6);
    repo.git('mv', 'src/greet.js', 'src/hello.js');
    repo.git('commit', '-q', '-m', 'rename');
    const out = await repo.cycle(runners);
    expect(out).toMatchObject({ phase: 'needs_human', code: 'CYCLE_REQUEST_SPLIT' });
    expect(out.details).toContain('needs 61 lines, more than 60');

    repo.dispose();
    await atImplement([{ id: 'T1' }], {});
    const split = writes(
      { 'src/greet.js': 'half done\n' },
      'This is too big.\nREQUEST_SPLIT=true the parser must be rewritten first',
    );
    const stop = await repo.cycle(scripted({ implementer: [split] }).runners);
    expect(stop).toMatchObject({ phase: 'needs_human', code: 'CYCLE_REQUEST_SPLIT' });
    expect(repo.status()).toBe(''); // the half-done work is stashed
    expect(repo.git('stash', 'list')).toContain('stopped with REQUEST_SPLIT');
  });

  it('a verifier CLI that cannot run judges nothing: CYCLE_FAIL, verified again next cycle', async () => {
    await atImplement([{ id: 'T1' }], {});
    await repo.cycle(scripted({ implementer: [writes({ 'src/greet.js': GOOD })] }).runners);
    const down = await repo.cycle(
      scripted({ verifier: () => ({ failure: 'the claude command was not found' }) }).runners,
    );
    expect(down).toMatchObject({ action: 'verify_task', reply: 'CYCLE_FAIL', code: 'CYCLE_AGENT_FAILED' });
    expect(repo.state().task).toMatchObject({ sub_step: 'verify', retry_count: 0 });
    expect(await repo.cycle(scripted({ verifier: verdict('YES') }).runners)).toMatchObject({
      reply: 'CYCLE_OK',
    });
  });

  it('an interrupt during implementation is not an attempt', async () => {
    await atImplement([{ id: 'T1' }], {});
    const controller = new AbortController();
    const interrupted = async (r: Parameters<Handler>[0], cwd: string): Promise<Answer> => {
      await writes({ 'src/greet.js': 'half\n' })(r, cwd);
      controller.abort();
      return { failure: 'codex interrupted and killed' };
    };
    const out = await repo.cycle(scripted({ implementer: [interrupted] }).runners, {
      signal: controller.signal,
    });
    expect(out).toMatchObject({ reply: 'CYCLE_FAIL', code: 'CYCLE_AGENT_FAILED' });
    expect(repo.state().task).toMatchObject({ retry_count: 0, sub_step: 'implement' });
    expect(repo.state().cycle.status).toBe('failed');
    expect(repo.status()).toBe('');
  });

  it('an interrupt during verification is not an attempt: the test run is stopped, verified again next cycle', async () => {
    await atImplement([{ id: 'T1' }], {});
    const hang = 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);\n';
    await repo.cycle(
      scripted({ implementer: [writes({ 'src/greet.js': GOOD, 'tests/hang.test.js': hang })] }).runners,
    );
    expect(repo.state().task.sub_step).toBe('verify');
    const controller = new AbortController();
    const bus = new EngineBus();
    bus.subscribe((e) => {
      if (e.type === 'verify.started') controller.abort();
    });
    const out = await repo.cycle(scripted({}).runners, { signal: controller.signal, bus });
    expect(out).toMatchObject({ action: 'verify_task', reply: 'CYCLE_FAIL', code: 'CYCLE_AGENT_FAILED' });
    expect(out.details).toContain('interrupted');
    expect(repo.state().task).toMatchObject({ sub_step: 'verify', retry_count: 0, failure_context: [] });
    expect(repo.state().loop.stuck_count).toBe(0);
  });

  it('an implementer that fails: the attempt counts, its leftovers go to the stash', async () => {
    await atImplement([{ id: 'T1' }], {});
    const crash = async (r: Parameters<Handler>[0], cwd: string): Promise<Answer> => {
      await writes({ 'src/greet.js': 'broken\n' })(r, cwd);
      return { failure: 'codex timed out after 1800000 ms and was killed' };
    };
    const out = await repo.cycle(scripted({ implementer: [crash] }).runners);
    expect(out).toMatchObject({ action: 'implement_task', reply: 'CYCLE_FAIL', code: 'CYCLE_AGENT_FAILED' });
    expect(repo.state().task).toMatchObject({ retry_count: 1, sub_step: 'implement' });
    expect(repo.status()).toBe('');
    expect(repo.read('src/greet.js')).not.toContain('broken');
  });
});

describe('VALIDATE: invalid state, a dead running cycle, the lock, the time budget', () => {
  it('an unparseable state is never reset: a needs_human CYCLE_FAIL, the file untouched, status tells why', async () => {
    repo = await CycleRepo.create();
    await repo.cycle(scripted({}).runners);
    const valid = repo.state();
    repo.write('relais/cycle/STATE.json', '{"phase": "execute",');
    const out = await repo.cycle(scripted({}).runners);
    // A pause for a human (exit 3), not a failure the next cycle retries.
    expect(out).toMatchObject({
      reply: 'CYCLE_FAIL',
      refused: true,
      code: 'CYCLE_STATE_INVALID',
      phase: 'needs_human',
    });
    expect(repo.read('relais/cycle/STATE.json')).toBe('{"phase": "execute",');
    const { runCycleLoop } = await import('../../source/engine/cycle/loop.js');
    expect(await runCycleLoop(repo.options(scripted({}).runners))).toMatchObject({
      end: 'needs_human',
      cycles: 1,
      last: { code: 'CYCLE_STATE_INVALID' },
    });
    expect(repo.notifications().some((f) => f.startsWith('escalation-'))).toBe(true);
    const { cycleStatusLines } = await import('../../source/engine/cycle/status-lines.js');
    expect((await cycleStatusLines(repo.root, 'relais'))[0]).toContain(
      'needs_human: relais/cycle/STATE.json is invalid',
    );
    // A schema mismatch is the same: refused, named, kept.
    repo.write('relais/cycle/STATE.json', JSON.stringify({ ...valid, phase: 'dancing' }));
    const mismatch = await repo.cycle(scripted({}).runners);
    expect(mismatch).toMatchObject({ code: 'CYCLE_STATE_INVALID' });
    expect(mismatch.details).toContain('phase');
    expect(JSON.parse(repo.read('relais/cycle/STATE.json')).phase).toBe('dancing');
  });

  it('a cycle left "running" by a dead process: refused once and marked timed_out', async () => {
    repo = await CycleRepo.create();
    await repo.cycle(scripted({}).runners);
    repo.setState((s) => {
      s.cycle.status = 'running';
    });
    expect(await repo.cycle(scripted({}).runners)).toMatchObject({
      reply: 'CYCLE_FAIL',
      code: 'CYCLE_ALREADY_RUNNING',
    });
    expect(repo.state().cycle.status).toBe('timed_out');
    expect(await repo.cycle(scripted({ planner: [track()] }).runners)).toMatchObject({
      reply: 'CYCLE_OK',
      action: 'pick_track',
    });
  });

  it('a cycle id is never reused (its nonce would be), and must be printable', async () => {
    repo = await CycleRepo.create();
    const { runners } = scripted({});
    expect(await repo.cycle(runners, { cycleId: 'c-1' })).toMatchObject({ reply: 'CYCLE_OK' });
    expect(repo.state().cycle).toMatchObject({ id: 'c-1', nonce: 'A6F7EF' });
    expect(await repo.cycle(runners, { cycleId: 'c-1' })).toMatchObject({
      refused: true,
      code: 'CYCLE_ID_REUSED',
    });
    expect(await repo.cycle(runners, { cycleId: 'two words' })).toMatchObject({
      refused: true,
      code: 'CYCLE_ID_REUSED',
    });
    expect(repo.state().loop.iteration).toBe(1);
  });

  it('a nonce is never reused: two ids with the same derived nonce, or a nonce of a recent cycle', async () => {
    repo = await CycleRepo.create();
    const { runners } = scripted({});
    expect(await repo.cycle(runners, { cycleId: '20260129043000' })).toMatchObject({ reply: 'CYCLE_OK' });
    expect(repo.state().cycle.nonce).toBe('202601');
    // Another id, the same hex prefix: the same nonce.
    const same = await repo.cycle(runners, { cycleId: '20260129050000' });
    expect(same).toMatchObject({ refused: true, code: 'CYCLE_ID_REUSED' });
    expect(same.details).toContain('202601');
    // Not only the previous cycle's: any recent one.
    repo.setState((s) => {
      s.phase = 'select-track';
    });
    expect(await repo.cycle(scripted({ planner: [track()] }).runners, { cycleId: 'abcdef01' })).toMatchObject(
      {
        reply: 'CYCLE_OK',
      },
    );
    expect(await repo.cycle(runners, { cycleId: '2026012906' })).toMatchObject({
      refused: true,
      code: 'CYCLE_ID_REUSED',
    });
    expect(repo.state().loop.iteration).toBe(2);
    expect(repo.state().cycle.recent_nonces).toEqual(['202601', 'ABCDEF']);
  });

  it('a refused PHASE_COMPLETE is a failed cycle: a planner repeating it ends the loop after max_consecutive_failures', async () => {
    repo = await CycleRepo.create();
    repo.policy.max_cycles_per_loop = 20;
    const { runners, calls } = scripted({ planner: Array(20).fill(phaseComplete) });
    const { runCycleLoop } = await import('../../source/engine/cycle/loop.js');
    const result = await runCycleLoop(repo.options(runners));
    expect(result).toMatchObject({ end: 'failures', cycles: 4 });
    expect(result.last).toMatchObject({
      action: 'pick_track',
      reply: 'CYCLE_FAIL',
      code: 'CYCLE_PHASE_INCOMPLETE',
    });
    expect(result.last?.details).toContain('PHASE_COMPLETE refused: no track of phase (none) is complete');
    expect(calls).toHaveLength(3);
    expect(repo.state().roadmap.unmet).toContain('no track of phase');
  });

  it('--resume writes STATE.json only while holding the cycle lock', async () => {
    repo = await CycleRepo.create({ ...BASE_FILES });
    await repo.cycle(scripted({}).runners);
    expect(repo.state().phase).toBe('needs_human');
    const { acquireLock } = await import('../../source/engine/workspace/lock.js');
    const held = await acquireLock(`${repo.root}/relais/cycle/lock.json`, 'another cycle');
    const { resumeCycle } = await import('../../source/engine/cycle/status.js');
    const refused = await resumeCycle(repo.root, 'relais');
    expect(refused).toMatchObject({ ok: false });
    expect(refused.ok ? '' : refused.detail).toContain('another cycle');
    expect(repo.state().phase).toBe('needs_human');
    if (held.ok) await held.lock.release();
    expect(await resumeCycle(repo.root, 'relais')).toEqual({ ok: true, phase: 'research' });
  });

  it('the lock held by a live process refuses the cycle', async () => {
    repo = await CycleRepo.create();
    const { acquireLock } = await import('../../source/engine/workspace/lock.js');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(`${repo.root}/relais/cycle`, { recursive: true });
    const held = await acquireLock(`${repo.root}/relais/cycle/lock.json`, 'another cycle');
    expect(held.ok).toBe(true);
    expect(await repo.cycle(scripted({}).runners)).toMatchObject({
      reply: 'CYCLE_FAIL',
      code: 'CYCLE_LOCK_HELD',
    });
    if (held.ok) await held.lock.release();
  });

  it('75% of max_hours warns once; max_hours escalates (row 1)', async () => {
    repo = await CycleRepo.create();
    const start = new Date('2026-03-01T00:00:00Z');
    repo.now = () => start;
    await repo.cycle(scripted({}).runners); // seed_docs, budget starts now
    repo.now = () => new Date(start.getTime() + 19 * 3_600_000);
    const { runners } = scripted({ planner: [track(), spec()] });
    await repo.cycle(runners);
    await repo.cycle(runners);
    expect(repo.events.filter((e) => e.type === 'budget.warning')).toHaveLength(1);
    expect(repo.notifications().filter((f) => f.startsWith('budget-warn-'))).toHaveLength(1);
    repo.now = () => new Date(start.getTime() + 24 * 3_600_000);
    const out = await repo.cycle(runners);
    expect(out).toMatchObject({ action: 'escalate', phase: 'needs_human', code: 'CYCLE_BUDGET_EXCEEDED' });
    expect(repo.events).toContainEqual(
      expect.objectContaining({ type: 'cycle.decided', action: 'escalate', row: 1 }),
    );
  });
});

describe('modes', () => {
  it('interactive: a task complete asks for approval; nobody answers, so the cycle pauses', async () => {
    await atImplement([{ id: 'T1' }], {});
    repo.policy.mode = 'interactive';
    repo.gates = denyAll;
    const { runners } = scripted({
      implementer: [writes({ 'src/greet.js': GOOD })],
      verifier: verdict('YES'),
    });
    await repo.cycle(runners);
    await repo.cycle(runners);
    const out = await repo.cycle(runners);
    expect(out).toMatchObject({ action: 'reflect', phase: 'needs_human', code: 'CYCLE_GATE_DECLINED' });
    expect(repo.events).toContainEqual(
      expect.objectContaining({ type: 'gate.resolved', gate: 'qa', decision: 'reject', by: 'nobody' }),
    );
    expect(repo.state().last_good.commit).toBeNull();
  });

  it('hybrid with nobody to answer: the new track is not approved', async () => {
    repo = await CycleRepo.create();
    repo.gates = denyAll;
    const { runners } = scripted({ planner: [track()] });
    await repo.cycle(runners);
    expect(await repo.cycle(runners)).toMatchObject({
      action: 'pick_track',
      code: 'CYCLE_GATE_DECLINED',
      phase: 'needs_human',
    });
    expect((repo.state() as CycleState).needs_human?.resume_phase).toBe('select-track');
  });

  it('a declined new track is not selected: --resume asks the planner again, never specs the declined track', async () => {
    repo = await CycleRepo.create();
    repo.gates = denyAll;
    const { runners, calls } = scripted({ planner: [track('risky'), track('greet')] });
    await repo.cycle(runners);
    expect(await repo.cycle(runners)).toMatchObject({ action: 'pick_track', code: 'CYCLE_GATE_DECLINED' });
    expect(repo.state().track).toMatchObject({ id: null, status: 'none' });
    expect(repo.state().needs_human?.reason).toContain('track risky was not approved');
    const { resumeCycle } = await import('../../source/engine/cycle/status.js');
    expect(await resumeCycle(repo.root, 'relais')).toEqual({ ok: true, phase: 'select-track' });
    repo.gates = approveAll;
    expect(await repo.cycle(runners)).toMatchObject({ action: 'pick_track', reply: 'CYCLE_OK' });
    expect(repo.state().track).toMatchObject({ id: 'greet', status: 'in-progress' });
    // The planner hears that its pick was declined.
    expect(calls[1]?.request.userPrompt).toContain('A human declined your last pick: track risky');
  });

  it('yolo: track start and completion are silent, the summary is not', async () => {
    repo = await CycleRepo.create();
    repo.policy.mode = 'yolo';
    repo.gates = denyAll; // never asked in yolo
    const { runners } = scripted({
      planner: [
        track(),
        spec(),
        plan([{ id: 'T1' }]),
        (r) => `<<<TRACK:V1:NONCE=${nonceOf(r)}>>>\nPHASE_COMPLETE=true\n<<<END_TRACK:NONCE=${nonceOf(r)}>>>`,
      ],
      implementer: [writes({ 'src/greet.js': GOOD })],
      verifier: verdict('YES'),
    });
    const outcomes = await repo.cycles(runners, (o) => o.reply === 'DONE');
    expect(outcomes.at(-1)?.action).toBe('summarize');
    expect(repo.notifications()).toEqual(['complete.md']);
  });
});
