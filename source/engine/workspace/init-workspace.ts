import { existsSync } from 'node:fs';
import { copyFile, lstat, mkdir, readFile, readlink, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Git, splitNul } from '../judge/git.js';
import { gitCommonDir, readRepoFacts } from '../judge/repo.js';
import { fenceGlobProblem } from '../protocol/config.js';
import { PROJECT_SCHEMA_FILE_NAMES, renderJsonSchemaFile } from '../protocol/json-schemas.js';
import { freshState, workspaceStateSchema } from '../protocol/state.js';
import { readJsonValidated, writeFileAtomic, writeJsonAtomic } from './atomic-write.js';
import { defaultConfig, detectCacheFolders, detectTemplates, renderConfig } from './default-config.js';
import { type DerivedFence, deriveFence, productNameOf } from './derive-fence.js';
import { loadConfig } from './load-config.js';
import { acquireLock } from './lock.js';
import { PACKAGE_ROOT } from './package-assets.js';
import { CONFIG_FILE_NAME, PROMPT_FILE_NAMES, type WorkspacePaths, workspacePaths } from './paths.js';
import { PRD_TEMPLATE_NAME, prdTemplate } from './prd-template.js';
import { RESET_LEDGER } from './state-store.js';

/**
 * `relais init`: idempotent, and it never overwrites a user's file without `force` (then the old
 * one is kept as a `.bak`); even with `force` a valid config stays. A corrupt STATE.json is
 * reported, never silently reset: `--reset-ledger` (or `force`) starts a fresh one beside it.
 */

export interface InitStep {
  readonly path: string;
  readonly action: 'created' | 'kept' | 'updated' | 'replaced' | 'problem';
  readonly note?: string;
}

/**
 * How the derived fence is settled: the CLI asks on a terminal (shows the globs, takes an edit),
 * a flag gives them outright, and without either the derived fence is used as it is.
 */
export type ConfirmFence = (derived: DerivedFence, refused: string | null) => Promise<string[]>;

/** How often a human at the terminal may retype a refused fence before init gives up. */
const FENCE_ASKS = 3;

export interface InitOptions {
  readonly force: boolean;
  readonly env: NodeJS.ProcessEnv;
  readonly now: Date;
  /** `--allow a,b`: the fence, instead of the derived one. */
  readonly allowedGlobs?: readonly string[];
  readonly confirmFence?: ConfirmFence;
}

interface InitContext {
  readonly root: string;
  readonly force: boolean;
  readonly git: Git;
  readonly options: InitOptions;
  readonly now: Date;
  /** Suffix for backups of replaced files: 20261122T041150Z. */
  readonly stamp: string;
}

export async function initWorkspace(
  root: string,
  options: InitOptions,
): Promise<{ ok: boolean; steps: InitStep[] }> {
  const git = new Git(root, options.env);
  const repo = await readRepoFacts(git, root);
  // A repository without a first commit may be initialised; relais run will ask for the commit.
  if (!repo.ok && !repo.detail.startsWith('HEAD')) {
    return {
      ok: false,
      steps: [{ path: root, action: 'problem', note: withGitInitHint(repo.detail) }],
    };
  }
  const ctx: InitContext = {
    root,
    force: options.force,
    git,
    options,
    now: options.now,
    stamp: stampOf(options.now),
  };
  const config = await ensureConfig(ctx);
  // A refused fence stops init before anything is written.
  if (config.fenceSteps.some((s) => s.action === 'problem'))
    return { ok: false, steps: [...config.fenceSteps, config.step] };
  const paths = workspacePaths(root, config.workspaceDir);
  // A workspace that is a symlink (a cloned repository can ship one) would put every runner file
  // wherever it points, outside the repository: refused, nothing is made through it.
  const existing = await lstat(paths.dir).catch(() => null);
  if (existing?.isSymbolicLink())
    return {
      ok: false,
      steps: [
        config.step,
        {
          path: `${config.workspaceDir}/`,
          action: 'problem',
          note: `is a symbolic link (to ${await readlink(paths.dir).catch(() => '?')}); the workspace must be a folder of the repository: remove the link (git rm ${config.workspaceDir}) and run relais init again`,
        },
      ],
    };
  for (const dir of [paths.dir, paths.promptsDir, paths.schemasDir, paths.historyDir])
    await mkdir(dir, { recursive: true });
  const steps = [
    config.step,
    ...config.fenceSteps,
    ...(await ensurePrompts(ctx, paths)),
    await offerPrdTemplate(ctx, paths),
    ...(await ensureSchemas(paths)),
    await ensureState(ctx, paths),
  ];
  const commonDir = await gitCommonDir(git);
  if (commonDir) steps.push(await excludeWorkspace(commonDir, paths.relDir));
  return { ok: steps.every((s) => s.action !== 'problem'), steps };
}

