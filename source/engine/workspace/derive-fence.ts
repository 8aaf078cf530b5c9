import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import micromatch from 'micromatch';

/**
 * `relais init` derives the scope fence from the repository itself (issue 21 item 4: the fixed
 * default `src/**, app/**, packages/**, tests/**, README.md` matched no file of a flat package,
 * not even its `readme.md`). The fence is the project's tracked source, test and doc files, plus
 * what package.json names (`files`, `main`, `workspaces`). Folders become `dir/**`; files at the
 * top level are named one by one. Manifests, lockfiles, CI and tool config stay outside: a task
 * that needs them widens the fence deliberately.
 */

const SOURCE_EXT =
  /\.(c|m)?(j|t)sx?$|\.d\.(c|m)?ts$|\.(md|mdx|markdown|txt|rst)$|\.(json|ya?ml)$|\.(css|scss|html|vue|svelte)$/i;
/** Top-level folders that are never the project's own source. */
const NOT_SOURCE_DIRS = new Set([
  'node_modules',
  'dist',
  'build',
  'coverage',
  'out',
  'vendor',
  'tmp',
  'relais',
]);
/** Top-level files that are tool or package config, not source/test/doc. */
const CONFIG_FILE =
  /^(package(-lock)?\.json|npm-shrinkwrap\.json|pnpm-lock\.yaml|pnpm-workspace\.yaml|yarn\.lock|bun\.lockb|relais\.config\.json|tsconfig(\..*)?\.json|jsconfig\.json|biome\.jsonc?|\.?[a-z-]*rc(\.(c|m)?js|\.json|\.ya?ml)?|.*\.config\.(c|m)?(j|t)s)$/i;
const MAX_GLOBS = 64;

export interface DerivedFence {
  readonly globs: string[];
  /** How each glob was found, for the init output. */
  readonly reasons: Record<string, string>;
}

export function deriveFence(root: string, tracked: readonly string[]): DerivedFence {
  const reasons: Record<string, string> = {};
  const add = (glob: string, why: string) => {
    if (!(glob in reasons)) reasons[glob] = why;
  };
  const manifest = readManifest(root);
  for (const entry of manifest.files) add(asGlob(root, entry), 'package.json files');
  if (manifest.main) add(asGlob(root, manifest.main), 'package.json main');
  for (const ws of manifest.workspaces) add(`${ws.replace(/\/+$/, '')}/**`, 'package.json workspaces');
  for (const path of tracked) {
    if (!SOURCE_EXT.test(path)) continue;
    const slash = path.indexOf('/');
    if (slash === -1) {
      if (!CONFIG_FILE.test(path)) add(path, 'tracked file');
      continue;
    }
    const top = path.slice(0, slash);
    if (top.startsWith('.') || NOT_SOURCE_DIRS.has(top)) continue;
    add(`${top}/**`, 'tracked folder');
  }
  // Globs already covered by a folder glob are dropped (package.json main inside src/, say).
  const all = Object.keys(reasons);
  const folders = all.filter((g) => g.endsWith('/**'));
  const bases = folders.map((g) => g.slice(0, -3));
  const nested = (g: string) => bases.some((b) => g !== `${b}/**` && g.startsWith(`${b}/`));
  let globs = all.filter((g) =>
    g.endsWith('/**') ? !nested(g) : !micromatch.isMatch(g, folders, { dot: true }),
  );
  if (globs.length > MAX_GLOBS) globs = collapseTopLevel(globs);
  globs.sort();
  return { globs, reasons: Object.fromEntries(globs.map((g) => [g, reasons[g] ?? 'top-level files'])) };
}

/** The project's own name for the config's product_name (issue 21 item 4: not "relais"). */
export function productNameOf(root: string): string {
  const name = readManifest(root).name;
  return name ?? basename(root);
}

interface Manifest {
  readonly name: string | null;
  readonly files: string[];
  readonly main: string | null;
  readonly workspaces: string[];
}

function readManifest(root: string): Manifest {
  const none: Manifest = { name: null, files: [], main: null, workspaces: [] };
  const path = join(root, 'package.json');
  if (!existsSync(path)) return none;
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return none;
  }
  const strings = (v: unknown) =>
    Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
  const workspaces = Array.isArray(raw.workspaces)
    ? strings(raw.workspaces)
    : strings((raw.workspaces as { packages?: unknown } | undefined)?.packages);
  return {
    name: typeof raw.name === 'string' && raw.name.length > 0 ? raw.name : null,
    // Negated entries ("!test") only subtract from what npm publishes; never fence entries.
    files: strings(raw.files)
      .filter((f) => !f.startsWith('!'))
      .map(clean),
    main: typeof raw.main === 'string' ? clean(raw.main) : null,
    workspaces: workspaces.map(clean),
  };
}

function clean(entry: string): string {
  return entry.replace(/^\.\//, '');
}

/** A folder named in package.json becomes `folder/**`; a file or glob stays as it is. */
function asGlob(root: string, entry: string): string {
  const path = entry.replace(/\/+$/, '');
  try {
    if (statSync(join(root, path)).isDirectory()) return `${path}/**`;
  } catch {}
  return path;
}

function collapseTopLevel(globs: string[]): string[] {
  const folders = globs.filter((g) => g.includes('/'));
  const exts = new Set(globs.filter((g) => !g.includes('/')).map((g) => g.slice(g.lastIndexOf('.'))));
  return [...folders.slice(0, MAX_GLOBS - exts.size), ...[...exts].map((e) => `*${e}`)];
}
