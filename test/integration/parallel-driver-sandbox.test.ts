import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import {
  contentOf,
  FILES,
  laneOrchestrator,
  lanesProject,
  lanesScenario,
  MARKERS,
} from '../support/lanes.js';
import { REPO_ROOT, type TestProject } from '../support/project.js';
import { NO, runInProcess, scriptedGates, workflowFile, YES } from '../support/workflow.js';

// Issue 19 with an external builder driver ("cursor" mode) in two lanes, the OS sandbox ON
// (bubblewrap): the sandbox is built for each lane's own worktree, not the main checkout. Each
// driver writes its task's file in its lane (which must land), then tries the other lane's
// worktree and the main tree: the kernel refuses both (outcomes logged to a harness file).

let project: TestProject | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

const DRIVER = join(REPO_ROOT, 'test/support/fake-driver.mjs');
const RESULT = (file: string) => ({
  summary: 'driver did it',
  files_intended: [file],
  commands_ran: [],
  notes: [],
});

it('two external-driver lanes in bwrap: each driver writes its own worktree, never the other lane nor the main tree', async () => {
  project = lanesProject((config) => {
    config.workflow.parallel = 2;
    config.builder.cursor = {
      command: DRIVER,
      args: ['{{TASK_FILE}}', '{{OUTPUT_FILE}}'],
      timeout_seconds: 60,
      output_file: 'relais/BUILDER_RESULT.json',
    };
  });
  const p = project;
  const tree = (name: string) => join(p.root, 'relais/worktrees', name);
  const scenario = lanesScenario([{}, {}]) as any;
  // Each task's orchestrator hands the build to the external driver.
  for (const i of [0, 1])
    scenario.keyed[MARKERS[i] as string].orchestrator = [
      laneOrchestrator(i, {
        builder: { mode: 'cursor', max_turns: 1, instructions: `Write ${FILES[i]} [lane ${MARKERS[i]}]` },
      }),
    ];
  p.scenario(scenario);
  const log = join(p.harness, 'probes.log');
  const plan = join(p.harness, 'driver.json');
  const own = (i: number) => ({
    writes: { [FILES[i] as string]: contentOf(i) },
    result: RESULT(FILES[i] as string),
  });
  writeFileSync(
    plan,
    JSON.stringify({
      probe_log: log,
      by_task: {
        T1: {
          ...own(0),
          probes: [join(tree('task-2-1'), FILES[1] as string), join(p.root, FILES[0] as string)],
        },
        T2: {
          ...own(1),
          probes: [join(tree('task-1-1'), FILES[0] as string), join(p.root, FILES[1] as string)],
        },
      },
    }),
  );

  const run = await runInProcess(p, {
    gates: scriptedGates({ spec: YES, qa: NO }),
    env: { RELAIS_FAKE_DRIVER: plan },
  });
  expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'rejected_at_qa' });
  // Every foreign write was refused by the sandbox (read-only file system), none succeeded.
  expect(readFileSync(log, 'utf8').trim().split('\n').sort()).toEqual(
    [
      `EROFS ${join(tree('task-2-1'), FILES[1] as string)}`,
      `EROFS ${join(p.root, FILES[0] as string)}`,
      `EROFS ${join(tree('task-1-1'), FILES[0] as string)}`,
      `EROFS ${join(p.root, FILES[1] as string)}`,
    ].sort(),
  );
  // Each driver's write in its own worktree was judged, verified in the sandbox and landed.
  expect(p.read(FILES[0] as string)).toBe(contentOf(0));
  expect(p.read(FILES[1] as string)).toBe(contentOf(1));
  expect(p.git('log', '--all', '-p').includes('hijacked')).toBe(false);
  expect(workflowFile(p).tasks.map((t: any) => [t.status, t.verdict])).toEqual([
    ['completed', 'verified'],
    ['completed', 'verified'],
  ]);
  // The build was the driver's (no claude builder ran), and each lane's tick ran under bwrap.
  expect(p.calls().filter((c) => c.role === 'builder')).toEqual([]);
  const ticks = run.events.filter((e) => e.type === 'tick.finished');
  expect(ticks.map((e) => e.lane).sort()).toEqual(['task-1-1', 'task-2-1']);
  for (const tick of ticks) expect((tick as any).sandbox).toBe('bwrap');
}, 240_000);
