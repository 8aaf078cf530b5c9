import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, type TestProject, task } from '../support/project.js';
import { TmuxSession } from '../support/tmux.js';
import { happyScenario, qaStep, workflowFile, workflowProject } from '../support/workflow.js';

// Issue 16 items 3 and 5 in a real terminal (120×40, fake claude):
// - item 3: Verifications and Blast radius follow the implementation tick by tick (each builder
//   is held at work by the test, so every in-between screen is read, not raced); at the QA gate
//   Blast radius shows the whole branch; the count on screen is what the runner's reports say ran;
// - item 5: at the QA gate `v` opens QA_REPORT.md and the branch diff; `n` with a reason, and the
//   resumed QA agent's prompt carries that reason.

let tmux: TmuxSession | null = null;
let project: TestProject | null = null;
afterEach(() => {
  tmux?.kill();
  tmux = null;
  project?.dispose();
  project = null;
});

const interactive = (env: NodeJS.ProcessEnv) => ({
  ...env,
  CI: undefined,
  CONTINUOUS_INTEGRATION: undefined,
  TERM: 'xterm-256color',
  IS_SANDBOX: '1',
});

const implementing = (target: string) =>
  task({
    task_id: target === 'src/a.ts' ? 'T1' : 'T2',
    intent: `Implement ${target}`,
    scope: {
      allowed_globs: [target],
      forbidden_globs: [],
      allow_new_files: false,
      allow_lockfile_changes: false,
    },
  });

/** The footer (its `a abort`) is drawn last: with it on screen the whole frame is. */
const whole = (screen: string) => /a\s+abort/.test(screen);

/** The header's first line and the right column's panel lines (at 120 columns the right starts at 48). */
const header = (screen: string) => screen.split('\n')[0] ?? '';
const right = (screen: string) =>
  screen
    .split('\n')
    .map((l) => [...l].slice(48).join(''))
    .join('\n');

/** What the runner recorded of every tick's checks: relais/history/<run>/report.json. */
function recordedChecks(p: TestProject): { ran: number; passed: number } {
  const history = join(p.root, 'relais/history');
  let ran = 0;
  let passed = 0;
  for (const run of readdirSync(history).filter((n) => /^\d{8}T/.test(n))) {
    const report = JSON.parse(readFileSync(join(history, run, 'report.json'), 'utf8'));
    for (const check of report.verification.runs) {
      ran++;
      if (check.exit_code === 0 && !check.timed_out) passed++;
    }
  }
  return { ran, passed };
}

