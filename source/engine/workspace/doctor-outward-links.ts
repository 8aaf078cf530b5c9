import { readlink, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import micromatch from 'micromatch';
import { type Git, splitNul } from '../judge/git.js';
import type { RelaisConfig } from '../protocol/config.js';
import { sandboxSettings } from '../sandbox/sandbox.js';
import type { DoctorCheck } from './doctor-checks.js';

/**
 * With the sandbox off, a tracked symlink inside the fence that points out of the repository is
 * a door the judge cannot watch: a shell write through it lands outside, where the judge (which
 * compares the repository's tree) sees nothing and rolls nothing back. Said before the first run.
 * With the sandbox on, such writes fail (read-only outside the writable folders): nothing to say.
 */
export async function checkOutwardLinks(
  git: Git,
  root: string,
  config: RelaisConfig,
): Promise<DoctorCheck[]> {
  if (sandboxSettings(config).mode !== 'off') return [];
  const links = await trackedSymlinks(git);
  const fenced = micromatch(links, [...config.scope.default_allowed_globs], { dot: true });
  const realRoot = await realpath(root).catch(() => root);
  const outward: string[] = [];
  for (const link of fenced) {
    const target = await readlink(join(root, link)).catch(() => null);
    if (target === null) continue;
    const resolved = resolve(dirname(join(realRoot, link)), target);
    const landing = await realpath(resolved).catch(() => resolved);
    const rel = relative(realRoot, landing);
    if (rel === '..' || rel.startsWith('../') || isAbsolute(rel)) outward.push(`${link} -> ${target}`);
  }
  if (outward.length === 0) return [];
  return [
    {
      name: 'links',
      status: 'warn',
      detail: `${outward.slice(0, 5).join(', ')}${outward.length > 5 ? ` (and ${outward.length - 5} more)` : ''} inside the fence lead out of the repository: with the sandbox off, a shell write through them is neither refused nor seen by the judge`,
      fix: 'Turn the sandbox on (remove "sandbox": "off"), or take these links out of scope.default_allowed_globs.',
    },
  ];
}

/** Tracked symlinks (git mode 120000), by path. */
async function trackedSymlinks(git: Git): Promise<string[]> {
  const out = await git.run(['ls-files', '-s', '-z']);
  if (out.code !== 0) return [];
  return splitNul(out.stdout)
    .filter((entry) => entry.startsWith('120000 '))
    .map((entry) => entry.slice(entry.indexOf('\t') + 1));
}
