import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { StampedEvent } from '../../source/engine/events.js';
import { attemptScript, FILES, keyedScenario, laneSteps, lanesProject } from '../support/lanes.js';
import type { TestProject } from '../support/project.js';
import { NO, runInProcess, scriptedGates, workflowFile, YES } from '../support/workflow.js';

// Issue 19, best of N: K builders try the same task in their own worktrees; the runner lands the
// attempt its own verdict prefers (verified first, then the smallest diff), records why, and
// discards the others. Real fake-claude children, real git worktrees.

const projects: TestProject[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.dispose();
});

const ORIGINAL_A = 'export const a = 1;\n';
// A check the runner runs: src/a.ts must not say "broken" (an attempt that does fails its tick).
const SANE = {
  id: 'sane',
  cmd: 'node',
  args: ['-e', "process.exit(require('fs').readFileSync('src/a.ts', 'utf8').includes('broken') ? 1 : 0)"],
};
const SMALL = 'export const alpha = 1;\n';
const LARGE = 'export const alpha = 1;\nexport const alpha2 = 2;\nexport const alpha3 = 3;\n';
const BROKEN = "export const alpha = 'broken';\n";

function bestOfProject(configure: (config: any) => void = () => {}) {
  const project = lanesProject((config) => {
    config.verification.templates.push(SANE);
    config.workflow.max_ticks_per_task = 1;
    configure(config);
  });
  projects.push(project);
  return project;
}

function decided(events: StampedEvent[]) {
  return events.flatMap((e) => (e.type === 'attempts.decided' ? [e] : []));
}

/** [start, end] event indexes of every tick, by lane. */
function tickSpans(events: StampedEvent[]): Array<[string, number, number]> {
  const open = new Map<string, number>();
  const spans: Array<[string, number, number]> = [];
  events.forEach((e, i) => {
    if (!e.lane) return;
    if (e.type === 'run.started') open.set(e.lane, i);
    if (e.type === 'tick.finished') spans.push([e.lane, open.get(e.lane) ?? -1, i]);
  });
  return spans;
}

