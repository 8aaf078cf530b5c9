import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killProcessesOf, liveHostPidOf, survivorsOf } from '../support/host-pid.js';
import { CLI, REPO_ROOT, type TestProject } from '../support/project.js';
import { TmuxSession } from '../support/tmux.js';
import { happyScenario, workflowFile, workflowProject } from '../support/workflow.js';

// Issue 5 in a real terminal: the full-screen app of `ralphy start` inside tmux (CI installs tmux
// in .ci/run). Keys are sent with send-keys, the screen read with capture-pane.

let tmux: TmuxSession | null = null;
let cleanup: Array<() => void> = [];
afterEach(() => {
  tmux?.kill();
  tmux = null;
  for (const fn of cleanup) fn();
  cleanup = [];
});

const PANELS = ['Phases', 'Circuit breaker', 'Tasks', 'Output', 'Verifications', 'Blast radius'];
/** Every frame of the app's spinner (and the still one tests use). */
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⠿]/;

/** The environment of an interactive user: CI unset (both names Ink reads), a real TERM. */
const interactive = (extra: Record<string, string | undefined> = {}) => ({
  CI: undefined,
  CONTINUOUS_INTEGRATION: undefined,
  TERM: 'xterm-256color',
  ...extra,
});

describe('the full-screen app in a real terminal (tmux)', () => {
  it('the offline demo: panels shown, y passes each gate, COMPLETED, then the normal screen is back', async () => {
    expect(TmuxSession.available(), 'tmux is required (apt-get install tmux)').toBe(true);
    const demoDir = mkdtempSync(join(tmpdir(), 'relais-tui-demo-'));
    cleanup.push(() => rmSync(demoDir, { recursive: true, force: true }));
    tmux = new TmuxSession('demo', 130, 42);
    tmux.start(
      `node ${join(REPO_ROOT, 'dist/demo/run-demo.js')}; echo "DEMO_EXIT=$?"; read -r _`,
      interactive({ RELAIS_DEMO_DIR: demoDir }),
    );

    // Seed 004 first: the planner's one question, answered by its number, then Ctrl-P proceeds.
    const atPlanGate = await tmux.waitFor(
      (s) => s.includes('Planner, round 1: 1 open question'),
      'the plan gate',
    );
    expect(atPlanGate).toContain('1. Should letters with accents');
    expect(atPlanGate).toMatch(/Ctrl-P\s+proceed/);
    tmux.keys('-l', '1: keep them as they are');
    // The Enter goes once the text is on screen: text and Enter in one read would be a paste.
    await tmux.waitFor((s) => s.includes('1: keep them as they are▌'), 'the answer typed');
    tmux.keys('Enter');
    await tmux.waitFor((s) => s.includes('enough to draft the spec. Proceed?'), 'the proceed gate');
    tmux.keys('C-p');

    const atSpecGate = await tmux.waitFor(
      (s) => s.includes('Approve the specification and tasks?'),
      'the spec gate',
    );
    expect(atSpecGate).toContain('plan: answered: 1: keep them as they are');
    // The demo project has no Relais config: `ralphy start` set it up itself, with init's defaults
    // (the OS sandbox on, which this machine has: the demo opts out only without bubblewrap).
    expect(tmux.written()).toContain('Initialised relais in');
    const [demoBase] = readdirSync(demoDir).filter((n) => n.startsWith('relais-demo-'));
    const config = JSON.parse(
      readFileSync(join(demoDir, demoBase as string, 'demo-project', 'relais.config.json'), 'utf8'),
    );
    expect(
      config.sandbox === 'bwrap' || config.sandbox?.mode === 'bwrap',
      JSON.stringify(config.sandbox),
    ).toBe(true);
    expect(tmux.alternateScreen()).toBe(true);
    for (const panel of PANELS) expect(atSpecGate).toContain(panel);
    expect(atSpecGate).toContain('specs/TASKS.md (2 tasks)');
    expect(atSpecGate).toContain('1. Trim and collapse spaces');
    expect(atSpecGate).toMatch(/y\s+approve\s+n\s+reject/);
    tmux.keys('y');

    const atQaGate = await tmux.waitFor(
      (s) => s.includes('Approve the QA report and open the pull request?'),
      'the QA gate',
      // Two judged ticks (each agent and check in its sandbox) and the QA agent: on a loaded 2-core
      // machine this took 2.5 minutes. A bound on the wait, not a sleep.
      240_000,
    );
    expect(atQaGate).toContain('spec: approved');
    // The task list shows what the runner verified, apart from what the agent claimed.
    // An agent's claim is ◐: only the runner's verdict is a ✓ (issue 16 item 1).
    expect(atQaGate).toMatch(/1 Trim and collapse spaces\s+agent ◐ runner ✓/);
    expect(atQaGate).toContain('2/2 verified');
    tmux.keys('y');

    const done = await tmux.waitFor(
      (s) => s.includes('Workflow COMPLETED') && s.includes('q  quit'),
      'the result',
    );
    expect(done).toContain('qa: approved');
    expect(tmux.alternateScreen()).toBe(true);
    tmux.keys('q');

    const after = await tmux.waitFor((s) => s.includes('DEMO_EXIT='), 'the end of the demo');
    expect(after).toContain('DEMO_EXIT=0');
    expect(tmux.alternateScreen()).toBe(false);
    // The summary is printed on the normal screen after the app left it, without any panel.
    expect(after).toContain('Workflow COMPLETED');
    expect(after).toContain('Workflow:  "Slugify titles" COMPLETED');
    expect(after).not.toContain('╭─ Phases');
    expect(tmux.cursorVisible()).toBe(true);
  }, 360_000);

  it('a SIGTERM while the final screen shows: it leaves at once, the summary on the normal screen', async () => {
    expect(TmuxSession.available(), 'tmux is required (apt-get install tmux)').toBe(true);
    const project: TestProject = workflowProject();
    cleanup.push(() => project.dispose());
    project.scenario(happyScenario());
    tmux = new TmuxSession('sigterm', 120, 40);
    const env = interactive({ ...project.env, CI: undefined, IS_SANDBOX: '1' });
    tmux.start(`cd ${project.root} && node ${CLI} start --yes; echo "START_EXIT=$?"; read -r _`, env);

    await tmux.waitFor((s) => s.includes('Workflow COMPLETED') && s.includes('q  quit'), 'the final screen');
    // As `kill` from another shell would: the work is over, so nothing is left to abort.
    process.kill(tmux.programPid(), 'SIGTERM');

    const after = await tmux.waitFor((s) => s.includes('START_EXIT='), 'the end of ralphy start');
    expect(after).toContain('START_EXIT=0');
    expect(tmux.alternateScreen()).toBe(false);
    expect(tmux.cursorVisible()).toBe(true);
    expect(after).toContain('Workflow COMPLETED');
    expect(after).not.toContain('╭─ Phases');
  });

  it.each([
    ['the app', {}],
    ['plain lines', { CI: '1' }],
  ])(
    'closing the terminal during implementation (%s): the agent gone, rolled back, the lock released',
    async (_, extra) => {
      const project = hangingBuilderProject();
      // The shell outlives the hang-up (a trap, which the program does not inherit) to record how
      // the program ended: nothing else can be seen once the terminal is gone. With that trap it
      // does not pass the SIGHUP on as a login shell would: the test does.
      const ended = join(project.base, 'ended');
      tmux = new TmuxSession('hangup', 120, 40);
      const env = interactive({ ...project.env, CI: undefined, IS_SANDBOX: '1', ...extra });
      tmux.start(`trap 'true' HUP; cd ${project.root} && node ${CLI} start --yes; echo "$?" > ${ended}`, env);
      await tmux.waitFor((s) => s.includes('Working on it.'), 'the builder at work');
      // Its host pid: the pid it wrote is its sandbox's (test/support/host-pid.ts).
      const builder = liveHostPidOf(project.scenarioPath, 'builder');
      cleanup.push(() => killProcessesOf(project.scenarioPath));

      const program = tmux.programPid();
      tmux.kill(); // the terminal closes: every write to it fails from now on
      tmux = null;
      process.kill(program, 'SIGHUP');
      await fileWritten(ended, 'the end of ralphy start');
      expect(readFileSync(ended, 'utf8').trim()).toBe('130'); // interrupted, not killed (129) or aborted (134)

      expect(survivorsOf(project.scenarioPath)).not.toContain(builder);
      expect(project.exists('relais/lock.json')).toBe(false);
      expect(project.status()).toBe('');
      // Stopped, not failed: the next ralphy start resumes it.
      expect(workflowFile(project)).toMatchObject({ state: 'IMPLEMENTATION' });
    },
  );

  it('a, then y, during implementation: the agent is gone, FAILED (aborted), the terminal restored', async () => {
    const project = hangingBuilderProject();
    tmux = new TmuxSession('abort', 120, 40);
    const env = interactive({ ...project.env, CI: undefined, IS_SANDBOX: '1' });
    tmux.start(`cd ${project.root} && node ${CLI} start; echo "START_EXIT=$?"; read -r _`, env);

    await tmux.waitFor((s) => s.includes('Approve the specification and tasks?'), 'the spec gate');
    tmux.keys('y');
    const working = await tmux.waitFor((s) => s.includes('Working on it.'), 'the builder at work');
    expect(working).toContain('IMPLEMENTATION');
    const builder = liveHostPidOf(project.scenarioPath, 'builder');
    cleanup.push(() => killProcessesOf(project.scenarioPath));
    tmux.keys('a');
    // The footer's own "a abort" already matches /abort/: wait for the question itself, or `a`
    // and `y` could reach the app in one read, which it takes for a paste.
    await tmux.waitFor((s) => s.includes('Abort the running work?'), 'the abort confirmation');
    tmux.keys('y');

    const failed = await tmux.waitFor(
      (s) => s.includes('q  quit') && s.includes('aborted'),
      'the aborted result',
    );
    expect(failed).toContain('FAILED');
    // Issue 16 item 6: the abort is named as it happened (the key, not `ralphy abort`), and once
    // FAILED the header no longer says ABORTING and nothing spins.
    expect(failed).toContain('aborted by the abort key (a) in the app');
    expect(failed).not.toContain('ralphy abort');
    const head = failed.split('\n')[0] ?? '';
    expect(head).toContain('FAILED');
    expect(head).not.toContain('ABORTING');
    expect(failed).not.toMatch(SPINNER);
    expect(failed).not.toContain('aborting…');
    expect(survivorsOf(project.scenarioPath)).not.toContain(builder);
    expect(workflowFile(project)).toMatchObject({ state: 'FAILED', failure_reason: 'aborted' });
    tmux.keys('q');

    const after = await tmux.waitFor((s) => s.includes('START_EXIT='), 'the end of ralphy start');
    expect(after).toContain('START_EXIT=1');
    expect(tmux.alternateScreen()).toBe(false);
    expect(tmux.cursorVisible()).toBe(true);
    expect(after).toContain('Workflow FAILED (reason: aborted)');
    expect(project.status()).toBe('');
  });

  it('Ctrl-C during implementation: the agent gone, the workflow interrupted (resumable), the terminal restored', async () => {
    const project = hangingBuilderProject();
    tmux = new TmuxSession('ctrl-c', 120, 40);
    const env = interactive({ ...project.env, CI: undefined, IS_SANDBOX: '1' });
    tmux.start(`cd ${project.root} && node ${CLI} start --yes; echo "START_EXIT=$?"; read -r _`, env);

    const working = await tmux.waitFor((s) => s.includes('Working on it.'), 'the builder at work');
    expect(working).toContain('IMPLEMENTATION');
    expect(tmux.cursorVisible()).toBe(false);
    const builder = liveHostPidOf(project.scenarioPath, 'builder');
    cleanup.push(() => killProcessesOf(project.scenarioPath));
    // The terminal is in raw mode: Ctrl-C reaches the app as a key, not as a signal from the tty.
    tmux.keys('C-c');

    // Asked to stop, the app leaves at once: no q needed.
    const after = await tmux.waitFor((s) => s.includes('START_EXIT='), 'the end of ralphy start');
    expect(after).toContain('START_EXIT=130');
    // Issue 16 item 6: while it stopped, the app said it was a resumable interrupt, never
    // "aborting" (what it wrote to the terminal is all in the pane's log).
    const written = tmux.written();
    expect(written).toContain('STOPPING (resumable)');
    expect(written).toContain('stopping… ralphy start resumes');
    expect(written).not.toMatch(/ABORTING|aborting…/);
    expect(tmux.alternateScreen()).toBe(false);
    expect(tmux.cursorVisible()).toBe(true);
    expect(after).not.toContain('╭─ Phases');
    // The summary on the normal screen: where it stopped and how to go on.
    expect(after).toContain('Workflow stopped at IMPLEMENTATION (interrupted, resumable: ralphy start)');
    expect(after).toContain('it asks to resume at IMPLEMENTATION');
    expect(survivorsOf(project.scenarioPath)).not.toContain(builder);
    expect(project.exists('relais/lock.json')).toBe(false);
    expect(project.status()).toBe('');
    // Interrupted, not failed: the next ralphy start offers to resume it.
    expect(workflowFile(project)).toMatchObject({ state: 'IMPLEMENTATION', status: 'interrupted' });
  });

  it('stdout redirected to a file from a real terminal: plain lines, no escape code, no alternate screen', async () => {
    expect(TmuxSession.available(), 'tmux is required (apt-get install tmux)').toBe(true);
    const project: TestProject = workflowProject();
    cleanup.push(() => project.dispose());
    project.scenario(happyScenario());
    const out = join(project.base, 'start.out');
    tmux = new TmuxSession('redirect', 120, 40);
    const env = interactive({ ...project.env, CI: undefined, IS_SANDBOX: '1' });
    tmux.start(
      `cd ${project.root} && node ${CLI} start --yes > ${out}; echo "START_EXIT=$?"; read -r _`,
      env,
    );

    // Sampled at every write to the terminal: the alternate screen is never entered.
    let alternate = false;
    const after = await tmux.waitFor((s) => {
      alternate ||= tmux?.alternateScreen() ?? false;
      return s.includes('START_EXIT=');
    }, 'the end of ralphy start');
    expect(after).toContain('START_EXIT=0');
    expect(alternate).toBe(false);
    expect(tmux.written()).not.toContain('\u001b[?1049h');
    expect(tmux.cursorVisible()).toBe(true);
    const file = readFileSync(out, 'utf8');
    expect(file).not.toContain('\u001b');
    expect(file).toMatch(/^\[\d\d:\d\d:\d\d\] /m);
    expect(file).toContain('Workflow COMPLETED');
  });
});

/** Resolves once `path` exists and is not empty (a watch on its directory, not a timer). */
/** The happy demo project whose builder writes half a file, says so, then hangs until killed. */
function hangingBuilderProject(): TestProject {
  expect(TmuxSession.available(), 'tmux is required (apt-get install tmux)').toBe(true);
  const project = workflowProject();
  cleanup.push(() => project.dispose());
  const scenario = happyScenario();
  scenario.builder = [
    { actions: [{ write: 'src/a.ts', content: 'half\n' }], say: 'Working on it.', hang: true },
  ];
  project.scenario(scenario);
  return project;
}

function fileWritten(path: string, what: string, timeoutMs = 60_000): Promise<void> {
  const written = () => existsSync(path) && readFileSync(path, 'utf8') !== '';
  if (written()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const watcher = watch(dirname(path), () => {
      if (!written()) return;
      clearTimeout(timer);
      watcher.close();
      resolve();
    });
    const timer = setTimeout(() => {
      watcher.close();
      reject(new Error(`never saw ${what} (${path})`));
    }, timeoutMs);
  });
}
