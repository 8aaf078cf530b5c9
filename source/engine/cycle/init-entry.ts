import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { EngineBus } from '../events.js';
import { Git } from '../judge/git.js';
import { warnIfSandboxOff } from '../sandbox/off-warning.js';
import { agentRunnerFor } from '../session/index.js';
import type { BrainstormAnswers } from './brainstorm/answers.js';
import { renderSeedDocs, type SeedDocs, type SeedWritten, writeSeedDocs } from './brainstorm/seed-docs.js';
import type { CycleSetup } from './cycle-entry.js';
import { livingDocsDir } from './mapper/living-docs.js';
import { type MapResult, runMapper } from './mapper/run-mapper.js';

/**
 * `relais cycle init`'s engine side (seed 003 P12 then P2): map the codebase with the mapper agent
 * (`agents.mapper`), lay out the human's brainstorm answers, and write them once confirmed. The
 * command owns the conversation with the human; nothing here asks or decides for them.
 */

export interface InitMapRun {
  readonly bus: EngineBus;
  readonly signal: AbortSignal;
  readonly env: NodeJS.ProcessEnv;
  readonly remap: boolean;
}

/** How long the mapper may read the repository (it reads many files, once). */
const MAPPER_TIMEOUT_MS = 10 * 60 * 1000;

export function mapCodebase(setup: CycleSetup, run: InitMapRun): Promise<MapResult> {
  warnIfSandboxOff(setup.sandbox, run.bus);
  const role = setup.config.agents.mapper;
  return runMapper({
    root: setup.root,
    docsDir: setup.policy.docs_dir,
    workspaceDir: setup.config.workspace_dir,
    git: new Git(setup.root, run.env),
    runner: agentRunnerFor(setup.config, 'mapper', {
      env: run.env,
      root: setup.root,
      sandbox: setup.sandbox,
    }),
    bus: run.bus,
    signal: run.signal,
    model: role.model,
    fallbackModel: role.fallback_model,
    timeoutMs: MAPPER_TIMEOUT_MS,
    remap: run.remap,
    now: () => new Date(),
  });
}

/** Async so the front door can load this module lazily (issue 17's start-up budget). */
export async function seedDocsFrom(answers: BrainstormAnswers, map: MapResult): Promise<SeedDocs> {
  return renderSeedDocs(answers, map);
}

/** Only after the human said yes to exactly these documents. */
export function writeConfirmedSeedDocs(
  setup: CycleSetup,
  docs: SeedDocs,
  map: MapResult,
  env: NodeJS.ProcessEnv,
): Promise<SeedWritten> {
  const marker = `${livingDocsDir(setup.policy.docs_dir)}/P12_DONE`;
  return writeSeedDocs(
    {
      root: setup.root,
      docsDir: setup.policy.docs_dir,
      workspaceDir: setup.config.workspace_dir,
      git: new Git(setup.root, env),
      now: new Date(),
      mode: setup.policy.mode,
      // The marker too (a greenfield one included): an untracked file would leave the tree dirty.
      livingDocs: [...Object.keys(map.docs), ...(existsSync(join(setup.root, marker)) ? [marker] : [])],
    },
    docs,
  );
}
