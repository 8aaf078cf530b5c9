import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { liveProcessesOf, survivorsOf } from '../support/host-pid.js';
import { contentOf, FILES, laneBuilder, lanesProject, lanesScenario, MARKERS } from '../support/lanes.js';
import type { TestProject } from '../support/project.js';

// Issue 19: kill -9 with three lanes running loses nothing, and the next start recovers: the
// orphaned worktrees are detected, their interrupted ticks recovered (agents ended, work kept),
// then removed, and the tasks run again in fresh lanes to the end.

let project: TestProject | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

it('kill -9 with 3 lanes running loses nothing and the next start recovers', async () => {
  // In the sandbox (the product's default): each lane's builder runs in bubblewrap fenced in its
  // own worktree, and dies with the runner's kill -9.
  project = lanesProject();
  const scenario = lanesScenario([{}, {}, {}], 2) as any;
  // First attempt of every builder: writes its file, says so, then hangs until killed.
  MARKERS.slice(0, 3).forEach((marker, i) => {
    scenario.keyed[marker].builder = [
      { ...laneBuilder(i, 1), say: `working on ${marker}`, hang: true },
      laneBuilder(i, 2),
    ];
  });
  project.scenario(scenario);
  const first = project.cli(['start', '--yes', '--json', '--parallel', '3'], { env: { IS_SANDBOX: '1' } });
  for (const marker of MARKERS.slice(0, 3)) await first.waitFor(`working on ${marker}`);
  // Every builder's host pid (the pids they wrote are their sandboxes': support/host-pid.ts).
  const hung = liveProcessesOf(project.scenarioPath, 'fake-claude');
  expect(hung.length).toBeGreaterThanOrEqual(3);
  first.signal('SIGKILL');
  expect((await first.done).signal).toBe('SIGKILL');
  expect(readdirSync(join(project.root, 'relais', 'worktrees')).sort()).toEqual([
    'task-1-1',
    'task-2-1',
    'task-3-1',
  ]);

  const second = await project.cli(['start', '--yes', '--json', '--parallel', '3'], {
    env: { IS_SANDBOX: '1' },
  }).done;
  expect(second.code, second.stderr + second.stdout.slice(-3000)).toBe(0);
  for (const lane of ['task-1-1', 'task-2-1', 'task-3-1'])
    expect(second.stdout).toContain(`orphaned lane ${lane}`);
  // The lanes' ticks ran in the sandbox (their judge says so), never without it.
  expect(second.stdout).toContain('"sandbox":"bwrap"');
  expect(second.stdout).not.toContain('"sandbox":"off"');
  // No builder of the killed run is left running: each sandbox died with its runner.
  for (const pid of hung) expect(survivorsOf(project.scenarioPath)).not.toContain(pid);
  // Nothing lost: each killed builder's write is kept, outside the removed worktrees.
  const kept = filesUnder(join(project.root, 'relais', 'recovered'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  for (const i of [0, 1, 2]) expect(kept).toContain(contentOf(i, 1).trim());
  // Every task ran again in a fresh lane and landed; no worktree is left.
  for (const i of [0, 1, 2]) expect(project.read(FILES[i] as string)).toBe(contentOf(i, 2));
  expect(project.git('worktree', 'list').trim().split('\n')).toHaveLength(1);
  expect(readdirSync(join(project.root, 'relais', 'lanes'))).toEqual([]);
  expect(project.git('status', '--porcelain')).toBe('');
}, 300_000);
