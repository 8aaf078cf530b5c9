import { chmod, lstat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { type Git, splitNul } from '../judge/git.js';
import { writeFileAtomic } from '../workspace/atomic-write.js';
import { resolvesUnderRoot } from '../workspace/safe-path.js';
import type { CycleContext } from './context.js';
import { commitPaths } from './git-ops.js';
import { readRepoFile } from './track-docs.js';

/**
 * Seed 003 pick_track 5, PHASE_COMPLETE: "update ROADMAP status". ROADMAP.md is the humans'
 * document, so the runner writes one marked block at its end (replaced on every update, created
 * when absent), never touches the rest, and commits only its own change. Whenever it cannot be
 * sure of that, it skips the update and says why: the next phase completion writes the whole
 * block again, so nothing is lost by skipping.
 */

/** Any text starting so is taken for the opening marker, even if a human edited its comment. */
const OPEN_PREFIX = '<!-- relais:phase-status';
const STATUS_OPEN = `${OPEN_PREFIX} (written by \`relais cycle\`; replaced when a phase completes) -->`;
const STATUS_CLOSE = '<!-- /relais:phase-status -->';

export interface RoadmapProgress {
  readonly phases_completed: readonly string[];
  /** null when the roadmap is finished. */
  readonly current_phase: string | null;
}

/** What the update needs of the cycle. */
export type RoadmapPlace = Pick<CycleContext, 'root' | 'docsDir' | 'git'>;

export type RoadmapUpdate =
  | { readonly ok: true; readonly path: string; readonly changed: boolean }
  | { readonly ok: false; readonly path: string; readonly reason: string };

/** Writes ROADMAP.md's status block and commits it with `message`, or says why it did not. */
export async function updateRoadmapStatus(
  place: RoadmapPlace,
  progress: RoadmapProgress,
  message: string,
): Promise<RoadmapUpdate> {
  const full = join(place.docsDir, 'ROADMAP.md');
  const path = relative(place.root, full);
  const skip = (reason: string): RoadmapUpdate => ({ ok: false, path, reason });
  const unsafe = await unsafeWay(place.root, path);
  if (unsafe) return skip(unsafe);
  const before = await lstat(full).catch(() => null);
  const text = await readRepoFile(place.root, path);
  if (text === null || !before) return skip('it is missing, not a regular file, or unreadable');
  // Committing the file would put a human's pending edits under the runner's message.
  const pending = await humanChanges(place.git, path);
  if (pending) return skip(pending);
  const next = withStatusBlock(text, renderBlock(progress));
  if (!next.ok) return skip(next.reason);
  if (next.text === text) return { ok: true, path, changed: false };
  // Temp file and rename in the same folder: a reader sees the old file or the new one, never half.
  await writeFileAtomic(full, next.text);
  const mode = before.mode & 0o7777;
  if (((await lstat(full)).mode & 0o7777) !== mode) await chmod(full, mode);
  await commitPaths(place.git, [path], message);
  return { ok: true, path, changed: true };
}

/**
 * The file must resolve inside the repository with no symlink on the way from the root (the docs
 * folder included): the temp file and the rename must land where git sees ROADMAP.md.
 */
async function unsafeWay(root: string, path: string): Promise<string | null> {
  if (!(await resolvesUnderRoot(root, path))) return 'it resolves outside the repository';
  const parts = path.split(sep);
  for (let i = 1; i <= parts.length; i++) {
    const stat = await lstat(join(root, ...parts.slice(0, i))).catch(() => null);
    if (stat?.isSymbolicLink()) return `${parts.slice(0, i).join('/')} is a symlink`;
    if (!stat) break;
  }
  return null;
}

/** Why the file is not exactly as committed at HEAD (untracked, staged or edited), or null. */
async function humanChanges(git: Git, path: string): Promise<string | null> {
  const tracked = splitNul(await git.ok(['ls-files', '-z', '--', path]));
  if (tracked.length === 0) return 'it is not tracked by git (commit it first)';
  const status = splitNul(
    await git.ok(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames', '--', path]),
  );
  if (status.length > 0) return 'it has uncommitted changes (commit or discard them first)';
  return null;
}

function renderBlock(progress: RoadmapProgress): string {
  return [
    STATUS_OPEN,
    '## Phase status',
    '',
    ...progress.phases_completed.map((p) => `- ${p}: complete`),
    progress.current_phase === null ? '- Roadmap complete.' : `- ${progress.current_phase}: in progress`,
    STATUS_CLOSE,
  ].join('\n');
}

/**
 * The text with its status block replaced, or the block appended when there is none. A marker
 * without its partner, markers out of order or more than one block: the runner cannot tell where
 * its block ends and the humans' text begins, so it writes nothing.
 */
function withStatusBlock(
  text: string,
  block: string,
): { ok: true; text: string } | { ok: false; reason: string } {
  const opens = positions(text, OPEN_PREFIX);
  const closes = positions(text, STATUS_CLOSE);
  const [start] = opens;
  const [end] = closes;
  if (start === undefined && end === undefined)
    return { ok: true, text: `${text}${text.endsWith('\n') ? '' : '\n'}\n${block}\n` };
  if (opens.length === 1 && closes.length === 1 && start !== undefined && end !== undefined && start < end)
    return { ok: true, text: `${text.slice(0, start)}${block}${text.slice(end + STATUS_CLOSE.length)}` };
  return {
    ok: false,
    reason: `its phase-status markers are broken (${opens.length} opening, ${closes.length} closing${opens.length === 1 && closes.length === 1 ? ', out of order' : ''}): leave one "${OPEN_PREFIX} ... -->" line before one "${STATUS_CLOSE}" line, or remove both`,
  };
}

function positions(text: string, marker: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(marker); at !== -1; at = text.indexOf(marker, at + marker.length))
    found.push(at);
  return found;
}
