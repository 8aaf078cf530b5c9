import { existsSync } from 'node:fs';
import { copyFile, lstat, mkdir, readFile, readlink, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Git, splitNul } from '../judge/git.js';
import { gitCommonDir, readRepoFacts } from '../judge/repo.js';
import { PROJECT_SCHEMA_FILE_NAMES, renderJsonSchemaFile } from '../protocol/json-schemas.js';
import { freshState, workspaceStateSchema } from '../protocol/state.js';
import { readJsonValidated, writeFileAtomic, writeJsonAtomic } from './atomic-write.js';
import { defaultConfig, detectTemplates, renderConfig } from './default-config.js';
import { type DerivedFence, deriveFence, productNameOf } from './derive-fence.js';
import { loadConfig } from './load-config.js';
import { PACKAGE_ROOT } from './package-assets.js';
import { CONFIG_FILE_NAME, PROMPT_FILE_NAMES, type WorkspacePaths, workspacePaths } from './paths.js';
import { PRD_TEMPLATE_NAME, prdTemplate } from './prd-template.js';

/**
 * `relais init`: idempotent, and it never overwrites a user's file without `force` (then the old
 * one is kept as a `.bak`). A corrupt STATE.json is reported, never silently reset.
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
export type ConfirmFence = (derived: DerivedFence) => Promise<string[]>;

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
      steps: [{ path: root, action: 'problem', note: `${repo.detail} (run \`git init\` first)` }],
    };
  }
  const ctx: InitContext = {
    root,
    force: options.force,
    git,
    options,
    now: options.now,
    stamp: options.now
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z'),
  };
  const config = await ensureConfig(ctx);
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

async function ensureConfig(
  ctx: InitContext,
): Promise<{ step: InitStep; workspaceDir: string; fenceSteps: InitStep[] }> {
  const loaded = await loadConfig(ctx.root);
  const workspaceDir = loaded.ok ? loaded.config.workspace_dir : 'relais';
  const path = join(ctx.root, CONFIG_FILE_NAME);
  const fresh = async () => {
    const fence = await settleFence(ctx);
    const config = defaultConfig(`./${workspaceDir}/schemas/config.schema.json`, detectTemplates(ctx.root));
    config.product_name = productNameOf(ctx.root);
    if (fence.globs.length > 0)
      config.scope = { ...(config.scope as object), default_allowed_globs: fence.globs };
    return { text: renderConfig(config), fenceSteps: [fence.step] };
  };
  if (!loaded.ok && loaded.problem === 'missing') {
    const made = await fresh();
    await writeFileAtomic(path, made.text);
    return {
      workspaceDir,
      fenceSteps: made.fenceSteps,
      step: { path: CONFIG_FILE_NAME, action: 'created', note: 'commit it before `relais run`' },
    };
  }
  if (ctx.force) {
    const made = await fresh();
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
  return { workspaceDir, fenceSteps: [], step: { path: CONFIG_FILE_NAME, action: 'kept' } };
}

/** The fence for a new config: the flag's, the terminal's answer, or the one derived from the repo. */
async function settleFence(ctx: InitContext): Promise<{ globs: string[]; step: InitStep }> {
  const path = 'scope.default_allowed_globs';
  if (ctx.options.allowedGlobs && ctx.options.allowedGlobs.length > 0) {
    const globs = [...ctx.options.allowedGlobs];
    return { globs, step: { path, action: 'created', note: `from --allow: ${globs.join(', ')}` } };
  }
  const tracked = splitNul((await ctx.git.run(['ls-files', '-z'])).stdout);
  const derived = deriveFence(ctx.root, tracked);
  const globs = ctx.options.confirmFence ? await ctx.options.confirmFence(derived) : derived.globs;
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

/**
 * A PRD.md template for `ralphy start` (issue 21 item 5), offered in the workspace so the tree
 * stays clean: PRD.md itself is the user's to write and commit.
 */
async function offerPrdTemplate(ctx: InitContext, paths: WorkspacePaths): Promise<InitStep> {
  const rel = `${paths.relDir}/${PRD_TEMPLATE_NAME}`;
  const hasPrd = existsSync(join(ctx.root, 'PRD.md'));
  const target = join(paths.dir, PRD_TEMPLATE_NAME);
  if (!existsSync(target)) await writeFileAtomic(target, prdTemplate(productNameOf(ctx.root)));
  return {
    path: rel,
    action: 'kept',
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
  if (ctx.force) {
    await rename(paths.state, `${paths.state}.${ctx.stamp}.corrupt`);
    await writeJsonAtomic(paths.state, workspaceStateSchema, freshState(ctx.now));
    return {
      path: rel,
      action: 'replaced',
      note: `corrupt file kept as STATE.json.${ctx.stamp}.corrupt; budget counters start from zero`,
    };
  }
  return {
    path: rel,
    action: 'problem',
    note: `corrupt (${state.reason}); restore it from history or run \`relais init --force\` to start a fresh ledger`,
  };
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
