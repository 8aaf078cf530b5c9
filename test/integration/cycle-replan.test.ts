import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PlannedTask } from '../../source/engine/cycle/blocks.js';
import { cycleRemediation } from '../../source/engine/cycle/codes.js';
import { resumeCycle } from '../../source/engine/cycle/status.js';
import { cycleStatusLines } from '../../source/engine/cycle/status-lines.js';
import { runCycleTrack } from '../../source/engine/cycle/track-runner.js';
import {
  CycleRepo,
  phaseComplete,
  plan,
  scripted,
  spec,
  track,
  verdict,
  writes,
} from '../support/cycle-project.js';

// Seed 003 generate_task hard stops (REPLAN_REQUIRED, REQUEST_SPLIT) and their way out: `relais
// cycle --resume` sends the track back to create_plan, the planner re-plans what is left.

let repo: CycleRepo;
afterEach(() => repo?.dispose());

const GOOD = "module.exports = (name) => 'Hello, ' + name;\n// greeted\n";
const PLAN_JSON = 'relais/cycle/tracks/greet/plan.json';
const add = (path: string) => `- path=${path} action=add rationale="new module"`;

function planFile(): {
  firstTask: number;
  done?: Array<{ n: number; taskId: string; title: string }>;
  tasks: Array<{ taskId: string }>;
} {
  return JSON.parse(repo.read(PLAN_JSON));
}

describe('REQUEST_SPLIT, then --resume: the track is re-planned and goes on', () => {
  it('task 2 of 2 asks for a split: resume re-plans the rest (told why), task 1 stays done, the track completes with 3 tasks', async () => {
    repo = await CycleRepo.create();
    const reusesT1 = plan([{ id: 'T1', files: add('src/farewell.js') }]);
    const split = plan([
      { id: 'T2a', files: add('src/farewell.js') },
      { id: 'T2b', files: add('src/bye.js') },
    ]);
    const { runners, calls } = scripted({
      planner: [
        track(),
        spec(),
        plan([{ id: 'T1' }, { id: 'T2', files: add('src/farewell.js') }]),
        reusesT1,
        split,
        phaseComplete,
      ],
      implementer: [
        writes({ 'src/greet.js': GOOD }),
        writes(
          { 'src/farewell.js': 'half\n' },
          'Too big.\nREQUEST_SPLIT=true farewell needs a module and its tests',
        ),
        writes({ 'src/farewell.js': "module.exports = () => 'Goodbye';\n" }),
        writes({ 'src/bye.js': "module.exports = () => 'bye';\n" }),
      ],
      verifier: verdict('YES'),
    });
    const upToSplit = await repo.cycles(runners, (o) => o.phase === 'needs_human', 12);
    expect(upToSplit.at(-1)).toMatchObject({ action: 'implement_task', code: 'CYCLE_REQUEST_SPLIT' });
    // The half-done work, a new file, is in the stash and out of the tree.
    expect(repo.status()).toBe('');
    expect(repo.git('stash', 'show', '--include-untracked', '--name-only', 'stash@{0}').trim()).toBe(
      'src/farewell.js',
    );
    expect(repo.state()).toMatchObject({
      track: { task_current: 2, task_count: 2 },
      last_good: { task_id: 'T1' },
      needs_human: { code: 'CYCLE_REQUEST_SPLIT', remediation: cycleRemediation('CYCLE_REQUEST_SPLIT') },
    });
    expect(cycleRemediation('CYCLE_REQUEST_SPLIT')).toContain(
      'Run `relais cycle --resume`: the track goes back to create_plan',
    );

    // --resume: back to create_plan (select-track without a plan), the reason kept for the planner.
    expect(await resumeCycle(repo.root, 'relais')).toEqual({ ok: true, phase: 'select-track' });
    expect(repo.state()).toMatchObject({
      phase: 'select-track',
      needs_human: null,
      track: { id: 'greet', status: 'in-progress', plan_path: null, task_current: 2 },
      task: { id: null, sub_step: null, retry_count: 0 },
    });
    expect(repo.state().track.replan_reason).toContain(
      'CYCLE_REQUEST_SPLIT: the implementer signalled REQUEST_SPLIT: farewell needs a module and its tests',
    );
    expect((await cycleStatusLines(repo.root, 'relais')).join('\n')).toContain(
      'Re-plan of track greet pending: CYCLE_REQUEST_SPLIT',
    );

    const replanned = await repo.cycle(runners);
    expect(replanned).toMatchObject({ action: 'create_plan', reply: 'CYCLE_OK' });
    expect(replanned.details).toContain('(2 task(s), after the 1 done)');
    const planner = calls.filter((c) => c.role === 'planner').map((c) => c.request.userPrompt);
    const prompt = planner[3] ?? '';
    expect(prompt).toContain(
      'RE-PLAN: the previous plan of this track stopped: CYCLE_REQUEST_SPLIT: the implementer signalled REQUEST_SPLIT',
    );
    expect(prompt).toContain('Done and verified, keep them out of this plan: task 1: T1 "Task T1".');
    expect(prompt).toContain('The previous plan\'s remaining tasks were: T2 "Task T2".');
    // A plan that does task 1 again is refused (format repair), the next one taken.
    expect(planner[4]).toContain('task(s) T1 are already done: plan only the remaining work');
    expect(repo.state()).toMatchObject({
      phase: 'execute',
      track: { task_current: 2, task_count: 3, replan_reason: null },
      task: { sub_step: 'generate' },
    });
    expect(planFile()).toMatchObject({ firstTask: 2, tasks: [{ taskId: 'T2a' }, { taskId: 'T2b' }] });
    expect(repo.read('specs/tracks/greet/PLAN.md')).toContain('## Task 2: T2a');

    const rest = await repo.cycles(runners, (o) => o.reply === 'DONE', 12);
    expect(rest.map((o) => o.action)).toEqual([
      'generate_task',
      'implement_task',
      'verify_task',
      'reflect',
      'generate_task',
      'implement_task',
      'verify_task',
      'reflect',
      'pick_track',
      'summarize',
    ]);
    expect(rest[3]?.details).toBe('T2a done; next task 3 of 3');
    expect(repo.state().tracks_completed).toMatchObject([{ id: 'greet', tasks: 3 }]);
    // Task 1 keeps its packet; the new tasks get the next numbers.
    expect(repo.read('specs/tracks/greet/tasks/TASK_001.md')).toContain('# TASK — T1');
    expect(repo.read('specs/tracks/greet/tasks/TASK_002.md')).toContain('# TASK — T2a');
    expect(repo.read('specs/tracks/greet/tasks/TASK_003.md')).toContain('# TASK — T2b');
    expect(repo.subjects()).toContain('relais(greet): re-plan');
    expect(repo.git('stash', 'list')).toContain('T2 stopped with REQUEST_SPLIT');
    expect(repo.status()).toBe('');
  });
});

