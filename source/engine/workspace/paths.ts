import { join } from 'node:path';

export const CONFIG_FILE_NAME = 'relais.config.json';

/** history/agents: the agents' transcripts (agents/transcripts.ts), not a run folder. */
export const TRANSCRIPTS_FOLDER = 'agents';

/** Every runner-owned location, derived from the repository root and `workspace_dir`. */
export interface WorkspacePaths {
  readonly root: string;
  readonly configFile: string;
  /** Workspace folder name relative to the root, e.g. `relais`. */
  readonly relDir: string;
  readonly dir: string;
  readonly state: string;
  readonly task: string;
  readonly report: string;
  readonly reportMd: string;
  readonly blocked: string;
  readonly facts: string;
  readonly lock: string;
  readonly inflight: string;
  /** The Ralphy workflow's state (seed 002 §7 state.json). */
  readonly workflow: string;
  /** A request from `ralphy abort` to the running workflow. */
  readonly abortRequest: string;
  /** Where a recovery keeps what an interrupted run left behind (nothing is deleted). */
  readonly recoveredDir: string;
  readonly historyDir: string;
  readonly promptsDir: string;
  readonly schemasDir: string;
}

export function workspacePaths(root: string, workspaceDir: string): WorkspacePaths {
  const dir = join(root, workspaceDir);
  return {
    root,
    configFile: join(root, CONFIG_FILE_NAME),
    relDir: workspaceDir,
    dir,
    state: join(dir, 'STATE.json'),
    task: join(dir, 'TASK.json'),
    report: join(dir, 'REPORT.json'),
    reportMd: join(dir, 'REPORT.md'),
    blocked: join(dir, 'BLOCKED.json'),
    facts: join(dir, 'FACTS.md'),
    lock: join(dir, 'lock.json'),
    inflight: join(dir, 'INFLIGHT.json'),
    workflow: join(dir, 'WORKFLOW.json'),
    abortRequest: join(dir, 'ABORT.json'),
    recoveredDir: join(dir, 'recovered'),
    historyDir: join(dir, 'history'),
    promptsDir: join(dir, 'prompts'),
    schemasDir: join(dir, 'schemas'),
  };
}

/** The prompts a tick needs; the workflow's own (spec, dev, qa) are only needed by `ralphy start`. */
export const TICK_PROMPT_FILE_NAMES = [
  'orchestrator.system.txt',
  'orchestrator.user.txt',
  'builder.system.txt',
  'builder.user.txt',
] as const;

export const WORKFLOW_PROMPT_FILE_NAMES = ['spec.txt', 'dev.txt', 'qa.txt', 'planner.system.txt'] as const;

export const PROMPT_FILE_NAMES = [...TICK_PROMPT_FILE_NAMES, ...WORKFLOW_PROMPT_FILE_NAMES] as const;

export type PromptFileName = (typeof PROMPT_FILE_NAMES)[number];
