import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import micromatch from 'micromatch';
import type { EffectiveScope } from '../../judge/scope-rules.js';
import type { Code } from '../../protocol/codes.js';
import { resolvesUnderRoot } from '../../workspace/safe-path.js';
import { parsePatch } from './parse-patch.js';

/**
 * Seed 001 PR4 validation, before anything is applied: every path must be a plain relative path
 * that stays in the repository with no symlink in it or above it (else STOP_PATCH_INVALID), and
 * must pass the same scope rules the judge applies afterwards, with the judge's codes.
 */

export type PatchVerdict = { ok: true; paths: string[] } | { ok: false; code: Code; problems: string[] };

export interface PatchRules {
  readonly root: string;
  readonly scope: EffectiveScope;
  readonly runnerOwnedGlobs: readonly string[];
}

const MATCH = { dot: true } as const;

export async function validatePatch(
  text: string,
  rules: PatchRules,
  extraPaths: readonly string[] = [],
): Promise<PatchVerdict> {
  const parsed = parsePatch(text);
  if (parsed.problems.length > 0) return { ok: false, code: 'STOP_PATCH_INVALID', problems: parsed.problems };
  const paths = [...new Set([...parsed.files.flatMap((f) => f.paths), ...extraPaths])].sort();
  const creates = new Set(parsed.files.flatMap((f) => f.creates).filter((p) => p !== '(pending)'));
  const unsafe: string[] = [];
  for (const path of paths) {
    const reason = await unsafePath(rules.root, path);
    if (reason) unsafe.push(`${JSON.stringify(path)}: ${reason}`);
    // A hunk `@@ -0,0 +1 @@` creates a file without any /dev/null header: absence is what counts.
    else if (!(await lstat(join(rules.root, path)).catch(() => null))) creates.add(path);
  }
  if (unsafe.length > 0) return { ok: false, code: 'STOP_PATCH_INVALID', problems: unsafe };
  const { scope } = rules;
  const rows: Array<[Code, string[]]> = [
    [
      'STOP_RUNNER_OWNED_MUTATION',
      paths
        .filter((p) => micromatch.isMatch(p, [...rules.runnerOwnedGlobs], MATCH))
        .map((p) => `runner-owned path: ${p}`),
    ],
    [
      'STOP_SCOPE_VIOLATION_FORBIDDEN',
      paths
        .filter((p) => micromatch.isMatch(p, [...scope.forbidden], MATCH))
        .map((p) => `forbidden path: ${p}`),
    ],
    [
      'STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED',
      paths
        .filter(
          (p) =>
            !micromatch.isMatch(p, [...scope.taskAllowed], MATCH) ||
            !micromatch.isMatch(p, [...scope.configAllowed], MATCH),
        )
        .map((p) => `outside allowed globs: ${p}`),
    ],
    ['STOP_SCOPE_VIOLATION_NEW_FILE', scope.allowNewFiles ? [] : [...creates].map((p) => `new file: ${p}`)],
    [
      'STOP_LOCKFILE_CHANGE_FORBIDDEN',
      scope.allowLockfileChanges
        ? []
        : paths
            .filter((p) => scope.lockfiles.includes(p.slice(p.lastIndexOf('/') + 1)))
            .map((p) => `lockfile: ${p}`),
    ],
  ];
  const first = rows.find(([, problems]) => problems.length > 0);
  return first ? { ok: false, code: first[0], problems: first[1] } : { ok: true, paths };
}

async function unsafePath(root: string, path: string): Promise<string | null> {
  if (path.length === 0) return 'empty path';
  if (path.includes('\0')) return 'contains NUL';
  if (path.startsWith('/')) return 'absolute path';
  if (path.includes('\\')) return 'contains a backslash';
  const parts = path.split('/');
  if (parts.includes('..')) return 'contains ".."';
  if (parts.some((p) => p === '' || p === '.')) return 'empty or "." path component';
  if (!(await resolvesUnderRoot(root, path))) return 'resolves outside the repository';
  // A symlink anywhere on the way would let the write land somewhere else.
  for (let i = 1; i <= parts.length; i++) {
    const stat = await lstat(join(root, ...parts.slice(0, i))).catch(() => null);
    if (stat?.isSymbolicLink()) return `${parts.slice(0, i).join('/')} is a symlink`;
    if (!stat) break;
  }
  return null;
}
