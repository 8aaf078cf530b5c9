import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentRequest } from '../../source/engine/agents/agent-run.js';
import { sweepLeftoverScratchOnce } from '../../source/engine/sandbox/leftover-scratch.js';
import { liveGroups } from '../../source/engine/supervise/live-groups.js';
import { liveProcessesOf } from '../support/host-pid.js';
import { fresh, processOf, watchedTick } from '../support/prestart-watch.js';
import { BUILDER_OK, FAKE_CLAUDE, TestProject, task } from '../support/project.js';

// Issue 17: the builder's CLI is started as soon as the orchestrator has printed a task it could
// build, while the orchestrator's CLI exits and the tick takes its guards; the build's call adopts
// it. Real ticks in process, the fake Claude Code in the real sandbox, its scope hook run as the
// real CLI runs it. Each test has its own temp folder, so the scope hooks' folders can be counted.

let project: TestProject;
let privateTmp: string;
const savedTmp = process.env.TMPDIR;
beforeEach(() => {
  privateTmp = mkdtempSync(join(tmpdir(), 'relais-prestart-builder-'));
  process.env.TMPDIR = privateTmp;
});
afterEach(() => {
  project?.dispose();
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  rmSync(privateTmp, { recursive: true, force: true });
});

const scopeHooksLeft = () => readdirSync(privateTmp).filter((name) => name.startsWith('relais-scope-hook-'));
const toolCalls = () =>
  readFileSync(`${project.scenarioPath}.tools.jsonl`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { path: string; refused: string | null });
const noVerification = { verification: { fast: [], slow: [] } };

/**
 * The fake Claude Code behind a wrapper: as the builder it runs `builderStartup` before it reads
 * its stdin (what a CLI could do while it loads); as the orchestrator it answers, then does not
 * exit until `waitFor` exists (at most a few seconds), so that write lands before the build guards.
 */
function startupWriter(project: TestProject, builderStartup: string, waitFor: string): void {
  const wrapper = join(project.harness, 'claude-wrapper.sh');
  const fake = `'${process.execPath}' '${FAKE_CLAUDE}' "$@"`;
  writeFileSync(
    wrapper,
    `#!/bin/sh
case "$*" in
  *"--permission-mode bypassPermissions"*)
    ${builderStartup}
    exec ${fake} ;;
  *)
    ${fake}; code=$?
    i=0; while [ ! -e '${waitFor}' ] && [ $i -lt 300 ]; do sleep 0.01; i=$((i+1)); done
    exit $code ;;
esac
`,
    { mode: 0o755 },
  );
  project.commitConfig((config) => {
    config.claude_code_cli.command = wrapper;
  });
}

