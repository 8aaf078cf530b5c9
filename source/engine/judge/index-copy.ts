import { readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The repository's index as it was right before BUILD, kept in memory (a few MB even at 100k
 * files). After the build the judge writes it to a fresh temporary file and asks git about the
 * worktree through it: its stat data lets `git status` skip the files the build did not touch,
 * and its cache-tree lets `write-tree` rebuild only the folders that changed. Kept in memory, not
 * on disk, so nothing the builder runs can edit it; `.git/index` itself may have been rewritten by
 * the builder and is never trusted after BUILD.
 */

export interface IndexCopy {
  readonly bytes: Buffer;
  /** The index file's mtime: git's racy-entry check compares entry mtimes with it. */
  readonly mtimeMs: number;
}

/** Null when git would need more than the one file (a split index) or there is no index yet. */
export async function keepIndexCopy(gitDir: string): Promise<IndexCopy | null> {
  // A split index names a shared index beside .git/index; a copy elsewhere would not find it.
  const names = await readdir(gitDir).catch(() => [] as string[]);
  if (names.some((n) => n.startsWith('sharedindex.'))) return null;
  const file = join(gitDir, 'index');
  try {
    const [info, bytes] = await Promise.all([stat(file), readFile(file)]);
    if (info.size !== bytes.length) return null;
    return { bytes, mtimeMs: info.mtimeMs };
  } catch {
    return null;
  }
}

/**
 * Writes the copy to `path` with the original's mtime, rounded down: git treats an entry whose
 * mtime is not older than the index file as "racily clean" and compares its content, so an
 * earlier (never later) timestamp can only make git look at more files, not fewer.
 */
export async function writeIndexCopy(copy: IndexCopy, path: string): Promise<void> {
  await writeFile(path, copy.bytes, { mode: 0o600 });
  const seconds = Math.floor(copy.mtimeMs) / 1000;
  await utimes(path, seconds, seconds);
}

export type IndexFlagName = 'assume-unchanged' | 'skip-worktree';

const ENTRY_STAT_BYTES = 40;
const ASSUME_VALID = 0x8000;
const EXTENDED = 0x4000;
const NAME_MASK = 0x0fff;
const SKIP_WORKTREE = 0x4000;
const DIRECTORY_MODE = 0o040000;

/**
 * The index flags (`ls-files -v` tags) read straight from the index bytes, without a git process
 * or a line per entry: only flagged paths are decoded. Index versions 2 and 3 (git's default) with
 * SHA-1 or SHA-256 object names; anything else (version 4's compressed paths, a sparse index's
 * folder entries, bytes that do not parse exactly) returns null and the caller asks git.
 */
export function indexFlags(bytes: Buffer): Map<string, IndexFlagName> | null {
  return firstParse(bytes, () => {
    const flagged = new Map<string, IndexFlagName>();
    const visit: EntryVisit = (nameAt, nameEnd, flag) => {
      if (flag) flagged.set(bytes.toString('utf8', nameAt, nameEnd), flag);
    };
    return { visit, result: flagged };
  });
}

/** Thrown while the index's paths are read when its bytes stop parsing exactly: ask git instead. */
export class IndexNotParsed extends Error {}

/**
 * The paths `git ls-files -z` prints, in index order, read from the index bytes only as far as the
 * caller reads them (issue 17: the task's fence check stops at its first path inside both fences,
 * and decoding all 100k paths first cost 40-50 ms of a tick). `hashBytes` is the repository's
 * object-name size (20 for SHA-1, 32 for SHA-256: HEAD's id says which). Null when the header is
 * not index version 2 or 3; IndexNotParsed is thrown at the first entry that does not parse
 * exactly (version 4's compressed names, a sparse index's folder entries), or after the last one
 * when what follows is not extensions and the checksum.
 */
export function indexPathsLazily(bytes: Buffer, hashBytes: number): Iterable<string> | null {
  const version = indexVersion(bytes);
  return version === null ? null : pathsOf(bytes, version, hashBytes);
}

function* pathsOf(bytes: Buffer, version: number, hashBytes: number): Generator<string> {
  const count = bytes.readUInt32BE(8);
  const entry = newEntry();
  let at = 12;
  for (let i = 0; i < count; i++) {
    if (!parseEntry(bytes, version, at, hashBytes, entry))
      throw new IndexNotParsed(`index entry ${i + 1} of ${count} does not parse`);
    yield bytes.toString('utf8', entry.nameAt, entry.nameEnd);
    at = entry.next;
  }
  if (!endParses(bytes, at, hashBytes))
    throw new IndexNotParsed('what follows the index entries does not parse');
}