describe('a second re-plan still knows the tasks done before the first one', () => {
  it('split twice: the second planner is told task 1 and task 2 are done, and a plan reusing T1 is refused', async () => {
    repo = await CycleRepo.create();
    const { runners, calls } = scripted({
      planner: [
        track(),
        spec(),
        plan([{ id: 'T1' }, { id: 'T2', files: add('src/farewell.js') }]),
        plan([
          { id: 'T2a', files: add('src/farewell.js') },
          { id: 'T2b', files: add('src/bye.js') },
        ]),
        plan([{ id: 'T1', files: add('src/bye.js') }]),
        plan([{ id: 'T2c', files: add('src/bye.js') }]),
      ],
      implementer: [
        writes({ 'src/greet.js': GOOD }),
        writes({ 'src/farewell.js': 'half\n' }, 'REQUEST_SPLIT=true farewell is too big'),
        writes({ 'src/farewell.js': "module.exports = () => 'Goodbye';\n" }),
        writes({ 'src/bye.js': 'half\n' }, 'REQUEST_SPLIT=true bye is too big'),
        writes({ 'src/bye.js': "module.exports = () => 'bye';\n" }),
      ],
      verifier: verdict('YES'),
    });
    const split = (o: { code: string | null }) => o.code === 'CYCLE_REQUEST_SPLIT';
    expect((await repo.cycles(runners, split, 12)).at(-1)).toMatchObject({ action: 'implement_task' });
    expect(await resumeCycle(repo.root, 'relais')).toEqual({ ok: true, phase: 'select-track' });
    expect(await repo.cycle(runners)).toMatchObject({ action: 'create_plan', reply: 'CYCLE_OK' });
    expect(planFile()).toMatchObject({ firstTask: 2, done: [{ n: 1, taskId: 'T1', title: 'Task T1' }] });

    // T2a verified, T2b asks for a split: the second re-plan.
    expect((await repo.cycles(runners, split, 12)).at(-1)).toMatchObject({ action: 'implement_task' });
    expect(repo.state().track).toMatchObject({ task_current: 3, task_count: 3 });
    expect(await resumeCycle(repo.root, 'relais')).toEqual({ ok: true, phase: 'select-track' });
    const replanned = await repo.cycle(runners);
    expect(replanned).toMatchObject({ action: 'create_plan', reply: 'CYCLE_OK' });
    expect(replanned.details).toContain('(1 task(s), after the 2 done)');
    const planner = calls.filter((c) => c.role === 'planner').map((c) => c.request.userPrompt);
    expect(planner[4]).toContain(
      'Done and verified, keep them out of this plan: task 1: T1 "Task T1"; task 2: T2a "Task T2a".',
    );
    expect(planner[4]).not.toContain('not in the plan file any more');
    expect(planner[4]).toContain('The previous plan\'s remaining tasks were: T2b "Task T2b".');
    // T1 was verified under the first plan: reusing its id is still refused (format repair).
    expect(planner[5]).toContain('task(s) T1 are already done: plan only the remaining work');
    expect(planFile()).toMatchObject({
      firstTask: 3,
      done: [
        { n: 1, taskId: 'T1', title: 'Task T1' },
        { n: 2, taskId: 'T2a', title: 'Task T2a' },
      ],
      tasks: [{ taskId: 'T2c' }],
    });
    const planMd = repo.read('specs/tracks/greet/PLAN.md');
    expect(planMd).toContain('- Task 1: T1 — Task T1\n- Task 2: T2a — Task T2a');
    expect(planMd).toContain('## Task 3: T2c');

    const rest = await repo.cycles(runners, (o) => o.action === 'reflect', 6);
    expect(rest.at(-1)?.details).toBe('T2c done; track greet complete');
    expect(repo.state().tracks_completed).toMatchObject([{ id: 'greet', tasks: 3 }]);
  });

  it('a plan.json written before the done tasks were kept (no "done") still loads, and a re-plan says what it lacks', async () => {
    repo = await CycleRepo.create();
    const { runners, calls } = scripted({
      planner: [
        track(),
        spec(),
        plan([{ id: 'T1' }, { id: 'T2', files: add('src/farewell.js') }]),
        plan([{ id: 'T2a', files: add('src/farewell.js') }]),
      ],
      implementer: [
        writes({ 'src/greet.js': GOOD }),
        writes({ 'src/farewell.js': 'half\n' }, 'REQUEST_SPLIT=true too big'),
      ],
      verifier: verdict('YES'),
    });
    await repo.cycles(runners, (o) => o.action === 'create_plan', 6);
    // As an older relais wrote it: firstTask 2 after a re-plan, no list of the done tasks.
    const legacy = JSON.parse(repo.read(PLAN_JSON));
    delete legacy.done;
    repo.write(PLAN_JSON, JSON.stringify(legacy));
    expect(await repo.cycle(runners)).toMatchObject({ action: 'generate_task', reply: 'CYCLE_OK' });
    await repo.cycles(runners, (o) => o.code === 'CYCLE_REQUEST_SPLIT', 8);
    legacy.firstTask = 2;
    legacy.tasks = legacy.tasks.slice(1);
    repo.write(PLAN_JSON, JSON.stringify(legacy));
    expect(await resumeCycle(repo.root, 'relais')).toEqual({ ok: true, phase: 'select-track' });
    expect(await repo.cycle(runners)).toMatchObject({ action: 'create_plan', reply: 'CYCLE_OK' });
    const prompt = calls.filter((c) => c.role === 'planner')[3]?.request.userPrompt ?? '';
    expect(prompt).toContain(
      'Done and verified, keep them out of this plan: task 1: not in the plan file any more.',
    );
    expect(planFile()).toMatchObject({ firstTask: 2, done: [], tasks: [{ taskId: 'T2a' }] });
  });
});

