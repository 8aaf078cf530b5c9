import { readUntrustedFile } from '../workspace/safe-read.js';

/**
 * PRD.md, the workflow's input (seed 002 §7): at least a `# Title` and an objective section
 * (`## Objective`, or the seed's `## Objectif`). Read as untrusted and capped.
 */
export interface Prd {
  readonly title: string;
  readonly text: string;
  /** Set when the PRD is a GitHub issue's planned thread (`ralphy start --issue`), not PRD.md. */
  readonly issue?: number;
}

const MAX_PRD_BYTES = 256 * 1024;

export async function readPrd(
  path: string,
): Promise<{ ok: true; prd: Prd } | { ok: false; problem: string }> {
  const read = await readUntrustedFile(path, MAX_PRD_BYTES);
  if (!read.ok)
    return {
      ok: false,
      problem: `PRD.md ${read.reason === 'missing' ? 'is missing' : read.reason}: write one with a "# Title" and an "## Objective" section`,
    };
  const title = /^#\s+(.+?)\s*$/m.exec(read.text)?.[1];
  if (!title) return { ok: false, problem: 'PRD.md has no "# Title" line' };
  if (!/^##\s+(Objective|Objectif|Goal|Goals)\b/im.test(read.text))
    return { ok: false, problem: 'PRD.md has no "## Objective" section' };
  return { ok: true, prd: { title, text: read.text } };
}

/** `ralphy/add-slugify` from "Add slugify!": a branch name git accepts. */
export function branchSlug(title: string): string {
  const slug = title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  return slug || 'workflow';
}
