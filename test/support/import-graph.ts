import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The layers of docs/ARCHITECTURE.md, enforced over the import graph (every static import, re-export and
 * dynamic import of every source file): the engine never imports the UI or the CLI (nor React or
 * Ink); the UI reaches the engine only through its public surface (events, gates, protocol
 * types); the CLI only through the engine's front door (engine/index.ts) and the UI's (ui/index.ts).
 * Inside the engine, flows stand on session/ and reach each other only as FLOW_REACH says; only
 * the process port and the git port start child processes; the demo and the schema tool use the
 * few engine files listed for them.
 */

export interface Violation {
  readonly file: string;
  readonly imports: string;
  readonly rule: string;
}

const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every module a source file names (static, re-export, dynamic), comments skipped. */
export function specifiersOf(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return [...code.matchAll(SPECIFIER)].map((m) => (m[1] ?? m[2]) as string);
}

/** A relative specifier as a path from the repository root (`source/engine/events.ts`). */
function resolveFrom(file: string, specifier: string): string {
  return normalize(join(dirname(file), specifier)).replace(/\.js$/, '.ts');
}

function layerOf(path: string): 'engine' | 'ui' | 'cli' | 'other' {
  if (path.startsWith('source/engine/')) return 'engine';
  if (path.startsWith('source/ui/')) return 'ui';
  if (path.startsWith('source/cli/')) return 'cli';
  return 'other';
}

const UI_SURFACE = /^source\/engine\/(events\.ts|gates\.ts|protocol\/[^/]+\.ts)$/;
const CLI_SURFACE = /^source\/(engine\/index\.ts|ui\/index\.ts)$/;
const UI_PACKAGES = /^(react|ink|ink-[a-z-]+|react\/.*)$/;

/**
 * The engine's flows: the work of one command or phase each. They stand on session/ (setup,
 * config, lock, recovery, run ids, agent runners) and the layers below it (agents, judge, verify,
 * supervise, sandbox, workspace, protocol), which import no flow.
 */
const FLOWS = ['tick', 'workflow', 'parallel', 'cycle', 'planner', 'fleet', 'status'] as const;
type Flow = (typeof FLOWS)[number];

/** What other flows may import of the tick: its entries, never its phases. */
const TICK_ENTRIES = /^(run-tick|loop|limit-waits)\.ts$/;
const ANY_FILE = /./;

/**
 * Which files of another flow each flow may import (a path inside that flow's folder); a flow not
 * named is out of reach. tick, cycle and planner are the base flows: they reach no other flow.
 * `ralphy start` composes them as its phases (workflow/), with its parallel lanes in parallel/:
 * one flow in two folders. The fleet runs the workflow through its entry; status reads the state
 * files of the cycle and the workflow.
 */
const FLOW_REACH: Record<Flow, Partial<Record<Flow, RegExp>>> = {
  tick: {},
  cycle: {},
  planner: {},
  workflow: { tick: TICK_ENTRIES, cycle: ANY_FILE, planner: ANY_FILE, parallel: ANY_FILE },
  parallel: { tick: TICK_ENTRIES, workflow: ANY_FILE },
  // A fleet run drives the workflow, whose cycle engine needs the cycle's runners built on the worker.
  fleet: { workflow: /^run-workflow\.ts$/, cycle: /^runners\.ts$/ },
  status: { cycle: /^status-lines\.ts$/, workflow: /^workflow-store\.ts$/ },
};

/** Shared pieces whose home is in workspace/ but which flows take through session/. */
const THROUGH_SESSION = /^source\/engine\/workspace\/(lock|load-config)\.ts$/;

/** The only files that start child processes: the process port and the git port. */
const CHILD_PROCESS_PACKAGES = /^(node:)?child_process$|^execa$/;
const CHILD_PROCESS_OWNERS = new Set([
  'source/engine/supervise/run-process.ts',
  'source/engine/judge/git.ts',
  // The demo is a launcher, not the runner: it hands the terminal to the real CLI (stdio
  // inherited, which the process port never does) and sets up its throwaway repository with git.
  'source/demo/run-demo.ts',
  'source/demo/demo-sandbox.ts',
]);

