import { type Dirent, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FsClock } from './fs-clock.js';
import { type LinkFacts, linkFactsOf } from './stat-or-null.js';

/**
 * What changed inside one ignored folder judged by the filesystem's clock (fs-clock.ts), read in
 * one pass: one readdir per folder and one lstat per file, and nothing kept per file unless it
 * changed (issue 17: a 30k-file node_modules/ cost a map entry and several objects per file).
 *
 * Why it cannot miss a change, on the clock's device:
 * - a file whose content or metadata changed after the snapshot began has `ctime >= clock` (the
 *   kernel sets ctime on every change and nothing sets it back): every file is lstat'ed;
 * - a file created, deleted or renamed in or out of a folder changes that folder's own entry list,
 *   which sets the folder's ctime (and mtime) too. So a folder whose ctime is older than the clock
 *   holds exactly the names the snapshot listed there (the listing was taken after the clock was
 *   read): its files need no lookup in the snapshot's names and none of them can be gone;
 * - a folder that is no longer there, or cannot be read, counts as changed: every name the
 *   snapshot had below it that is not seen now is reported deleted.
 * Names are compared only in folders whose ctime moved.
 */

export interface ClockWalk {
  readonly created: string[];
  readonly modified: string[];
  readonly deleted: string[];
  /** lstat of the files changed since `sinceMs`, by absolute path (for the unsafe-files walk). */
  readonly recent: Map<string, LinkFacts>;
  /** False when the walk stopped at `maxFiles` (then the folder is not handed on as walked). */
  readonly complete: boolean;
}

export function walkByClock(
  root: string,
  folder: string,
  /** Every file the snapshot listed below `folder`, repository-relative. */
  names: ReadonlySet<string>,
  clock: FsClock,
  sinceMs: number,
  maxFiles: number,
): ClockWalk {
  const walker = new ClockWalker(names, clock.sinceMs, sinceMs, maxFiles);
  const complete = walker.folder(join(root, folder).replace(/\/$/, ''), folder);
  return { ...walker.out, deleted: walker.deleted(), recent: walker.recent, complete };
}

class ClockWalker {
  readonly out = { created: [] as string[], modified: [] as string[] };
  readonly recent = new Map<string, LinkFacts>();
  /** Folders read, by relative path (with `/`): true when their ctime moved. */
  private readonly folders = new Map<string, boolean>();
  /** Files seen in folders whose ctime moved. */
  private readonly seen = new Set<string>();
  private files = 0;

  constructor(
    private readonly names: ReadonlySet<string>,
    private readonly clockMs: number,
    private readonly sinceMs: number,
    private readonly maxFiles: number,
  ) {}

  /** Reads one folder and everything below it; false when the file cap stopped the walk. */
  folder(abs: string, rel: string): boolean {
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      return true;
    }
    // After the readdir: a change to the list before it moved the ctime read here.
    const self = lstatSync(abs, { throwIfNoEntry: false });
    if (!self?.isDirectory()) return true;
    const moved = self.ctimeMs >= this.clockMs;
    this.folders.set(rel, moved);
    for (const entry of entries) {
      // Not path.join (it normalizes every path): `abs` is already normal, a readdir name has no slash.
      const childAbs = `${abs}/${entry.name}`;
      const childRel = `${rel}${entry.name}`;
      const going = entry.isDirectory()
        ? this.folder(childAbs, `${childRel}/`)
        : this.file(childAbs, childRel, moved);
      if (!going) return false;
    }
    return true;
  }

  private file(abs: string, rel: string, folderMoved: boolean): boolean {
    if (++this.files > this.maxFiles) return false;
    const stat = lstatSync(abs, { throwIfNoEntry: false });
    if (!stat) return true;
    if (stat.ctimeMs >= this.sinceMs) this.recent.set(abs, linkFactsOf(stat));
    if (folderMoved) this.seen.add(rel);
    if (folderMoved && !this.names.has(rel)) this.out.created.push(rel);
    else if (stat.ctimeMs >= this.clockMs) this.out.modified.push(rel);
    return true;
  }

  /** Names of the snapshot in folders that moved (or are gone) and not seen now. */
  deleted(): string[] {
    const gone: string[] = [];
    for (const name of this.names) {
      const moved = this.folders.get(name.slice(0, name.lastIndexOf('/') + 1));
      if (moved === false || (moved === true && this.seen.has(name))) continue;
      gone.push(name);
    }
    return gone;
  }
}