/** "git init" is the fix only where there is no repository at all, never inside one. */
function withGitInitHint(detail: string): string {
  return detail.startsWith('not a git repository') ? `${detail} (run \`git init\` first)` : detail;
}

async function ensureConfig(
  ctx: InitContext,
): Promise<{ step: InitStep; workspaceDir: string; fenceSteps: InitStep[] }> {
  const loaded = await loadConfig(ctx.root);
  const workspaceDir = loaded.ok ? loaded.config.workspace_dir : 'relais';
  const path = join(ctx.root, CONFIG_FILE_NAME);
  const fresh = async () => {
    const fence = await settleFence(ctx);
    if (fence.step.action === 'problem') return { text: null, fenceSteps: [fence.step] };
    const config = defaultConfig(`./${workspaceDir}/schemas/config.schema.json`, detectTemplates(ctx.root));
    config.product_name = productNameOf(ctx.root);
    if (fence.globs.length > 0)
      config.scope = { ...(config.scope as object), default_allowed_globs: fence.globs };
    const caches = detectCacheFolders(ctx.root);
    // The default is the bare "bwrap"; its object form carries the cache folders.
    if (caches.length > 0) config.sandbox = { mode: 'bwrap', verification_writable: caches };
    return { text: renderConfig(config), fenceSteps: [fence.step] };
  };
  if (!loaded.ok && loaded.problem === 'missing') {
    const made = await fresh();
    if (made.text === null) return refusedFence(workspaceDir, made.fenceSteps);
    await writeFileAtomic(path, made.text);
    return {
      workspaceDir,
      fenceSteps: made.fenceSteps,
      step: { path: CONFIG_FILE_NAME, action: 'created', note: 'commit it before `relais run`' },
    };
  }
  // Issue: --force once replaced a valid, committed config with defaults (a wider fence, a dirty
  // tree). It replaces only a config that does not load; a valid one is the user's and stays.
  if (ctx.force && !loaded.ok) {
    const made = await fresh();
    if (made.text === null) return refusedFence(workspaceDir, made.fenceSteps);
    await rename(path, `${path}.${ctx.stamp}.bak`);
    await writeFileAtomic(path, made.text);
    return {
      workspaceDir,
      fenceSteps: made.fenceSteps,
      step: {
        path: CONFIG_FILE_NAME,
        action: 'replaced',
        note: `old file kept as ${CONFIG_FILE_NAME}.${ctx.stamp}.bak`,
      },
    };
  }
  if (!loaded.ok) {
    return {
      workspaceDir,
      fenceSteps: [],
      step: {
        path: CONFIG_FILE_NAME,
        action: 'problem',
        note: `${loaded.detail} (fix it, or run \`relais init --force\` to replace it with a backup)`,
      },
    };
  }
  return {
    workspaceDir,
    fenceSteps: [],
    step: {
      path: CONFIG_FILE_NAME,
      action: 'kept',
      ...(ctx.force
        ? {
            note: 'valid, so --force leaves it alone; to start over from the defaults, delete it and run relais init',
          }
        : {}),
    },
  };
}

/** A fence that names paths outside the repository: no config is written (nothing else was yet). */
function refusedFence(
  workspaceDir: string,
  fenceSteps: InitStep[],
): { step: InitStep; workspaceDir: string; fenceSteps: InitStep[] } {
  return {
    workspaceDir,
    fenceSteps,
    step: { path: CONFIG_FILE_NAME, action: 'problem', note: 'not written: the fence above was refused' },
  };
}