/** What the programs outside the three layers may use (they ship in dist/ but are not the app). */
const OTHER_SURFACE: readonly { readonly dir: string; readonly may: RegExp }[] = [
  {
    // npm run demo: finds the real claude, the bundled example, tells CI from a terminal, and
    // asks the sandbox's own probe whether bubblewrap works here (else the demo opts out).
    dir: 'source/demo/',
    may: /^source\/(engine\/agents\/find-executable|engine\/workspace\/package-assets|engine\/sandbox\/sandbox|cli\/front-end\/is-ci)\.ts$/,
  },
  {
    // npm run schemas: renders schemas/ and the default config from protocol/.
    dir: 'source/tools/',
    may: /^source\/engine\/(protocol\/json-schemas|workspace\/default-config|workspace\/package-assets)\.ts$/,
  },
];

/** `source/engine/tick/run-tick.ts` → { folder: 'tick', rest: 'run-tick.ts' }; top-level files have no folder. */
function engineFolderOf(path: string): { folder: string | null; rest: string } {
  const inside = path.slice('source/engine/'.length);
  const slash = inside.indexOf('/');
  return slash < 0
    ? { folder: null, rest: inside }
    : { folder: inside.slice(0, slash), rest: inside.slice(slash + 1) };
}

const isFlow = (folder: string | null): folder is Flow => FLOWS.includes(folder as Flow);

/** The rules inside the engine: flows stand on session/, never on each other's internals. */
function engineRuleBroken(file: string, target: string): string | null {
  if (file === 'source/engine/index.ts') return null;
  const from = engineFolderOf(file);
  const to = engineFolderOf(target);
  if (from.folder === to.folder) return null;
  if (THROUGH_SESSION.test(target) && from.folder !== 'session' && from.folder !== 'workspace')
    return 'flows take the lock and the config through session/';
  if (!isFlow(to.folder)) return null;
  if (!isFlow(from.folder))
    return 'session/ and the layers below it import no flow (flows stand on them, not the reverse)';
  if (FLOW_REACH[from.folder][to.folder]?.test(to.rest)) return null;
  return to.folder === 'tick'
    ? "outside tick/ only the tick's entries: run-tick.ts, loop.ts, limit-waits.ts"
    : `${from.folder}/ does not reach into ${to.folder}/: shared pieces belong in session/`;
}

function packageRuleBroken(file: string, specifier: string): string | null {
  if (layerOf(file) === 'engine' && UI_PACKAGES.test(specifier))
    return 'the engine is headless: no React or Ink';
  if (CHILD_PROCESS_PACKAGES.test(specifier) && !CHILD_PROCESS_OWNERS.has(file))
    return 'child processes start only in the process port (supervise/run-process.ts) or the git port (judge/git.ts)';
  return null;
}

function otherRuleBroken(file: string, target: string): string | null {
  const surface = OTHER_SURFACE.find((s) => file.startsWith(s.dir));
  if (!surface || target.startsWith(surface.dir) || surface.may.test(target)) return null;
  return `${surface.dir} uses only the files listed for it in test/support/import-graph.ts`;
}

function ruleBroken(file: string, specifier: string): string | null {
  const from = layerOf(file);
  if (!specifier.startsWith('.')) return packageRuleBroken(file, specifier);
  const target = resolveFrom(file, specifier);
  const to = layerOf(target);
  const sameLayer = from === to;
  if (from === 'engine' && (to === 'ui' || to === 'cli')) return 'the engine never imports the UI or the CLI';
  if (from === 'engine' && to === 'engine') return engineRuleBroken(file, target);
  if (from === 'ui' && to === 'cli') return 'the UI never imports the CLI';
  if (from === 'ui' && to === 'engine' && !UI_SURFACE.test(target))
    return "the UI sees only the engine's public surface: events.ts, gates.ts, protocol/";
  if (from === 'cli' && !sameLayer && (to === 'engine' || to === 'ui') && !CLI_SURFACE.test(target))
    return 'the CLI goes through the front doors only: engine/index.ts and ui/index.ts';
  if (from === 'other') return otherRuleBroken(file, target);
  return null;
}

/** `files` maps a path from the repository root to its source text. */
export function boundaryViolations(files: ReadonlyMap<string, string>): Violation[] {
  const violations: Violation[] = [];
  for (const [file, source] of files) {
    for (const specifier of specifiersOf(source)) {
      const rule = ruleBroken(file, specifier);
      if (rule) violations.push({ file, imports: specifier, rule });
    }
  }
  return violations;
}

/** Every .ts and .tsx file under `dir` (relative to `root`), with its text. */
export function sourceFiles(root: string, dir = 'source'): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = join(rel, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(entry.name))
        files.set(relative('.', path), readFileSync(join(root, path), 'utf8'));
    }
  };
  walk(dir);
  return files;
}
