import { afterEach, describe, expect, it } from 'vitest';
import { contentOf, FILES, laneSteps, lanesProject, lanesScenario } from '../support/lanes.js';
import type { TestProject } from '../support/project.js';
import { NO, runInProcess, scriptedGates, workflowFile, YES } from '../support/workflow.js';

// Issue 19's merge queue: nothing lands unverified. A check that fails only on the merged tree
// and a rebase conflict each re-run the task once on the new base, then ask a human.

const projects: TestProject[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.dispose();
});

// Passes on either change alone, fails once both are in the tree.
const TOGETHER = [
  '-e',
  "const fs = require('fs'); const a = fs.readFileSync('src/a.ts', 'utf8'); const b = fs.readFileSync('src/b.ts', 'utf8'); process.exit(a.includes('alpha') && b.includes('bravo') ? 1 : 0)",
];

describe('merge queue', () => {
  it('a check that fails only after the merge never lands: re-run once on the new base, then a human gate', async () => {
    const project = lanesProject((config) => {
      config.workflow.parallel = 2;
      config.verification.templates = [
        { id: 'ok', cmd: 'node', args: ['-e', 'process.exit(0)'] },
        { id: 'together', cmd: 'node', args: TOGETHER },
      ];
    });
    projects.push(project);
    project.scenario(lanesScenario([{}, {}], 2) as any);
    const gates = scriptedGates({ spec: YES, qa: NO, input: NO });
    const run = await runInProcess(project, { gates });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'merge_failed' });
    // Exactly one of the two changes landed; the other never reached the branch.
    const a = project.read(FILES[0]);
    const b = project.read(FILES[1]);
    expect([a === contentOf(0), b === contentOf(1)].filter(Boolean)).toHaveLength(1);
    const log = project.git('log', '--format=%s');
    expect(log.match(/ralphy: task \d completed/g)).toHaveLength(1);
    // The loser was refused twice on the merged tree, re-run in between, then the human was asked.
    const merges = run.events.flatMap((e) => (e.type === 'merge.changed' ? [e.step] : []));
    expect(merges.filter((s) => s === 'check_failed')).toHaveLength(2);
    expect(merges.filter((s) => s === 'landed')).toHaveLength(1);
    const loser = laneSteps(run.events).find(([, , phase]) => phase === 'retrying');
    expect(loser).toBeDefined();
    const gate = gates.asked.find((g) => g.gate === 'input');
    expect(gate?.title).toMatch(/could not land twice/);
    expect(gate?.lines.join('\n')).toContain('verification "together" exited 1');
    // Both attempts of the loser are kept for a human, listed by `relais worktrees list`.
    const list = project.cliSync(['worktrees', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout.match(/ kept /g)).toHaveLength(2);
    const workflow = workflowFile(project);
    expect(workflow.tasks.filter((t: any) => t.status === 'completed')).toHaveLength(1);
  }, 300_000);

  it('a conflicting merge re-runs the task on the new base, then gates with the conflict shown', async () => {
    const project = lanesProject((config) => {
      config.workflow.parallel = 2;
    });
    projects.push(project);
    project.scenario(lanesScenario([{}], 2) as any);
    const gates = scriptedGates({ spec: YES, qa: NO, input: NO });
    let human = 0;
    const run = await runInProcess(project, {
      gates,
      // Someone commits to the same file on the branch each time the lane is about to land.
      onEvent: (event) => {
        if (event.type !== 'lane.changed' || event.phase !== 'merging') return;
        human++;
        project.write(FILES[0], `export const human = ${human};\n`);
        project.git('commit', '-q', '-m', `human edit ${human}`, '--', FILES[0]);
      },
    });
    expect(run.outcome).toMatchObject({ state: 'FAILED', reason: 'merge_failed' });
    expect(human).toBe(2);
    expect(project.read(FILES[0])).toBe('export const human = 2;\n');
    const merges = run.events.flatMap((e) => (e.type === 'merge.changed' ? [e.step] : []));
    expect(merges.filter((s) => s === 'conflict')).toHaveLength(2);
    expect(merges).not.toContain('landed');
    const gate = gates.asked.find((g) => g.gate === 'input');
    expect(gate?.lines).toContain(`Conflicting files: ${FILES[0]}`);
    expect(project.git('status', '--porcelain')).toBe('');
  }, 300_000);
});
