import type { Inflight, InflightEntry } from '../protocol/inflight.js';
import type { EntryState, FsSnapshot, SnapshotRoot } from './fs-snapshot.js';
import type { ProtectedGuard } from './protected-files.js';

/**
 * A protected-files guard written to disk and read back by the next run, so a run killed
 * mid-tick can have its git config and hooks restored before any git command.
 */

export interface RecordedGuard {
  readonly roots: Inflight['git_roots'];
  readonly files: InflightEntry[];
}

/** The part of a guard whose paths pass `keep`, roots and entries alike. */
export function recordGuard(guard: ProtectedGuard, keep: (path: string) => boolean): RecordedGuard {
  return {
    roots: guard.roots.filter((r) => keep(r.path)).map((r) => ({ path: r.path, recursive: r.recursive })),
    files: [...guard.before]
      .filter(([path]) => keep(path))
      .map(([path, entry]) => serializeEntry(path, entry)),
  };
}

function serializeEntry(path: string, entry: EntryState | null): InflightEntry {
  if (entry === null) return { path, kind: 'absent', mode: 0, content_base64: null, target: null };
  if (entry.kind === 'symlink')
    return { path, kind: 'symlink', mode: 0, content_base64: null, target: entry.target };
  if (entry.kind === 'dir')
    return { path, kind: 'dir', mode: entry.mode, content_base64: null, target: null };
  return {
    path,
    kind: 'file',
    mode: entry.mode,
    content_base64: entry.content?.toString('base64') ?? null,
    target: null,
  };
}

/**
 * Rebuilds the guard from its recorded roots. Only the recorded roots are walked again, exactly as
 * before: a root that was a single path must never turn into a folder walk (restoring would then
 * delete everything in that folder that was not recorded).
 */
export function replayGuard(
  recorded: RecordedGuard,
  identities: Record<string, string | null> = {},
): ProtectedGuard {
  const before = new Map<string, EntryState | null>();
  for (const f of recorded.files) before.set(f.path, deserializeEntry(f));
  const roots: SnapshotRoot[] = recorded.roots.map((r) => ({
    path: r.path,
    recursive: r.recursive,
    keepContent: () => true,
  }));
  return { roots, before: before as FsSnapshot, identities: new Map(Object.entries(identities)) };
}

function deserializeEntry(f: InflightEntry): EntryState | null {
  switch (f.kind) {
    case 'absent':
      return null;
    case 'symlink':
      return { kind: 'symlink', target: f.target ?? '' };
    case 'dir':
      return { kind: 'dir', mode: f.mode };
    case 'file': {
      const content = f.content_base64 === null ? null : Buffer.from(f.content_base64, 'base64');
      return { kind: 'file', mode: f.mode, size: content?.length ?? 0, mtimeMs: 0, ino: 0, content };
    }
  }
}