describe('REPLAN_REQUIRED, then --resume: the track is re-planned and goes on', () => {
  it('a planned modify target that does not exist: resume re-plans from the spec, told which file', async () => {
    repo = await CycleRepo.create();
    const { runners, calls } = scripted({
      planner: [
        track(),
        spec(),
        plan([{ id: 'T1', files: '- path=src/missing.js action=modify rationale="x"' }]),
        plan([{ id: 'T1', files: add('src/missing.js') }]),
      ],
      implementer: [writes({ 'src/missing.js': 'module.exports = 1;\n' })],
      verifier: verdict('YES'),
    });
    const stop = await repo.cycles(runners, (o) => o.phase === 'needs_human', 6);
    expect(stop.at(-1)).toMatchObject({ action: 'generate_task', code: 'CYCLE_REPLAN_REQUIRED' });
    expect(await resumeCycle(repo.root, 'relais')).toEqual({ ok: true, phase: 'select-track' });
    const rest = await repo.cycles(runners, (o) => o.action === 'reflect', 6);
    expect(rest.map((o) => `${o.action}:${o.reply}`)).toEqual([
      'create_plan:CYCLE_OK',
      'generate_task:CYCLE_OK',
      'implement_task:CYCLE_OK',
      'verify_task:CYCLE_OK',
      'reflect:CYCLE_OK',
    ]);
    const prompt = calls.filter((c) => c.role === 'planner')[3]?.request.userPrompt ?? '';
    expect(prompt).toContain(
      'RE-PLAN: the previous plan of this track stopped: CYCLE_REPLAN_REQUIRED: REPLAN_REQUIRED: src/missing.js (modify) does not exist at HEAD',
    );
    expect(prompt).toContain('No task of this track is done yet.');
    expect(repo.state()).toMatchObject({
      phase: 'select-track',
      tracks_completed: [{ id: 'greet', tasks: 1 }],
    });
  });

  it('a deleted plan file is REPLAN_REQUIRED (never CYCLE_INTERNAL); resume writes a new plan', async () => {
    repo = await CycleRepo.create();
    const { runners } = scripted({
      planner: [track(), spec(), plan([{ id: 'T1' }]), plan([{ id: 'T1' }])],
    });
    await repo.cycles(runners, (o) => o.action === 'create_plan', 6);
    rmSync(join(repo.root, PLAN_JSON));
    const out = await repo.cycle(runners);
    expect(out).toMatchObject({
      action: 'generate_task',
      phase: 'needs_human',
      code: 'CYCLE_REPLAN_REQUIRED',
    });
    expect(out.details).toBe(`${PLAN_JSON} is missing`);
    expect(await resumeCycle(repo.root, 'relais')).toEqual({ ok: true, phase: 'select-track' });
    expect(await repo.cycle(runners)).toMatchObject({ action: 'create_plan', reply: 'CYCLE_OK' });
    expect(await repo.cycle(runners)).toMatchObject({ action: 'generate_task', reply: 'CYCLE_OK' });
    expect(repo.exists(PLAN_JSON)).toBe(true);
  });

  it('a track without a spec (its tasks given by another workflow) resumes its task: nothing to re-plan from', async () => {
    repo = await CycleRepo.create();
    const task: PlannedTask = {
      taskId: 'T1',
      title: 'Task T1',
      summary: 'Do T1.',
      files: [{ path: 'src/greet.js', action: 'modify', rationale: 'x' }],
      acceptance: [{ id: 'AC1', text: 'DET: All tests pass', kind: 'DET' }],
      estimatedDiff: 20,
      dependsOn: [],
    };
    const splitter = writes({ 'src/greet.js': 'half\n' }, 'REQUEST_SPLIT=true too big');
    const run = await runCycleTrack(repo.options(scripted({ implementer: [splitter] }).runners), {
      id: 'tasks-md',
      name: 'TASKS.md',
      goal: 'g',
      tasks: [task],
    });
    expect(run).toMatchObject({ ok: true, completed: false, end: 'needs_human' });
    expect(repo.state().needs_human?.code).toBe('CYCLE_REQUEST_SPLIT');
    expect(await resumeCycle(repo.root, 'relais')).toEqual({ ok: true, phase: 'execute' });
    expect(repo.state()).toMatchObject({
      phase: 'execute',
      track: { spec_path: null, replan_reason: null },
      task: { id: 'T1', sub_step: 'implement' },
    });
    expect(repo.state().track.plan_path).not.toBeNull();
  });
});