describe('the builder started on the orchestrator answer', () => {
  it('is started before BUILD, is the process its call runs, and its scope hook still refuses', async () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result_json: task(noVerification) }],
      builder: [
        {
          actions: [
            { tool_write: 'src/a.ts', content: 'export const a = 2;\n' },
            // Outside the task's scope: the hook installed for the prestart must refuse it.
            { tool_write: 'docs/outside.md', content: 'no\n' },
          ],
          result_json: BUILDER_OK,
        },
      ],
    });
    const seen = fresh();
    await watchedTick(project, seen);
    expect(project.report().code).toBe('SUCCESS');
    expect(seen.prestarted.map((r) => r.role)).toEqual(['orchestrator', 'builder']);
    expect(seen.steps.indexOf('prestart builder')).toBeLessThan(seen.steps.indexOf('phase BUILD'));
    const builder = seen.ran.find((r) => r.role === 'builder') as AgentRequest;
    expect(processOf(seen.prestarted[1] as AgentRequest)).toEqual(processOf(builder));
    // Two calls, two processes: a third start would be a prestarted builder left unadopted.
    expect(project.calls().map((c) => c.role)).toEqual(['orchestrator', 'builder']);
    expect(project.starts()).toHaveLength(2);
    expect(project.calls()[1]?.prompt).toBe(builder.userPrompt);
    expect(toolCalls().map((c) => [c.path, c.refused === null])).toEqual([
      ['src/a.ts', true],
      ['docs/outside.md', false],
    ]);
    expect(readFileSync(join(project.root, 'src/a.ts'), 'utf8')).toBe('export const a = 2;\n');
    expect(scopeHooksLeft()).toEqual([]);
    // The sweep of what killed runners left runs `rm` as processes of its own.
    await sweepLeftoverScratchOnce();
    expect(liveGroups.size).toBe(0);
  });

  it('what it writes at start-up to an ignored file of its folders, before the guards, is still judged', async () => {
    project = TestProject.create({ 'src/a.ts': 'export const a = 1;\n', '.gitignore': 'src/gen/\n' });
    // The builder's command writes an ignored file before it reads its stdin; the orchestrator's
    // does not exit until that file exists (bounded), so the write lands before the tick takes
    // its build guards: only a picture of the ignored files taken before the builder's start sees it.
    startupWriter(project, 'mkdir -p src/gen && echo early > src/gen/out.js', 'src/gen/out.js');
    project.scenario({
      orchestrator: [{ result_json: task(noVerification) }],
      builder: [
        { actions: [{ write: 'src/a.ts', content: 'export const a = 2;\n' }], result_json: BUILDER_OK },
      ],
    });
    const seen = fresh();
    await watchedTick(project, seen);
    expect(seen.prestarted.map((r) => r.role)).toEqual(['orchestrator', 'builder']);
    expect(project.starts()).toHaveLength(2);
    const judged = project.report().scope.touched_paths;
    expect(judged).toContain('src/a.ts');
    expect(judged).toContain('src/gen/out.js');
  });

  it('is not started for a task folder that does not exist yet: what its CLI writes at start-up is judged', async () => {
    project = TestProject.create({ 'src/a.ts': 'export const a = 1;\n', '.gitignore': '*.log\n' });
    // src/gen/** has no folder yet, so its binds widen to src/: a builder started now could make
    // src/gen and write beside it, where the build's narrower reads would never look.
    const marker = join(project.harness, 'wrote');
    startupWriter(
      project,
      `[ -e '${marker}' ] || { mkdir -p src/gen && echo early > src/gen/out.log; echo escaped > src/early.log; echo untracked > src/early.txt; touch '${marker}'; }`,
      'src/gen/out.log',
    );
    const scope = {
      allowed_globs: ['src/gen/**'],
      forbidden_globs: [],
      allow_new_files: true,
      allow_lockfile_changes: false,
    };
    project.scenario({
      orchestrator: [{ result_json: task({ ...noVerification, scope }) }],
      builder: [{ actions: [{ write: 'src/gen/other.log', content: 'late\n' }], result_json: BUILDER_OK }],
    });
    const seen = fresh();
    await watchedTick(project, seen);
    expect(seen.prestarted.map((r) => r.role)).toEqual(['orchestrator']);
    const report = project.report();
    expect(report.code).toBe('STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED');
    expect(report.scope.touched_paths).toEqual(expect.arrayContaining(['src/early.txt', 'src/early.log']));
    expect(project.git('status', '--porcelain')).toBe('');
  });

  it('is killed unused when the orchestrator exits non-zero after its answer: no builder call, no hook left', async () => {
    project = TestProject.create();
    project.scenario({ orchestrator: [{ result_json: task(noVerification), exit_code: 1 }] });
    const seen = fresh();
    await watchedTick(project, seen);
    expect(project.report().code).toBe('STOP_INTERRUPTED');
    expect(seen.prestarted.map((r) => r.role)).toEqual(['orchestrator', 'builder']);
    expect(seen.ran.map((r) => r.role)).toEqual(['orchestrator']);
    expect(project.calls().map((c) => c.role)).toEqual(['orchestrator']);
    expect(liveProcessesOf(project.scenarioPath)).toEqual([]);
    expect(scopeHooksLeft()).toEqual([]);
    // The sweep of what killed runners left runs `rm` as processes of its own.
    await sweepLeftoverScratchOnce();
    expect(liveGroups.size).toBe(0);
  });

  it('a CLI that writes while it loads, for a build that does not run: the report says what it left, and the next preflight refuses it', async () => {
    project = TestProject.create({ 'src/a.ts': 'export const a = 1;\n' });
    // The builder's command edits a tracked file before it reads its stdin; the orchestrator's
    // answers, exits non-zero (no build follows), and not before that edit is made (bounded).
    startupWriter(project, "printf 'early\\n' >> src/a.ts; touch src/.wrote", 'src/.wrote');
    project.scenario({ orchestrator: [{ result_json: task(noVerification), exit_code: 1 }] });
    const seen = fresh();
    await watchedTick(project, seen);
    const report = project.report();
    expect(report.code).toBe('STOP_INTERRUPTED');
    expect(seen.prestarted.map((r) => r.role)).toEqual(['orchestrator', 'builder']);
    expect(project.calls().map((c) => c.role)).toEqual(['orchestrator']);
    // What the report says is what the tree holds.
    expect(
      project.git('status', '--porcelain', '--untracked-files=all').split('\n').filter(Boolean).sort(),
    ).toEqual([' M src/a.ts', '?? src/.wrote']);
    expect(report.rollback.notes.join('\n')).toContain(
      "the builder's CLI, started ahead for a build that did not run, was ended with 2 path(s) changed in its folders (src/a.ts, src/.wrote); nothing was put back",
    );
    expect(liveProcessesOf(project.scenarioPath)).toEqual([]);
    await watchedTick(project, fresh());
    expect(project.report().code).toBe('BLOCKED_DIRTY_WORKTREE');
  });

  it('is killed unused when the tick stops on the task (another milestone in milestone mode)', async () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [
        { result_json: task(noVerification) },
        { result_json: task({ ...noVerification, milestone_id: 'M2' }) },
      ],
      builder: [
        { actions: [{ write: 'src/a.ts', content: 'export const a = 2;\n' }], result_json: BUILDER_OK },
      ],
    });
    await watchedTick(project, fresh(), { holdMilestone: true });
    expect(project.report().code).toBe('SUCCESS');
    const seen = fresh();
    await watchedTick(project, seen, { holdMilestone: true });
    expect(project.report().code).toBe('STOP_MILESTONE_CHANGED');
    expect(seen.prestarted.map((r) => r.role)).toEqual(['orchestrator', 'builder']);
    expect(project.calls().map((c) => c.role)).toEqual(['orchestrator', 'builder', 'orchestrator']);
    expect(liveProcessesOf(project.scenarioPath)).toEqual([]);
    expect(scopeHooksLeft()).toEqual([]);
  });

  it('is started once, on the answer that is a task: not on an answer the runner rejects', async () => {
    project = TestProject.create();
    project.scenario({
      orchestrator: [{ result: 'not a task' }, { result_json: task(noVerification) }],
      builder: [
        { actions: [{ write: 'src/a.ts', content: 'export const a = 2;\n' }], result_json: BUILDER_OK },
      ],
    });
    const seen = fresh();
    await watchedTick(project, seen);
    expect(project.report().code).toBe('SUCCESS');
    expect(seen.prestarted.map((r) => r.role)).toEqual(['orchestrator', 'builder']);
    expect(project.calls().map((c) => c.role)).toEqual(['orchestrator', 'orchestrator', 'builder']);
    // The retry's own process, and no builder but the adopted one.
    expect(project.starts()).toHaveLength(3);
  });

  it('is not started for a task outside the config fence', async () => {
    project = TestProject.create({ 'src/a.ts': 'a\n', 'index.js': 'x\n' });
    const scope = {
      allowed_globs: ['index.js'],
      forbidden_globs: [],
      allow_new_files: false,
      allow_lockfile_changes: false,
    };
    project.scenario({ orchestrator: [{ result_json: task({ ...noVerification, scope }) }] });
    const seen = fresh();
    await watchedTick(project, seen);
    expect(project.report().code).toBe('STOP_SCOPE_OUTSIDE_CONFIG');
    expect(seen.prestarted.map((r) => r.role)).toEqual(['orchestrator']);
    expect(project.starts()).toHaveLength(1);
  });
});