describe('best of N', () => {
  it('a task marked Risk: high gets workflow.best_of attempts; the one that passes the checks lands, the one that fails them does not, whatever it claimed', async () => {
    const project = bestOfProject((config) => {
      config.workflow.best_of = 2;
    });
    // Attempt 2 changes less, but its tick fails the runner's check: the verdict comes first.
    project.scenario(
      keyedScenario([{ risk: 'high' }], {
        ...attemptScript(0, 1, 2, LARGE, { verify: ['sane'] }),
        ...attemptScript(0, 2, 2, BROKEN, { verify: ['sane'], claim: 'done, all tests pass' }),
      }) as any,
    );
    const run = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: NO }) });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'rejected_at_qa' });
    expect(project.read(FILES[0])).toBe(LARGE);
    const [choice] = decided(run.events);
    expect(choice).toMatchObject({ task: 1, winner: 'task-1-1' });
    expect(choice?.reason).toMatch(
      /^task-1-1 lands: the only attempt the runner verified, 4 line\(s\) in 1 file\(s\)/,
    );
    expect(choice?.reason).toContain('task-1-2 not verified (tick_stopped');
    const task = workflowFile(project).tasks[0];
    expect(task).toMatchObject({ status: 'completed', verdict: 'verified' });
    expect(task.selection).toMatchObject({
      attempts: 2,
      winner: 'task-1-1',
      candidates: [
        { lane: 'task-1-1', verified: true, lines_changed: 4, files_changed: 1 },
        { lane: 'task-1-2', verified: false, lines_changed: null },
      ],
    });
    // The failed attempt is discarded (a winner exists): its worktree and branch are gone.
    expect(laneSteps(run.events)).toContainEqual(['task-1-2', 1, 'discarded']);
    expect(project.git('worktree', 'list').trim().split('\n')).toHaveLength(1);
    expect(project.git('branch', '--list', 'relais/lanes/*').trim()).toBe('');
    expect(project.cliSync(['worktrees', 'list']).stdout).not.toContain('task-1-');
    // Both attempts really ran, each in its own worktree, told which attempt it was.
    const orchestrators = project.calls().filter((c) => c.role === 'orchestrator');
    expect(orchestrators.map((c) => /attempt (\d) of 2/.exec(c.prompt)?.[1]).sort()).toEqual(['1', '2']);
    const builders = project.calls().filter((c: any) => c.role === 'builder') as any[];
    expect(new Set(builders.map((c) => c.cwd)).size).toBe(2);
  }, 240_000);

  it('--attempts 2: both pass, the smaller diff lands, the other is discarded; the attempts share the one budget; the PR body says why', async () => {
    const project = bestOfProject((config) => {
      // One worst-case tick ($2.30) fits beside what is spent, two do not: the attempts take turns.
      config.workflow.max_cost_usd = 3.5;
    });
    project.scenario(
      keyedScenario([{}], {
        ...attemptScript(0, 1, 2, LARGE, { verify: ['sane'] }),
        ...attemptScript(0, 2, 2, SMALL, { verify: ['sane'] }),
      }) as any,
    );
    const run = await runInProcess(project, { attempts: 2, gates: scriptedGates({ spec: YES, qa: YES }) });
    expect(run.outcome).toMatchObject({ status: 'completed', state: 'COMPLETED' });
    expect(project.read(FILES[0])).toBe(SMALL);
    const [choice] = decided(run.events);
    expect(choice).toMatchObject({ winner: 'task-1-2' });
    expect(choice?.reason).toBe(
      'task-1-2 lands: the smallest verified diff of 2, 2 line(s) in 1 file(s); discarded: task-1-1 verified, 4 line(s) in 1 file(s)',
    );
    // The loser was verified too (a candidate), then discarded: worktree and branch removed.
    const steps = laneSteps(run.events).filter(([lane]) => lane === 'task-1-1');
    expect(steps.map(([, , phase]) => phase)).toEqual(['started', 'ticking', 'candidate', 'discarded']);
    expect(existsSync(`${project.root}/relais/worktrees/task-1-1`)).toBe(false);
    expect(project.git('branch', '--list', 'relais/lanes/*').trim()).toBe('');
    // Only the winner's commit reached the branch.
    const log = project.git('log', '--format=%s');
    expect(log.match(/ralphy: task 1 completed/g)).toHaveLength(1);
    // Budget reservations cover both attempts: their ticks never overlapped under the cap.
    const spans = tickSpans(run.events).sort((a, b) => a[1] - b[1]);
    expect(spans).toHaveLength(2);
    expect(spans[1]?.[1]).toBeGreaterThan(spans[0]?.[2] ?? Number.POSITIVE_INFINITY);
    expect(run.events.some((e) => e.type === 'log' && e.lane && /waits for budget/.test(e.message))).toBe(
      true,
    );
    expect(workflowFile(project).cost_usd).toBeLessThanOrEqual(3.5);
    // The record, the PR body: the runner's reason.
    expect(workflowFile(project).tasks[0].selection).toMatchObject({
      winner: 'task-1-2',
      reason: choice?.reason,
    });
    const body = project.read('relais/PR_BODY.md');
    expect(body).toContain(`  - best of 2: ${choice?.reason}`);
  }, 240_000);

  it('ralphy start --attempts 2 where no attempt passes: the task fails honestly, nothing lands, every attempt is kept', async () => {
    const project = bestOfProject();
    project.scenario(
      keyedScenario([{}], {
        ...attemptScript(0, 1, 2, BROKEN, { verify: ['sane'], claim: 'done' }),
        ...attemptScript(0, 2, 2, `${BROKEN}// twice\n`, { verify: ['sane'], claim: 'done' }),
      }) as any,
    );
    const run = await project.cli(['start', '--attempts', '2', '--yes', '--json'], {
      env: { IS_SANDBOX: '1' },
    }).done;
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const workflow = workflowFile(project);
    expect(workflow).toMatchObject({ state: 'FAILED', failure_reason: 'tick_stopped' });
    expect(workflow.failure_detail).toContain('task 1: none of the 2 attempts was verified by the runner');
    expect(workflow.tasks[0]).toMatchObject({ status: 'in_progress', verdict: 'rejected' });
    expect(workflow.tasks[0].selection).toMatchObject({ attempts: 2, winner: null });
    expect(project.read(FILES[0])).toBe(ORIGINAL_A);
    const events = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(events.find((e) => e.type === 'attempts.decided')).toMatchObject({ task: 1, winner: null });
    // No winner: each attempt is kept for a human, as any failed lane.
    const list = project.cliSync(['worktrees', 'list']);
    expect(list.stdout.match(/ kept /g)).toHaveLength(2);
  }, 240_000);

  it('--attempts outside 1 to 8 is a usage error', () => {
    const project = bestOfProject();
    const bad = project.cliSync(['start', '--attempts', '9']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('ralphy start: --attempts needs a whole number from 1 to 8 (got 9)');
    expect(project.exists('relais/WORKFLOW.json')).toBe(false);
  });
});
