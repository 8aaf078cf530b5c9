import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { contentOf, FILES, lanesProject, lanesScenario } from '../support/lanes.js';
import type { TestProject } from '../support/project.js';
import { NO, runInProcess, scriptedGates, workflowFile, YES } from '../support/workflow.js';

// Issue 19 with the OS sandbox ON (bubblewrap, a user's default): two lanes run side by side,
// each builder fenced in its own worktree. Each builder writes its task's file, then tries to
// write into the other lane's worktree and into the main tree: the kernel refuses both, and each
// attempt's outcome is logged to a harness file (outside the repository, writable by config).

let project: TestProject | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

/** A builder step that also tries `paths`, appending "<code or OK> <path>" per try to `log`. */
function probing(step: Record<string, unknown>, paths: string[], log: string): Record<string, unknown> {
  const script = [
    "const fs = require('fs');",
    'const [log, ...paths] = process.argv.slice(1);',
    'for (const p of paths) {',
    "  let said = 'OK';",
    "  try { fs.writeFileSync(p, 'hijacked\\n'); } catch (e) { said = e.code; }",
    "  fs.appendFileSync(log, said + ' ' + p + '\\n');",
    '}',
  ].join('\n');
  return {
    ...step,
    actions: [...(step.actions as unknown[]), { exec: ['node', '-e', script, log, ...paths] }],
  };
}

it('two lanes in bwrap: each builder writes its own worktree, never the other lane nor the main tree', async () => {
  project = lanesProject((config) => {
    config.workflow.parallel = 2;
  });
  const p = project;
  const log = join(p.harness, 'probes.log');
  const tree = (name: string) => join(p.root, 'relais/worktrees', name);
  const scenario = lanesScenario([{}, {}]) as any;
  scenario.keyed.ALPHA.builder = [
    probing(scenario.keyed.ALPHA.builder[0], [join(tree('task-2-1'), FILES[1]), join(p.root, FILES[0])], log),
  ];
  scenario.keyed.BRAVO.builder = [
    probing(scenario.keyed.BRAVO.builder[0], [join(tree('task-1-1'), FILES[0]), join(p.root, FILES[1])], log),
  ];
  p.scenario(scenario);
  const run = await runInProcess(p, { gates: scriptedGates({ spec: YES, qa: NO }) });
  expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'rejected_at_qa' });
  // Every foreign write was refused by the sandbox (read-only file system), none succeeded.
  const probes = readFileSync(log, 'utf8').trim().split('\n').sort();
  expect(probes).toEqual(
    [
      `EROFS ${join(tree('task-2-1'), FILES[1])}`,
      `EROFS ${join(p.root, FILES[0])}`,
      `EROFS ${join(tree('task-1-1'), FILES[0])}`,
      `EROFS ${join(p.root, FILES[1])}`,
    ].sort(),
  );
  // Each lane's own write landed, judged and verified in the sandbox; nothing else did.
  expect(p.read(FILES[0])).toBe(contentOf(0));
  expect(p.read(FILES[1])).toBe(contentOf(1));
  expect(p.git('log', '--all', '-p').includes('hijacked')).toBe(false);
  expect(workflowFile(p).tasks.map((t: any) => [t.status, t.verdict])).toEqual([
    ['completed', 'verified'],
    ['completed', 'verified'],
  ]);
  // The ticks really ran under bwrap (the report says which sandbox each tick used).
  const ticks = run.events.filter((e) => e.type === 'tick.finished');
  expect(ticks.map((e) => e.lane).sort()).toEqual(['task-1-1', 'task-2-1']);
  for (const tick of ticks) expect((tick as any).sandbox).toBe('bwrap');
}, 240_000);