/** The fence for a new config: the flag's, the terminal's answer, or the one derived from the repo. */
async function settleFence(ctx: InitContext): Promise<{ globs: string[]; step: InitStep }> {
  const path = 'scope.default_allowed_globs';
  if (ctx.options.allowedGlobs && ctx.options.allowedGlobs.length > 0) {
    const globs = [...ctx.options.allowedGlobs];
    const refused = refusedGlobs(globs);
    if (refused) return { globs, step: { path, action: 'problem', note: refused } };
    return { globs, step: { path, action: 'created', note: `from --allow: ${globs.join(', ')}` } };
  }
  const tracked = splitNul((await ctx.git.run(['ls-files', '-z'])).stdout);
  const derived = deriveFence(ctx.root, tracked);
  const globs = await confirmedFence(ctx.options.confirmFence, derived);
  const refused = refusedGlobs(globs);
  if (refused) return { globs, step: { path, action: 'problem', note: refused } };
  if (globs.length === 0)
    return {
      globs,
      step: { path, action: 'created', note: 'no tracked source yet: the default fence is used' },
    };
  const chosen = globs.join(', ');
  return {
    globs,
    step: {
      path,
      action: 'created',
      note:
        globs === derived.globs
          ? `derived from the repository: ${chosen}`
          : `as you chose: ${chosen} (derived: ${derived.globs.join(', ')})`,
    },
  };
}

/** The human's fence; a refused one is asked again, with the reason, a few times. */
async function confirmedFence(confirm: ConfirmFence | undefined, derived: DerivedFence): Promise<string[]> {
  if (!confirm) return derived.globs;
  let refused: string | null = null;
  let globs = derived.globs;
  for (let ask = 0; ask < FENCE_ASKS; ask++) {
    globs = await confirm(derived, refused);
    refused = refusedGlobs(globs);
    if (refused === null) return globs;
  }
  return globs;
}

function refusedGlobs(globs: readonly string[]): string | null {
  const problems = globs.map(fenceGlobProblem).filter((p): p is string => p !== null);
  return problems.length > 0 ? `refused: ${problems.join('; ')}` : null;
}

/**
 * A PRD.md template for `ralphy start` (issue 21 item 5), offered in the workspace so the tree
 * stays clean: PRD.md itself is the user's to write and commit.
 */
async function offerPrdTemplate(ctx: InitContext, paths: WorkspacePaths): Promise<InitStep> {
  const rel = `${paths.relDir}/${PRD_TEMPLATE_NAME}`;
  const hasPrd = existsSync(join(ctx.root, 'PRD.md'));
  const target = join(paths.dir, PRD_TEMPLATE_NAME);
  const exists = existsSync(target);
  if (!exists) await writeFileAtomic(target, prdTemplate(productNameOf(ctx.root)));
  return {
    path: rel,
    action: exists ? 'kept' : 'created',
    note: hasPrd ? 'PRD.md exists' : `for ralphy start: cp ${rel} PRD.md, fill it in, commit it`,
  };
}

/** Prompts are the user's to edit: copied once, replaced only with force (old kept as .bak). */
async function ensurePrompts(ctx: InitContext, paths: WorkspacePaths): Promise<InitStep[]> {
  const steps: InitStep[] = [];
  for (const name of PROMPT_FILE_NAMES) {
    const target = join(paths.promptsDir, name);
    const shipped = await readFile(join(PACKAGE_ROOT, 'prompts', name), 'utf8');
    const current = await readFile(target, 'utf8').catch(() => null);
    const rel = `${paths.relDir}/prompts/${name}`;
    if (current === null) {
      await writeFileAtomic(target, shipped);
      steps.push({ path: rel, action: 'created' });
    } else if (current === shipped) {
      steps.push({ path: rel, action: 'kept' });
    } else if (ctx.force) {
      await copyFile(target, `${target}.${ctx.stamp}.bak`);
      await writeFileAtomic(target, shipped);
      steps.push({ path: rel, action: 'replaced', note: `your version kept as ${name}.${ctx.stamp}.bak` });
    } else {
      steps.push({ path: rel, action: 'kept', note: 'customised' });
    }
  }
  return steps;
}

/** Schemas are runner-owned and always match this version of relais. */
async function ensureSchemas(paths: WorkspacePaths): Promise<InitStep[]> {
  const steps: InitStep[] = [];
  for (const name of PROJECT_SCHEMA_FILE_NAMES) {
    const target = join(paths.schemasDir, name);
    const text = renderJsonSchemaFile(name);
    const current = await readFile(target, 'utf8').catch(() => null);
    if (current !== text) await writeFileAtomic(target, text);
    steps.push({
      path: `${paths.relDir}/schemas/${name}`,
      action: current === null ? 'created' : current === text ? 'kept' : 'updated',
    });
  }
  return steps;
}

