import type { StampedEvent } from '../../source/engine/events.js';
import { BUILDER_OK, type TestProject, task } from './project.js';
import { qaStep, workflowProject } from './workflow.js';

/**
 * Parallel lanes (issue 19): a workflow project with four independent source files and a TASKS.md
 * whose tasks declare dependencies and scopes, and a keyed scenario: each task's orchestrator and
 * builder calls are scripted by a marker word (ALPHA, BRAVO...) found in their prompts, because
 * lanes call the agents in no fixed order.
 */

export const MARKERS = ['ALPHA', 'BRAVO', 'CHARLIE', 'DELTA'] as const;
export const FILES = ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts'] as const;

export interface PlannedTask {
  readonly scope?: string | null;
  readonly depends?: string;
  /** `- **Risk**: <risk>` (best of N: `high` gets workflow.best_of attempts). */
  readonly risk?: string;
}

export function tasksMd(planned: readonly PlannedTask[]): string {
  return [
    '# Tasks',
    '',
    ...planned.flatMap((t, i) => [
      `## Task ${i + 1}: Build ${MARKERS[i]}`,
      '- **Status**: pending',
      `- **Description**: write ${FILES[i]} for ${MARKERS[i]}.`,
      `- **Files**: ${FILES[i]}`,
      ...(t.depends ? [`- **Depends on**: ${t.depends}`] : []),
      ...(t.scope === null ? [] : [`- **Scope**: ${t.scope ?? FILES[i]}`]),
      ...(t.risk ? [`- **Risk**: ${t.risk}`] : []),
      '',
    ]),
  ].join('\n');
}

export function lanesProject(
  configure?: (config: any) => void,
): TestProject & { ghLog: string; remote: string } {
  const project = workflowProject(configure);
  project.write('src/c.ts', 'export const c = 1;\n');
  project.write('src/d.ts', 'export const d = 1;\n');
  project.git('add', '-A');
  project.git('commit', '-q', '-m', 'c and d');
  return project;
}

/** The builder's content for task i (attempt n): deterministic, so two runs can be compared. */
export function contentOf(i: number, attempt = 1): string {
  return `export const ${MARKERS[i]?.toLowerCase()} = ${attempt};\n`;
}

export function laneOrchestrator(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const file = FILES[i] as string;
  return {
    result_json: task({
      task_id: `T${i + 1}`,
      intent: `Write ${file}`,
      scope: {
        allowed_globs: [file],
        forbidden_globs: [],
        allow_new_files: false,
        allow_lockfile_changes: false,
      },
      builder: { mode: 'claude_code', max_turns: 4, instructions: `Write ${file} [lane ${MARKERS[i]}]` },
      ...extra,
    }),
  };
}

export function laneBuilder(i: number, attempt = 1): Record<string, unknown> {
  const file = FILES[i] as string;
  return {
    actions: [{ write: file, content: contentOf(i, attempt) }],
    result_json: { ...BUILDER_OK, files_intended: [file] },
  };
}

/** Spec writes `planned` as TASKS.md; each task has `ticks` orchestrator/builder pairs; QA last. */
export function lanesScenario(planned: readonly PlannedTask[], ticks = 1): Record<string, unknown> {
  const keyed: Record<string, unknown> = {};
  planned.forEach((_t, i) => {
    keyed[MARKERS[i] as string] = {
      // The orchestrator's goal names the task; the builder's prompt carries its instructions.
      match: { orchestrator: `Task ${i + 1}: Build ${MARKERS[i]}`, builder: `[lane ${MARKERS[i]}]` },
      orchestrator: Array.from({ length: ticks }, () => laneOrchestrator(i)),
      builder: Array.from({ length: ticks }, (_x, n) => laneBuilder(i, n + 1)),
    };
  });
  return {
    spec: [
      {
        actions: [
          { write: 'specs/SPEC.md', content: '# Spec\n\nFour constants.\n' },
          { write: 'specs/TASKS.md', content: tasksMd(planned) },
        ],
        result: 'SPEC.md and TASKS.md are written.\n\nEXIT_SIGNAL: true',
      },
    ],
    qa: [qaStep()],
    keyed,
  };
}

/** Lane events in order: [lane, task, phase]. */
export function laneSteps(events: StampedEvent[]): Array<[string, number, string]> {
  return events.flatMap((e) =>
    e.type === 'lane.changed' ? [[e.lane, e.task, e.phase] as [string, number, string]] : [],
  );
}

/** The most lanes that were between `started` and their end at once. */
export function maxConcurrent(events: StampedEvent[]): number {
  let now = 0;
  let max = 0;
  for (const [, , phase] of laneSteps(events)) {
    if (phase === 'started') now++;
    if (['landed', 'kept', 'failed', 'discarded', 'paused'].includes(phase)) now--;
    max = Math.max(max, now);
  }
  return max;
}

/** Every tracked file and its blob at HEAD, except the config (it names the test's temp folder). */
export function treeListing(project: TestProject): string {
  return project
    .git('ls-tree', '-r', 'HEAD')
    .split('\n')
    .filter((l) => l && !l.endsWith('\trelais.config.json'))
    .join('\n');
}

/**
 * Best of N: the keyed script of attempt `n` of `of` at task `i`. Its orchestrator is told which
 * attempt it is (the runner says "attempt n of K" in the goal), its builder writes `content` to the
 * task's file; `verify` names the templates the tick runs. One tick per attempt.
 */
export function attemptScript(
  i: number,
  n: number,
  of: number,
  content: string,
  options: { verify?: string[]; claim?: string } = {},
): Record<string, unknown> {
  const key = `${MARKERS[i]}#${n}`;
  const file = FILES[i] as string;
  return {
    [key]: {
      match: {
        orchestrator: [`Task ${i + 1}: Build ${MARKERS[i]}`, `attempt ${n} of ${of}`],
        builder: `[lane ${key}]`,
      },
      orchestrator: [
        laneOrchestrator(i, {
          builder: { mode: 'claude_code', max_turns: 4, instructions: `Write ${file} [lane ${key}]` },
          verification: { fast: options.verify ?? ['ok'], slow: [] },
        }),
      ],
      builder: [
        {
          actions: [{ write: file, content }],
          result_json: { ...BUILDER_OK, summary: options.claim ?? 'did it', files_intended: [file] },
        },
      ],
    },
  };
}

/** A spec that writes `planned` as TASKS.md, a QA report, and `keyed` scripts for the lanes. */
export function keyedScenario(
  planned: readonly PlannedTask[],
  keyed: Record<string, unknown>,
): Record<string, unknown> {
  return { ...lanesScenario(planned, 0), keyed };
}
