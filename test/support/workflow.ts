import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GateKind } from '../../source/engine/events.js';
import { EngineBus, type StampedEvent } from '../../source/engine/events.js';
import type { GateAnswer, GatePort, GateRequest } from '../../source/engine/gates.js';
import { type Clock, realClock } from '../../source/engine/supervise/clock.js';
import type { WorkflowOptions } from '../../source/engine/workflow/context.js';
import { runWorkflow, type WorkflowOutcome } from '../../source/engine/workflow/run-workflow.js';
import { BUILDER_OK, type Scenario, TestProject, task } from './project.js';

/**
 * A project for the Ralphy workflow: a PRD, two source files, a local bare remote as `origin`, and
 * a `gh` stand-in that records its arguments and prints a pull request URL. The agent CLI is the
 * scripted fake-claude (a real child process per call).
 */

export const PRD = '# Greeting service\n\n## Objective\nGreet people by name, politely.\n';

export const TASKS_MD = [
  '# Tasks',
  '',
  '## Task 1: Greet by name',
  '- **Status**: pending',
  '- **Description**: greet(name) returns "Hello, <name>".',
  '- **Files**: src/a.ts',
  '',
  '## Task 2: Say goodbye',
  '- **Status**: pending',
  '- **Description**: bye(name) returns "Bye, <name>".',
  '- **Files**: src/b.ts',
  '',
].join('\n');

export const QA_MD =
  '# QA report\n\n## Summary\nNo blocking issue. Two small functions, tested.\n\n## Findings\n- none\n';

export type WorkflowScenario = Scenario;

export function workflowProject(
  configure?: (config: any) => void,
): TestProject & { ghLog: string; remote: string } {
  const project = TestProject.create(
    { 'PRD.md': PRD, 'src/a.ts': 'export const a = 1;\n', 'src/b.ts': 'export const b = 1;\n' },
    (config) => {
      config.verification.templates = [{ id: 'ok', cmd: 'node', args: ['-e', 'process.exit(0)'] }];
      // Seed 004's PLANNING is tested on its own (test/integration/planner-*); these workflow tests
      // are about the phases after it, so they start at SPECIFICATION unless they turn it on.
      config.planner = { ...config.planner, enabled: false };
      configure?.(config);
    },
  ) as TestProject & { ghLog: string; remote: string };
  const remote = join(project.base, 'remote.git');
  project.git('init', '-q', '--bare', remote);
  project.git('remote', 'add', 'origin', remote);
  const bin = join(project.base, 'bin');
  mkdirSync(bin, { recursive: true });
  const ghLog = join(project.base, 'gh.log');
  const gh = join(bin, 'gh');
  writeFileSync(
    gh,
    [
      '#!/usr/bin/env node',
      "const fs = require('node:fs');",
      `fs.appendFileSync(${JSON.stringify(ghLog)}, JSON.stringify(process.argv.slice(2)) + '\\n');`,
      'if (process.env.RELAIS_GH_HANG) setInterval(() => {}, 1000);',
      "else if (process.env.RELAIS_GH_FAIL) { console.error('HTTP 401: Bad credentials'); process.exit(1); }",
      "else console.log('https://github.com/example/greeting/pull/7');",
      '',
    ].join('\n'),
  );
  chmodSync(gh, 0o755);
  project.commitConfig((config) => {
    config.pr.gh_command = gh;
  });
  Object.assign(project, { ghLog, remote });
  return project;
}

