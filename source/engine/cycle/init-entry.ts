import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineBus } from '../events.js';
import { Git } from '../judge/git.js';
import { warnIfSandboxOff } from '../sandbox/off-warning.js';
import { agentRunnerFor } from '../session/index.js';
import { type BrainstormAnswers, parseAnswers } from './brainstorm/answers.js';
import { renderSeedDocs, type SeedDocs, type SeedWritten, writeSeedDocs } from './brainstorm/seed-docs.js';
import { type CycleSetup, loadCycleSetup } from './cycle-entry.js';
import { livingDocsDir } from './mapper/living-docs.js';
import { type MapResult, runMapper } from './mapper/run-mapper.js';

/**
 * `relais cycle init`'s entry (seed 003 P12 then P2): map the codebase with the mapper agent
 * (`agents.mapper`), take the human's brainstorm answers, lay them out, and write them once the
 * human confirmed exactly those documents. The conversation itself is a port the front end
 * injects (`SeedDocsHuman`, like the gates): nothing here asks or decides for the human.
 */

/** The human's side of cycle init: the terminal, or an answers file with --confirm. */
export interface SeedDocsHuman {
  /** The codebase is mapped: shown before any question. */
  mapped(map: MapResult, docsDir: string): void;
  /** The brainstorm's answers, or null when the human stopped (an interrupt ends it too). */
  brainstorm(signal: AbortSignal): Promise<BrainstormAnswers | null>;
  /** Shows the documents as they would be written; true only when the human wants exactly these. */
  confirm(
    docs: SeedDocs,
    where: { readonly root: string; readonly docsDir: string },
    signal: AbortSignal,
  ): Promise<boolean>;
}

export interface CycleInitRun {
  readonly root: string;
  readonly bus: EngineBus;
  readonly signal: AbortSignal;
  readonly env: NodeJS.ProcessEnv;
  readonly remap: boolean;
  /** A JSON file of answers (`--answers`, as the user named it): checked before the mapper spends anything. */
  readonly answersFile: { readonly path: string; readonly named: string } | null;
  readonly human: SeedDocsHuman;
}

export type CycleInitOutcome =
  | { readonly kind: 'bad_answers'; readonly detail: string }
  | { readonly kind: 'no_setup'; readonly detail: string; readonly fix?: string }
  | { readonly kind: 'interrupted' }
  /** The human stopped the brainstorm or did not confirm: nothing written. */
  | { readonly kind: 'not_written' }
  | { readonly kind: 'write_failed'; readonly detail: string }
  | { readonly kind: 'written'; readonly written: Extract<SeedWritten, { ok: true }> };

export async function cycleInitEntry(run: CycleInitRun): Promise<CycleInitOutcome> {
  const fromFile = run.answersFile === null ? null : await readAnswersFile(run.answersFile);
  if (fromFile && !fromFile.ok) return { kind: 'bad_answers', detail: fromFile.detail };
  const loaded = await loadCycleSetup(run.root, {}, run.env);
  if (!loaded.ok) return { kind: 'no_setup', detail: loaded.detail, fix: loaded.fix };
  const { setup } = loaded;
  const map = await mapCodebase(setup, run);
  // An interrupt during the mapping ends init: no brainstorm after Ctrl-C.
  if (run.signal.aborted) return { kind: 'interrupted' };
  const docsDir = setup.policy.docs_dir;
  run.human.mapped(map, docsDir);
  const answers = fromFile ? fromFile.answers : await run.human.brainstorm(run.signal);
  if (run.signal.aborted) return { kind: 'interrupted' };
  if (!answers) return { kind: 'not_written' };
  const docs = renderSeedDocs(answers, map);
  const confirmed = await run.human.confirm(docs, { root: setup.root, docsDir }, run.signal);
  if (run.signal.aborted) return { kind: 'interrupted' };
  if (!confirmed) return { kind: 'not_written' };
  const written = await writeConfirmedSeedDocs(setup, docs, map, run.env);
  return written.ok ? { kind: 'written', written } : { kind: 'write_failed', detail: written.detail };
}

/** The answers file, checked like terminal answers; its problem named, nothing written. */
async function readAnswersFile({
  path,
  named: file,
}: {
  readonly path: string;
  readonly named: string;
}): Promise<{ ok: true; answers: BrainstormAnswers } | { ok: false; detail: string }> {
  const text = await readFile(path, 'utf8').catch((e: Error) => e);
  if (text instanceof Error) return { ok: false, detail: `cannot read --answers ${file}: ${text.message}` };
  const parsed = parseAnswers(text);
  return parsed.ok
    ? parsed
    : { ok: false, detail: `--answers ${file}: ${parsed.reason}\nNothing was written.` };
}

interface InitMapRun {
  readonly bus: EngineBus;
  readonly signal: AbortSignal;
  readonly env: NodeJS.ProcessEnv;
  readonly remap: boolean;
}

/** How long the mapper may read the repository (it reads many files, once). */
const MAPPER_TIMEOUT_MS = 10 * 60 * 1000;

function mapCodebase(setup: CycleSetup, run: InitMapRun): Promise<MapResult> {
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

/** Only after the human said yes to exactly these documents. */
function writeConfirmedSeedDocs(
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
