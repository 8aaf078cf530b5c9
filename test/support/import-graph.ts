import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The layers of docs/ARCHITECTURE.md, enforced over the import graph (every static import, re-export and
 * dynamic import of every source file): the engine never imports the UI or the CLI (nor React or
 * Ink); the UI reaches the engine only through its public surface (events, gates, protocol
 * types); the CLI only through the engine's front door (engine/index.ts) and the UI's (ui/index.ts).
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

function ruleBroken(file: string, specifier: string): string | null {
  const from = layerOf(file);
  if (!specifier.startsWith('.')) {
    return from === 'engine' && UI_PACKAGES.test(specifier)
      ? 'the engine is headless: no React or Ink'
      : null;
  }
  const target = resolveFrom(file, specifier);
  const to = layerOf(target);
  const sameLayer = from === to;
  if (from === 'engine' && (to === 'ui' || to === 'cli')) return 'the engine never imports the UI or the CLI';
  if (from === 'ui' && to === 'cli') return 'the UI never imports the CLI';
  if (from === 'ui' && to === 'engine' && !UI_SURFACE.test(target))
    return "the UI sees only the engine's public surface: events.ts, gates.ts, protocol/";
  if (from === 'cli' && !sameLayer && (to === 'engine' || to === 'ui') && !CLI_SURFACE.test(target))
    return 'the CLI goes through the front doors only: engine/index.ts and ui/index.ts';
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