/** STATE.json: created when missing; a corrupt one is replaced only with force, and kept aside. */
async function ensureState(ctx: InitContext, paths: WorkspacePaths): Promise<InitStep> {
  const state = await readJsonValidated(paths.state, workspaceStateSchema);
  const rel = `${paths.relDir}/STATE.json`;
  if (state.kind === 'missing') {
    await writeJsonAtomic(paths.state, workspaceStateSchema, freshState(ctx.now));
    return { path: rel, action: 'created' };
  }
  if (state.kind === 'ok') return { path: rel, action: 'kept' };
  if (ctx.force) return freshLedger(paths, ctx.now, ctx.stamp, 'corrupt');
  return {
    path: rel,
    action: 'problem',
    note: `corrupt (${state.reason}); restore a copy you trust, or run \`${RESET_LEDGER}\` to start a fresh ledger (the corrupt file is kept aside)`,
  };
}

/**
 * `relais init --reset-ledger`: a fresh STATE.json (budget counters from zero) and nothing else,
 * neither the config nor the prompts: the fix for a corrupt ledger must not touch what is fine.
 * The old file is kept beside it; a running tick's ledger is never reset under it.
 */
export async function resetLedger(root: string, now: Date): Promise<{ ok: boolean; steps: InitStep[] }> {
  const loaded = await loadConfig(root);
  const refused = (path: string, note: string) => ({
    ok: false,
    steps: [{ path, action: 'problem' as const, note }],
  });
  // A config that exists but does not load may name another workspace folder: not guessed.
  if (!loaded.ok && loaded.problem !== 'missing')
    return refused(
      'relais.config.json',
      `not reset: ${loaded.detail} (fix it first: it names the workspace folder)`,
    );
  const paths = workspacePaths(root, loaded.ok ? loaded.config.workspace_dir : 'relais');
  const rel = `${paths.relDir}/STATE.json`;
  const workspace = await lstat(paths.dir).catch(() => null);
  if (workspace?.isSymbolicLink())
    return refused(
      paths.relDir,
      'not reset: the workspace is a symbolic link (the runner writes inside the repository only)',
    );
  if (!workspace?.isDirectory()) return refused(paths.relDir, 'no workspace here: run `relais init` first');
  // Taken, not only looked at: a run starting meanwhile waits for the fresh ledger.
  const lock = await acquireLock(paths.lock, 'relais init --reset-ledger');
  if (!lock.ok) return refused(rel, `not reset: a run holds the workspace lock (${lock.detail})`);
  try {
    const state = await readJsonValidated(paths.state, workspaceStateSchema);
    if (state.kind === 'missing') {
      await writeJsonAtomic(paths.state, workspaceStateSchema, freshState(now));
      return { ok: true, steps: [{ path: rel, action: 'created' }] };
    }
    const step = await freshLedger(paths, now, stampOf(now), state.kind === 'ok' ? 'bak' : 'corrupt');
    return { ok: true, steps: [step] };
  } finally {
    await lock.lock.release();
  }
}

async function freshLedger(
  paths: WorkspacePaths,
  now: Date,
  stamp: string,
  suffix: 'bak' | 'corrupt',
): Promise<InitStep> {
  const kept = `STATE.json.${stamp}.${suffix}`;
  await rename(paths.state, join(paths.dir, kept));
  await writeJsonAtomic(paths.state, workspaceStateSchema, freshState(now));
  return {
    path: `${paths.relDir}/STATE.json`,
    action: 'replaced',
    note: `${suffix === 'corrupt' ? 'corrupt file' : 'old ledger'} kept as ${kept}; budget counters start from zero`,
  };
}

/** Suffix for backups of replaced files: 20261122T041150Z. */
function stampOf(now: Date): string {
  return now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/** The workspace is runner-owned: git must not see it as untracked (.git/info/exclude). */
async function excludeWorkspace(commonDir: string, workspaceDir: string): Promise<InitStep> {
  const infoDir = join(commonDir, 'info');
  const excludePath = join(infoDir, 'exclude');
  const line = `/${workspaceDir}/`;
  const current = await readFile(excludePath, 'utf8').catch(() => '');
  if (current.split('\n').some((l) => l.trim() === line))
    return { path: '.git/info/exclude', action: 'kept' };
  await mkdir(infoDir, { recursive: true });
  const prefix = current.length > 0 && !current.endsWith('\n') ? '\n' : '';
  await writeFile(excludePath, `${current}${prefix}# relais runner workspace\n${line}\n`);
  return { path: '.git/info/exclude', action: 'updated', note: `added ${line}` };
}
