import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { isTestPath } from './facts.js';

/**
 * Seed 003 P12 "detects greenfield/brownfield/returning via heuristics". Ours, in this order:
 * - returning: the P12_DONE marker or the P2_DONE marker is there (mapped or brainstormed before);
 * - brownfield: at least BROWNFIELD_MIN_FILES tracked files that are not boilerplate (a README,
 *   a licence, git and editor settings, relais' own config, workspace and docs folder);
 * - greenfield: anything less (an empty repository, a README alone, no commit yet).
 */

export type ProjectKind = 'greenfield' | 'brownfield' | 'returning';

export const BROWNFIELD_MIN_FILES = 3;

const BOILERPLATE = [
  /^readme(\.[a-z]+)?$/i,
  /^licen[cs]e(\.[a-z]+)?$/i,
  /^copying(\.[a-z]+)?$/i,
  /^changelog(\.[a-z]+)?$/i,
  /^contributing(\.[a-z]+)?$/i,
  /^code_of_conduct(\.[a-z]+)?$/i,
  /^\.git(ignore|attributes|keep)$/,
  /^\.editorconfig$/,
  /^\.(vscode|idea)\//,
  /^relais\.config\.json$/,
  /^\.github\/(ISSUE_TEMPLATE|PULL_REQUEST_TEMPLATE|FUNDING)/,
];

export interface Detection {
  readonly kind: ProjectKind;
  /** What the runner saw, in one line (shown and logged). */
  readonly why: string;
  /** The non-boilerplate tracked files (brownfield evidence). */
  readonly projectFiles: number;
}

export async function detectProject(
  root: string,
  docsDir: string,
  tracked: readonly string[],
  workspaceDir = 'relais',
): Promise<Detection> {
  const own = [docsDir, workspaceDir];
  const projectFiles = tracked.filter(
    (p) => !BOILERPLATE.some((re) => re.test(p)) && !own.some((d) => p === d || p.startsWith(`${d}/`)),
  );
  const markers = [];
  for (const marker of [`${docsDir}/p12/P12_DONE`, `${docsDir}/P2_DONE`]) {
    const info = await lstat(join(root, marker)).catch(() => null);
    if (info?.isFile()) markers.push(marker);
  }
  if (markers.length > 0)
    return { kind: 'returning', why: `${markers.join(' and ')} found`, projectFiles: projectFiles.length };
  if (projectFiles.length >= BROWNFIELD_MIN_FILES) {
    const tests = projectFiles.filter(isTestPath).length;
    return {
      kind: 'brownfield',
      why: `${projectFiles.length} tracked project files (${tests} tests)`,
      projectFiles: projectFiles.length,
    };
  }
  return {
    kind: 'greenfield',
    why: `${projectFiles.length} tracked project file(s), fewer than ${BROWNFIELD_MIN_FILES}`,
    projectFiles: projectFiles.length,
  };
}