/** Called for each entry with where its name lies in the bytes and its flag. */
type EntryVisit = (nameAt: number, nameEnd: number, flag: IndexFlagName | null) => void;

/** The result of the first object-name size (SHA-1, then SHA-256) the bytes parse exactly with. */
function firstParse<T>(bytes: Buffer, start: () => { visit: EntryVisit; result: T }): T | null {
  const version = indexVersion(bytes);
  if (version === null) return null;
  const count = bytes.readUInt32BE(8);
  for (const hashBytes of [20, 32]) {
    const { visit, result } = start();
    if (parseEntries(bytes, version, count, hashBytes, visit)) return result;
  }
  return null;
}

/** 2 or 3, the versions parsed here; null for anything else (version 4, not an index). */
function indexVersion(bytes: Buffer): number | null {
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== 'DIRC') return null;
  const version = bytes.readUInt32BE(4);
  return version === 2 || version === 3 ? version : null;
}

function parseEntries(
  bytes: Buffer,
  version: number,
  count: number,
  hashBytes: number,
  visit: EntryVisit,
): boolean {
  const entry = newEntry();
  let at = 12;
  for (let i = 0; i < count; i++) {
    if (!parseEntry(bytes, version, at, hashBytes, entry)) return false;
    visit(entry.nameAt, entry.nameEnd, entry.flag);
    at = entry.next;
  }
  return endParses(bytes, at, hashBytes);
}

/** What follows the entries is extensions (a 4-letter signature each) and the trailing checksum. */
function endParses(bytes: Buffer, at: number, hashBytes: number): boolean {
  const rest = bytes.length - at;
  if (rest === hashBytes) return true;
  if (rest < hashBytes + 8) return false;
  return /^[A-Za-z]{4}$/.test(bytes.toString('latin1', at, at + 4));
}

/** One parsed entry: where its name lies, its flag if any, and where the next entry begins. */
interface ParsedEntry {
  nameAt: number;
  nameEnd: number;
  flag: IndexFlagName | null;
  next: number;
}

const newEntry = (): ParsedEntry => ({ nameAt: 0, nameEnd: 0, flag: null, next: 0 });

/** Parses the entry at `start` into `entry` (one object for every entry of a walk); false when malformed. */
function parseEntry(
  bytes: Buffer,
  version: number,
  start: number,
  hashBytes: number,
  entry: ParsedEntry,
): boolean {
  const flagsAt = start + ENTRY_STAT_BYTES + hashBytes;
  if (flagsAt + 2 > bytes.length) return false;
  // Bytes read by hand, not with Buffer's readUInt*BE: a tick walks the index once, mostly before
  // V8 optimises the loop, and there each of those calls costs far more than the arithmetic.
  const modeAt = start + 24;
  if (
    bytes[modeAt] === 0 &&
    bytes[modeAt + 1] === 0 &&
    ((bytes[modeAt + 2] as number) << 8) + (bytes[modeAt + 3] as number) === DIRECTORY_MODE
  )
    return false;
  const flags = ((bytes[flagsAt] as number) << 8) + (bytes[flagsAt + 1] as number);
  let nameAt = flagsAt + 2;
  let extended = 0;
  if (flags & EXTENDED) {
    if (version < 3 || nameAt + 2 > bytes.length) return false;
    extended = ((bytes[nameAt] as number) << 8) + (bytes[nameAt + 1] as number);
    nameAt += 2;
  }
  const nul = bytes.indexOf(0, nameAt);
  if (nul < 0) return false;
  const nameLength = nul - nameAt;
  if ((flags & NAME_MASK) !== Math.min(nameLength, NAME_MASK)) return false;
  // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
  const next = start + ((nameAt - start + nameLength + 8) & ~7);
  if (next > bytes.length) return false;
  for (let p = nul; p < next; p++) if (bytes[p] !== 0) return false;
  entry.nameAt = nameAt;
  entry.nameEnd = nul;
  entry.flag = flags & ASSUME_VALID ? 'assume-unchanged' : extended & SKIP_WORKTREE ? 'skip-worktree' : null;
  entry.next = next;
  return true;
}
