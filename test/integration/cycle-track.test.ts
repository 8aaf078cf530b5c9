import { afterEach, describe, expect, it } from 'vitest';
import type { PlannedTask } from '../../source/engine/cycle/blocks.js';
import { runCycleTrack } from '../../source/engine/cycle/track-runner.js';
import { CycleRepo, scripted, verdict, writes } from '../support/cycle-project.js';

// The cycle as another workflow's implementation engine (ralphy start, engine "cycle").

let repo: CycleRepo;
afterEach(() => repo?.dispose());

const task = (id: string, files: PlannedTask['files']): PlannedTask => ({
  taskId: id,
  title: `Task ${id}`,
  summary: `Do ${id}.`,
  files,
  acceptance: [
    { id: 'AC1', text: 'DET: All tests pass', kind: 'DET' },
    { id: 'AC2', text: `LLM: ${id} is done`, kind: 'LLM' },
  ],
  estimatedDiff: 20,
  dependsOn: [],
});

describe('runCycleTrack', () => {
  it('runs generate -> implement -> verify -> reflect for given tasks, no planner, until the track is complete', async () => {
    repo = await CycleRepo.create();
    const { runners, calls } = scripted({
      implementer: [
        writes({ 'src/greet.js': "module.exports = (name) => 'Hello, ' + name;\n// 1\n" }),
        writes({ 'src/bye.js': "module.exports = () => 'bye';\n" }),
      ],
      verifier: verdict('YES'),
    });
    const input = {
      id: 'tasks-md',
      name: 'TASKS.md',
      goal: 'the PRD',
      tasks: [
        task('T1', [{ path: 'src/greet.js', action: 'modify', rationale: 'x' }]),
        task('T2', [{ path: 'src/bye.js', action: 'add', rationale: 'y' }]),
      ],
    };
    const run = await runCycleTrack(repo.options(runners), input);
    expect(run).toMatchObject({ ok: true, completed: true, end: 'done', cycles: 8 });
    expect(calls.map((c) => c.role)).toEqual(['implementer', 'verifier', 'implementer', 'verifier']);
    expect(repo.state()).toMatchObject({
      phase: 'select-track',
      tracks_completed: [{ id: 'tasks-md', tasks: 2 }],
    });
    expect(repo.subjects()[0]).toBe('relais(T2): Task T2');
    expect(repo.exists('specs/tracks/tasks-md/PLAN.md')).toBe(true);
    expect(repo.status()).toBe('');
  });

  it('stops when a human is needed, and resumes the same track on the next call', async () => {
    repo = await CycleRepo.create();
    const input = {
      id: 'tasks-md',
      name: 'TASKS.md',
      goal: 'g',
      tasks: [task('T1', [{ path: 'src/greet.js', action: 'modify', rationale: 'x' }])],
    };
    const first = await runCycleTrack(
      repo.options(
        scripted({
          implementer: [writes({ 'src/greet.js': "module.exports = (name) => 'Hello, ' + name;\n// 1\n" })],
          verifier: verdict('NEEDS_HUMAN'),
        }).runners,
      ),
      input,
    );
    expect(first).toMatchObject({ ok: true, completed: false, end: 'needs_human' });
    repo.setState((s) => {
      s.phase = 'execute';
      s.needs_human = null;
    });
    const second = await runCycleTrack(repo.options(scripted({ verifier: verdict('YES') }).runners), input);
    expect(second).toMatchObject({ ok: true, completed: true });
    expect(await runCycleTrack(repo.options(scripted({}).runners), { ...input, tasks: [] })).toEqual({
      ok: false,
      detail: 'the track has no tasks',
    });
  });
});
