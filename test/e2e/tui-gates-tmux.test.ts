import { afterEach, describe, expect, it } from 'vitest';
import { CLI, type TestProject } from '../support/project.js';
import { TmuxSession } from '../support/tmux.js';
import { happyScenario, workflowFile, workflowProject } from '../support/workflow.js';

// Issue 16 items 4, 5, 10 and 11 in a real terminal at 80×24 (the default size): the spec gate
// with every workflow panel in its compact form and a header that keeps phase, elapsed and cost;
// `v` reads SPEC.md and TASKS.md in full; `?` lists the keys; only the clock is redrawn while
// nothing else changes; `l` reads the spec agent's run from history and `o` shows all the output;
// `n` asks why, and the reason lands in WORKFLOW.json.

let tmux: TmuxSession | null = null;
let project: TestProject | null = null;
afterEach(() => {
  tmux?.kill();
  tmux = null;
  project?.dispose();
  project = null;
});

const interactive = (extra: Record<string, string | undefined>) => ({
  CI: undefined,
  CONTINUOUS_INTEGRATION: undefined,
  TERM: 'xterm-256color',
  ...extra,
});

const stopwatchOf = (screen: string) => /· (\d\d):(\d\d) ·/.exec(screen.split('\n')[0] ?? '');
const seconds = (screen: string) => {
  const m = stopwatchOf(screen);
  return m ? Number(m[1]) * 60 + Number(m[2]) : null;
};

describe('a gate at 80×24 (tmux)', () => {
  it('compact panels, the documents in full, the keys, an idle screen, and a reject with its reason', async () => {
    expect(TmuxSession.available(), 'tmux is required (apt-get install tmux)').toBe(true);
    project = workflowProject();
    project.scenario(happyScenario());
    tmux = new TmuxSession('gates', 80, 24);
    tmux.start(
      `cd ${project.root} && node ${CLI} start; echo "START_EXIT=$?"; read -r _`,
      interactive({ ...project.env, CI: undefined, CONTINUOUS_INTEGRATION: undefined, IS_SANDBOX: '1' }),
    );
    // The footer is drawn last: with it on screen the whole frame is.
    const atGate = await tmux.waitFor(
      (s) => s.includes('Approve the specification') && /a\s+abort/.test(s),
      'the spec gate',
    );
    const header = atGate.split('\n')[0] ?? '';
    expect(header).toContain('AWAITING_SPEC_VALIDATION');
    expect(stopwatchOf(atGate)).not.toBeNull();
    expect(header).toMatch(/\$\d+\.\d+/);
    for (const panel of ['Phases', 'Output']) expect(atGate).toContain(panel);
    expect(atGate).toMatch(/✓ spec\s+◆|✓ spec\s+\S spec gate/);
    expect(atGate).toContain('read in full: specs/SPEC.md, specs/TASKS.md');
    expect(atGate).toMatch(/y\s+approve\s+n\s+reject/);

    // Item 10, issue 17: at a gate with nothing at work nothing is redrawn, not even the clock.
    // Absence has no event to await: the pty is watched for three seconds, in which the old clock
    // drew three frames (2,801 bytes each at 80×24: one frame is what Ink rewrites on any change).
    // One frame is allowed for a late event of the engine's; a clock a second would be three.
    const before = tmux.written().length;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(tmux.written().length - before).toBeLessThan(3_400);
    // The stopwatch shows the gate's opening until the next redraw, which shows the time of now.
    const start = seconds(tmux.screen()) ?? 0;
    tmux.keys('v');
    const spec = await tmux.waitFor((s) => s.includes('[specs/SPEC.md]'), 'SPEC.md in the viewer');
    expect(spec).toContain('Two functions: greet and bye.');
    tmux.keys('Tab');
    const tasks = await tmux.waitFor((s) => s.includes('[specs/TASKS.md]'), 'TASKS.md in the viewer');
    expect(tasks).not.toContain('Two functions: greet and bye.');
    tmux.keys('Escape');
    const again = await tmux.waitFor(
      (s) => !s.includes('[specs/TASKS.md]') && s.includes('Approve the specification'),
      'the question again',
    );
    expect(seconds(again)).toBeGreaterThanOrEqual(start + 3);

    tmux.keys('?');
    const help = await tmux.waitFor((s) => s.includes('any key closes this list'), 'the list of keys');
    expect(help).toContain('reject (asks why first');
    expect(help).toMatch(/v\s+read specs\/SPEC\.md, specs\/TASKS\.md in full/);
    tmux.keys('x');
    await tmux.waitFor((s) => !s.includes('any key closes this list'), 'the list closed');

    // Item 11: the spec agent's run, read from its transcript in relais/history/agents.
    tmux.keys('l');
    const runs = await tmux.waitFor((s) => /Agent runs.*1 kept/.test(s), 'the list of agent runs');
    expect(runs).toMatch(/› \d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}spec/);
    tmux.keys('Enter');
    const transcript = await tmux.waitFor((s) => s.includes('── finished in'), 'the spec transcript');
    expect(transcript).toContain('Writing the specification.');
    expect(transcript).toMatch(/\[relais\/history\/agents\/\d{8}T\d{6}Z-[0-9a-f]{6}-spec\.log\]/);
    tmux.keys('Escape');
    await tmux.waitFor((s) => s.includes('Agent runs') && !s.includes('── finished in'), 'the list again');
    tmux.keys('Escape');
    await tmux.waitFor((s) => s.includes('Approve the specification'), 'the question again');
    tmux.keys('o');
    const all = await tmux.waitFor((s) => s.includes('All output'), 'all the output');
    expect(all).toContain('▶ AWAITING_SPEC_VALIDATION');
    tmux.keys('Escape');
    await tmux.waitFor(
      (s) => !s.includes('All output') && s.includes('Approve the specification'),
      'the panels',
    );

    tmux.keys('n');
    await tmux.waitFor((s) => s.includes('Why do you reject?'), 'the reason prompt');
    tmux.keys('-l', 'say which locale');
    await tmux.waitFor((s) => s.includes('say which locale▌'), 'the reason typed');
    tmux.keys('Enter');
    const end = await tmux.waitFor((s) => s.includes('REJECTED') && s.includes('q  quit'), 'the end');
    expect(end).toContain('spec gate: rejected: say which locale');
    tmux.keys('q');
    const after = await tmux.waitFor((s) => s.includes('START_EXIT='), 'the end of ralphy start');
    expect(after).toContain('START_EXIT=1');
    expect(workflowFile(project).gate_decisions.at(-1)).toMatchObject({
      gate: 'spec',
      decision: 'reject',
      by: 'human',
      reason: 'say which locale',
    });
  }, 180_000);
});