describe('the implementation and the QA gate in a real terminal', () => {
  it('panels follow every tick; the QA gate shows the whole branch, its report and diff; a QA reason reaches the next QA agent', async () => {
    expect(TmuxSession.available(), 'tmux is required (apt-get install tmux)').toBe(true);
    const p = workflowProject((config) => {
      // `greet` fails until src/a.ts greets: tick 1's change fails it, the final tree passes it
      // (the PR phase runs every check again).
      config.verification.templates = [
        { id: 'ok', cmd: 'node', args: ['-e', 'process.exit(0)'] },
        {
          id: 'greet',
          cmd: 'node',
          args: [
            '-e',
            'process.exit(require("fs").readFileSync("src/a.ts", "utf8").includes("greet") ? 0 : 3)',
          ],
        },
      ];
    });
    project = p;
    const second = join(p.base, 'release-tick-2');
    const third = join(p.base, 'release-tick-3');
    const scenario = happyScenario();
    const a = 'export const greet = (n: string) => "Hello, " + n;\n';
    const ok = { summary: 'done', files_intended: ['src/a.ts'], commands_ran: [], notes: [] };
    // Tick 1 fails its check (rolled back); tick 2 does task 1 again, right; tick 3 does task 2.
    scenario.orchestrator = [
      { result_json: { ...implementing('src/a.ts'), verification: { fast: ['greet'], slow: [] } } },
      // A plan that failed may not be proposed again as it was: this one says what changes.
      {
        result_json: {
          ...implementing('src/a.ts'),
          intent: 'Implement src/a.ts: export greet',
          verification: { fast: ['greet'], slow: [] },
        },
      },
      { result_json: { ...implementing('src/b.ts'), verification: { fast: ['ok'], slow: [] } } },
    ];
    scenario.builder = [
      { actions: [{ write: 'src/a.ts', content: 'export const a = 2;\n' }], result_json: ok },
      { actions: [{ write: 'src/a.ts', content: a }], result_json: ok, release_file: second },
      {
        actions: [{ write: 'src/b.ts', content: 'export const bye = (n: string) => "Bye, " + n;\n' }],
        result_json: { ...ok, files_intended: ['src/b.ts'] },
        release_file: third,
      },
    ];
    scenario.qa = [qaStep(), qaStep()];
    p.scenario(scenario);
    tmux = new TmuxSession('implementation', 120, 40);
    tmux.start(
      `cd ${p.root} && node ${CLI} start; echo "START_EXIT=$?"; node ${CLI} start; echo "START2_EXIT=$?"; read -r _`,
      interactive(p.env),
    );

    await tmux.waitFor(
      (s) => s.includes('Approve the specification') && /y\s+approve/.test(s) && whole(s),
      'the spec gate',
    );
    tmux.keys('y');

    // Tick 2's builder is held: the panels show tick 1 as the runner judged it.
    const afterTick1 = await tmux.waitFor(
      (s) => header(s).includes('tick 2') && s.includes('1 run · 0 passed · 1 failed') && whole(s),
      "tick 1's results while tick 2 works",
      120_000,
    );
    expect(right(afterTick1)).toMatch(/✗ fast greet\s+exit 3/);
    expect(right(afterTick1)).toMatch(/1 file · \+1 −1 · 0 new/);
    expect(right(afterTick1)).toContain('touched: src/a.ts');
    expect(afterTick1).not.toContain('no verification run yet');
    expect(afterTick1).not.toContain('nothing judged yet');
    writeFileSync(second, '');

    const afterTick2 = await tmux.waitFor(
      (s) => header(s).includes('tick 3') && s.includes('2 run · 1 passed · 1 failed') && whole(s),
      "tick 2's results while tick 3 works",
      120_000,
    );
    expect(right(afterTick2)).toMatch(/✓ fast greet\s+exit 0/);
    expect(right(afterTick2)).toContain('touched: src/a.ts');
    expect(afterTick2).toContain('1/2 verified');
    writeFileSync(third, '');

    const atQa = await tmux.waitFor(
      (s) => s.includes('Approve the QA report') && /y\s+approve/.test(s) && whole(s),
      'the QA gate',
      120_000,
    );
    // The whole branch: both tasks' files, the spec and the report, as the pull request holds them.
    const blast = right(atQa).replace(/\s*│\s*/g, ' ');
    expect(blast).toContain('whole branch:');
    for (const path of ['src/a.ts', 'src/b.ts', 'specs/QA_REPORT.md', 'specs/SPEC.md'])
      expect(blast).toContain(path);
    // The count on screen is what the runner's reports say ran.
    const checks = recordedChecks(p);
    expect(checks).toEqual({ ran: 3, passed: 2 });
    expect(atQa).toContain(
      `${checks.ran} run · ${checks.passed} passed · ${checks.ran - checks.passed} failed`,
    );
    expect(atQa).toContain('2/2 verified');

    // Item 5: what is approved is read in full.
    tmux.keys('v');
    const report = await tmux.waitFor(
      (s) => s.includes('[specs/QA_REPORT.md]'),
      'the QA report in the viewer',
    );
    expect(report).toContain('No blocking issue. Two small functions, tested.');
    tmux.keys('Tab');
    const diffTop = await tmux.waitFor(
      (s) => s.includes('[branch diff]') && /Esc\s+back to the question/.test(s),
      'the branch diff in the viewer',
    );
    expect(diffTop).toContain('+No blocking issue. Two small functions, tested.');
    // The code is at the end of the diff: End scrolls there.
    tmux.keys('End');
    const diff = await tmux.waitFor(
      (s) => / of (\d+) ─/.test(s) && s.includes('+export const bye'),
      "the diff's end",
    );
    expect(diff).toContain('+export const greet = (n: string) => "Hello, " + n;');
    expect(diff).toContain('+export const bye = (n: string) => "Bye, " + n;');
    tmux.keys('Escape');
    await tmux.waitFor(
      (s) => !s.includes('[branch diff]') && s.includes('Approve the QA report'),
      'the question',
    );
    tmux.keys('n');
    await tmux.waitFor((s) => s.includes('Why do you reject?'), 'the reason prompt');
    tmux.keys('-l', 'cover the empty name');
    await tmux.waitFor((s) => s.includes('cover the empty name▌'), 'the reason typed');
    tmux.keys('Enter');
    await tmux.waitFor(
      (s) => s.includes('rejected_at_qa') && s.includes('q  quit'),
      'the rejected QA report',
    );
    tmux.keys('q');
    await tmux.waitFor((s) => s.includes('START_EXIT=1'), 'the end of the first ralphy start');
    expect(workflowFile(p).gate_decisions.at(-1)).toMatchObject({
      gate: 'qa',
      decision: 'reject',
      reason: 'cover the empty name',
    });

    // The second ralphy start resumes at QA: the QA agent is told why its report was rejected.
    await tmux.waitFor((s) => s.includes('Resume the failed workflow?'), 'the resume question');
    tmux.keys('y');
    await tmux.waitFor(
      (s) => s.includes('Approve the QA report') && /y\s+approve/.test(s) && whole(s),
      'the QA gate again',
    );
    const qaCalls = p.calls().filter((c) => c.role === 'qa');
    expect(qaCalls).toHaveLength(2);
    expect(qaCalls[0]?.prompt).not.toContain('cover the empty name');
    expect(qaCalls[1]?.prompt).toContain('The human rejected your QA report at the qa gate, and said why:');
    expect(qaCalls[1]?.prompt).toContain('cover the empty name');
    tmux.keys('y');
    await tmux.waitFor((s) => s.includes('Workflow COMPLETED') && s.includes('q  quit'), 'the end', 120_000);
    tmux.keys('q');
    await tmux.waitFor((s) => s.includes('START2_EXIT=0'), 'the end of the second ralphy start');
  }, 420_000);
});
