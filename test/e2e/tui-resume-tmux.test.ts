import { afterEach, describe, expect, it } from 'vitest';
import { answer, plannerProject, proceedGate, ready } from '../support/planner.js';
import { CLI, type TestProject, task } from '../support/project.js';
import { TmuxSession } from '../support/tmux.js';
import { happyScenario, specStep, workflowFile } from '../support/workflow.js';

// Issue 16 item 6 in a real terminal: Ctrl-C during the implementation, then `ralphy start` again.
// At the resume question the task list is there and the header's cost is the spend the runner
// recorded (not $0); after `y` the phase list still has PLANNING, and the cost goes on from there.

let tmux: TmuxSession | null = null;
let project: TestProject | null = null;
afterEach(() => {
  tmux?.kill();
  tmux = null;
  project?.dispose();
  project = null;
});

const usd = (amount: number) => (amount >= 1 ? `$${amount.toFixed(2)}` : `$${amount.toFixed(4)}`);
/** The header's reported spend (the part held for calls killed before they reported is said apart). */
const headerSpent = (screen: string) =>
  Number(/ \$(\d+\.\d+)(?: spent)? \+ /.exec(screen.split('\n')[0] ?? '')?.[1]);

const implementing = (id: string, file: string) =>
  task({
    task_id: id,
    intent: `Implement ${file}`,
    scope: {
      allowed_globs: [file],
      forbidden_globs: [],
      allow_new_files: false,
      allow_lockfile_changes: false,
    },
  });

/** The footer (its `a abort`) is drawn last: with it on screen the whole frame is. */
const whole = (screen: string) => /a\s+abort/.test(screen);

describe('interrupt and resume in a real terminal', () => {
  it('Ctrl-C, then ralphy start: the tasks and the recorded cost at the question, PLANNING kept after it', async () => {
    expect(TmuxSession.available(), 'tmux is required (apt-get install tmux)').toBe(true);
    const p = plannerProject();
    project = p;
    const scenario = happyScenario();
    // The planner asks to proceed (--yes says yes), then is ready for the spec.
    scenario.planner = [answer(proceedGate()), answer(ready('Greet people by name, and say goodbye.', []))];
    scenario.spec = [specStep({ cost: 0.25 })];
    // The interrupted tick's orchestrator answer is spent: the resumed tick asks again.
    scenario.orchestrator = [
      implementing('T1', 'src/a.ts'),
      implementing('T1', 'src/a.ts'),
      implementing('T2', 'src/b.ts'),
    ].map((t) => ({ result_json: t }));
    const [writeA, writeB] = scenario.builder ?? [];
    scenario.builder = [
      { actions: [{ write: 'src/a.ts', content: 'half\n' }], say: 'Working on it.', hang: true },
      writeA,
      writeB,
    ];
    p.scenario(scenario);
    tmux = new TmuxSession('resume', 120, 40);
    tmux.start(
      `cd ${p.root} && node ${CLI} start --yes; echo "START_EXIT=$?"; node ${CLI} start; echo "START2_EXIT=$?"; read -r _`,
      { ...p.env, CI: undefined, CONTINUOUS_INTEGRATION: undefined, TERM: 'xterm-256color', IS_SANDBOX: '1' },
    );

    const working = await tmux.waitFor((s) => s.includes('Working on it.'), 'the builder at work', 120_000);
    expect(working).toMatch(/✓ PLANNING/);
    tmux.keys('C-c');
    await tmux.waitFor((s) => s.includes('START_EXIT=130'), 'the interrupted ralphy start');
    const stopped = workflowFile(p);
    expect(stopped).toMatchObject({ state: 'IMPLEMENTATION', status: 'interrupted' });
    // The builder killed by Ctrl-C never reported a cost: its maximum is held, not spent.
    const held = stopped.unreported_usd as number;
    expect(stopped.unreported_calls).toBe(1);
    const spent = (stopped.cost_usd as number) - held;
    expect(spent).toBeGreaterThanOrEqual(0.25);

    const question = await tmux.waitFor(
      (s) => s.includes('Resume the interrupted workflow?') && /y\s+resume/.test(s) && whole(s),
      'the resume question',
    );
    // The task list as the runner left it, and the spend it recorded: the header does not restart at $0.
    expect(question).toMatch(/1 Greet by name/);
    expect(question).toMatch(/2 Say goodbye/);
    expect(question).toContain('0/2 task(s) verified by the runner so far.');
    expect(question.split('\n')[0]).toContain(
      `${usd(spent)} spent + ${usd(held)} held for 1 call of unknown cost`,
    );
    expect(question.split('\n')[0]).not.toContain('$0.0000');
    tmux.keys('y');

    const resumed = await tmux.waitFor(
      (s) => s.includes('Approve the QA report') && /y\s+approve/.test(s) && whole(s),
      'the QA gate of the resumed workflow',
      120_000,
    );
    // The phases done before the interrupt stay in the list, PLANNING first.
    expect(resumed).toMatch(/✓ PLANNING/);
    expect(resumed).toMatch(/✓ SPECIFICATION/);
    expect(resumed).toMatch(/✓ IMPLEMENTATION/);
    expect(resumed).toContain('2/2 verified');
    expect(headerSpent(resumed)).toBeGreaterThan(spent);
    tmux.keys('y');
    const done = await tmux.waitFor(
      (s) => s.includes('Workflow COMPLETED') && s.includes('q  quit'),
      'the end',
      120_000,
    );
    // One spend from start to end: what the header says is what the runner recorded.
    const final = workflowFile(p);
    const finalSpent = (final.cost_usd as number) - (final.unreported_usd as number);
    // In full or, on a narrower header, shortly ("$0.3300 + $1.50 held (1 unknown)/$50.00").
    expect(headerSpent(done)).toBeCloseTo(finalSpent, 4);
    expect(done.split('\n')[0]).toContain(`+ ${usd(held)} held`);
    expect(done.split('\n')[0]).toMatch(/\/ ?\$\d+\.\d{2}/);
    tmux.keys('q');
    await tmux.waitFor((s) => s.includes('START2_EXIT=0'), 'the end of the second ralphy start');
  }, 360_000);
});