describe('track.task_count follows the plan file', () => {
  it('a task a human adds to plan.json is run: generate_task and reflect read the count from the file', async () => {
    repo = await CycleRepo.create();
    const { runners } = scripted({
      planner: [track(), spec(), plan([{ id: 'T1' }])],
      implementer: [
        writes({ 'src/greet.js': GOOD }),
        writes({ 'src/bye.js': "module.exports = () => 'bye';\n" }),
      ],
      verifier: verdict('YES'),
    });
    await repo.cycles(runners, (o) => o.action === 'create_plan', 6);
    expect(repo.state().track.task_count).toBe(1);
    const file = JSON.parse(repo.read(PLAN_JSON));
    const t1 = file.tasks[0];
    file.tasks.push({
      ...t1,
      taskId: 'T2',
      title: 'Say bye',
      files: [{ path: 'src/bye.js', action: 'add', rationale: 'added by hand' }],
    });
    writeFileSync(join(repo.root, PLAN_JSON), JSON.stringify(file));
    expect(await repo.cycle(runners)).toMatchObject({ action: 'generate_task', reply: 'CYCLE_OK' });
    expect(repo.state().track.task_count).toBe(2);
    const outcomes = await repo.cycles(runners, (o) => o.phase === 'select-track', 8);
    expect(outcomes.map((o) => o.details).filter((d) => d.startsWith('T'))).toEqual([
      'T1 done; next task 2 of 2',
      'T2 done; track greet complete',
    ]);
    expect(repo.state().tracks_completed).toMatchObject([{ id: 'greet', tasks: 2 }]);
  });
});