export function ghCalls(project: { ghLog: string }): string[][] {
  if (!existsSync(project.ghLog)) return [];
  return readFileSync(project.ghLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const orchestratorTask = (id: string, file: string) =>
  task({
    task_id: id,
    intent: `Implement ${file}`,
    scope: {
      allowed_globs: [file],
      forbidden_globs: [],
      allow_new_files: false,
      allow_lockfile_changes: false,
    },
  });

/** Every agent's happy path: spec files, one verified tick per task, a QA report. */
export function happyScenario(): WorkflowScenario {
  return {
    spec: [specStep()],
    orchestrator: [orchestratorTask('T1', 'src/a.ts'), orchestratorTask('T2', 'src/b.ts')].map((t) => ({
      result_json: t,
    })),
    builder: [
      {
        actions: [{ write: 'src/a.ts', content: 'export const greet = (n: string) => "Hello, " + n;\n' }],
        result_json: BUILDER_OK,
      },
      {
        actions: [{ write: 'src/b.ts', content: 'export const bye = (n: string) => "Bye, " + n;\n' }],
        result_json: { ...BUILDER_OK, files_intended: ['src/b.ts'] },
      },
    ],
    qa: [qaStep()],
  };
}

export function specStep(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    actions: [
      { write: 'specs/SPEC.md', content: '# Spec\n\nTwo functions: greet and bye.\n' },
      { write: 'specs/TASKS.md', content: TASKS_MD },
    ],
    say: 'Writing the specification.',
    result: 'SPEC.md and TASKS.md are written.\n\nEXIT_SIGNAL: true',
    ...extra,
  };
}

export function qaStep(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    actions: [{ write: 'specs/QA_REPORT.md', content: QA_MD }],
    result: 'The report is in specs/QA_REPORT.md.\nEXIT_SIGNAL: true',
    ...extra,
  };
}

/** Gates answered from a script: a decision per gate kind, or a function for finer control. */
export function scriptedGates(
  answers: Partial<
    Record<GateKind, GateAnswer | ((request: GateRequest) => GateAnswer | Promise<GateAnswer>)>
  >,
): GatePort & { asked: GateRequest[] } {
  const asked: GateRequest[] = [];
  return {
    asked,
    async ask(request) {
      asked.push(request);
      const answer = answers[request.gate];
      if (!answer) return { decision: 'reject', by: 'nobody' };
      return typeof answer === 'function' ? answer(request) : answer;
    },
  };
}

export const YES: GateAnswer = { decision: 'approve', by: 'human' };
export const NO: GateAnswer = { decision: 'reject', by: 'human' };

export interface InProcessRun {
  readonly outcome: WorkflowOutcome;
  readonly events: StampedEvent[];
  /** The §8 states in the order they were entered. */
  readonly states: string[];
}

/**
 * Runs the workflow engine in this process (the agents are real fake-claude processes), with an
 * injected gate port and signal, and every event recorded.
 */
export async function runInProcess(
  project: TestProject,
  options: {
    gates: GatePort;
    signal?: AbortSignal;
    env?: NodeJS.ProcessEnv;
    onEvent?: (event: StampedEvent) => void;
    clock?: Clock;
    cycleRunners?: WorkflowOptions['cycleRunners'];
    /** The app's pause key, as `ralphy start` passes it. */
    pauseRequested?: () => boolean;
    /** The app's abort key (`a`, confirmed), wired as `ralphy start` wires it. */
    abortKey?: AbortController;
    /** Replaces the key's confirmation check: a test can make a confirmation land between checks. */
    abortConfirmed?: () => boolean;
    /** `ralphy start --parallel N` and `--attempts K` (issue 19). */
    parallel?: number;
    attempts?: number;
  },
): Promise<InProcessRun> {
  const bus = new EngineBus();
  const events: StampedEvent[] = [];
  bus.subscribe((event) => {
    events.push(event);
    options.onEvent?.(event);
  });
  const outcome = await runWorkflow({
    root: project.root,
    bus,
    signal: AbortSignal.any([
      options.signal ?? new AbortController().signal,
      ...(options.abortKey ? [options.abortKey.signal] : []),
    ]),
    ...(options.abortKey
      ? {
          abortRequested: options.abortConfirmed ?? (() => options.abortKey?.signal.aborted ?? false),
          abortedBy: () => 'the abort key (a) in the app',
        }
      : {}),
    env: { ...project.env, IS_SANDBOX: '1', ...options.env },
    gates: options.gates,
    clock: options.clock ?? realClock,
    cycleRunners: options.cycleRunners,
    pauseRequested: options.pauseRequested,
    ...(options.parallel !== undefined ? { parallel: options.parallel } : {}),
    ...(options.attempts !== undefined ? { attempts: options.attempts } : {}),
  });
  const states = events.flatMap((e) => (e.type === 'workflow.changed' ? [e.state] : []));
  return { outcome, events, states };
}

export function workflowFile(project: TestProject): any {
  return project.json('relais/WORKFLOW.json');
}
