import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/**
 * relais/INFLIGHT.json: written right before BUILD, removed once the tick has committed or rolled
 * back cleanly. If it is still there when the next run takes the lock, that run was killed
 * mid-tick (a second Ctrl-C, kill -9, a crash) and the next run recovers from it. It carries the
 * repository's git control files as they were (so they are restored before any git command), the
 * agent's process group, and fingerprints (never contents) of the ignored files.
 */

const snapshotEntry = lazySchema(() =>
  z.strictObject({
    path: z.string().min(1),
    kind: z.enum(['absent', 'file', 'dir', 'symlink']),
    mode: z.int().min(0),
    content_base64: z.string().nullable(),
    target: z.string().nullable(),
  }),
);

const fingerprint = lazySchema(() =>
  z.strictObject({
    path: z.string().min(1),
    size: z.number().min(0),
    mtime_ms: z.number(),
    ino: z.number(),
    dir: z.boolean(),
  }),
);

/**
 * Fingerprints in one string (issue 17), as runs write them now: a row per ignored path, five
 * NUL-separated fields each (a NUL is the one byte no path holds), rows joined by NUL too:
 * kind (`e` an ignored file, `d` an ignored folder, `i` a file inside an ignored folder), path,
 * size, mtime_ms, ino. 3,000 ignored build outputs beside their sources (`*.o`) made arrays of
 * objects that every write and read of this file checked one field at a time, three times a tick
 * (about 70 ms); the fields are checked in one pass over the split string. Not one regular
 * expression over the whole string: V8 keeps backtracking state per repetition, and about a million
 * rows overflowed its stack (a throw, where a bad file must read as invalid). The JSON Schema
 * carries that whole-string pattern, for other validators.
 */
const ROW_NUMBER = '-?\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?';
const FINGERPRINT_ROW = `[edi]\\u0000[^\\u0000]+\\u0000\\d+\\u0000${ROW_NUMBER}\\u0000\\d+`;
const FINGERPRINT_ROWS_PATTERN = `^(?:${FINGERPRINT_ROW}(?:\\u0000${FINGERPRINT_ROW})*)?$`;
/** Each field of a row, in order (a path is any non-empty text: the split leaves no NUL in it). */
const ROW_FIELD_PATTERNS = [/^[edi]$/, /^./s, /^\d+$/, new RegExp(`^${ROW_NUMBER}$`), /^\d+$/];
const ROW_FIELDS = ROW_FIELD_PATTERNS.length;

export interface FingerprintRow {
  readonly path: string;
  readonly size: number;
  readonly mtime_ms: number;
  readonly ino: number;
  readonly dir: boolean;
}

export function fingerprintRowsToNul(
  ignored: readonly FingerprintRow[],
  inside: readonly FingerprintRow[],
): string {
  const fields: string[] = [];
  const add = (kind: string, r: FingerprintRow) =>
    fields.push(kind, r.path, String(r.size), String(r.mtime_ms), String(r.ino));
  for (const r of ignored) add(r.dir ? 'd' : 'e', r);
  for (const r of inside) add('i', r);
  return fields.join('\0');
}

/** Whether `text` is rows as `fingerprintRowsToNul` writes them (none: the empty string). */
export function fingerprintRowsValid(text: string): boolean {
  if (text === '') return true;
  const fields = text.split('\0');
  if (fields.length % ROW_FIELDS !== 0) return false;
  for (let i = 0; i < fields.length; i++)
    if (!ROW_FIELD_PATTERNS[i % ROW_FIELDS]?.test(fields[i] as string)) return false;
  return true;
}

/** The rows of a string the schema accepted (`fingerprintRowsValid`). */
export function fingerprintRowsFromNul(text: string): {
  ignored: FingerprintRow[];
  inside: FingerprintRow[];
} {
  const ignored: FingerprintRow[] = [];
  const inside: FingerprintRow[] = [];
  if (text === '') return { ignored, inside };
  const fields = text.split('\0');
  for (let i = 0; i + ROW_FIELDS <= fields.length; i += ROW_FIELDS) {
    const kind = fields[i];
    const row: FingerprintRow = {
      path: fields[i + 1] as string,
      size: Number(fields[i + 2]),
      mtime_ms: Number(fields[i + 3]),
      ino: Number(fields[i + 4]),
      dir: kind === 'd',
    };
    (kind === 'i' ? inside : ignored).push(row);
  }
  return { ignored, inside };
}

export const inflightSchema = lazySchema(() =>
  z.strictObject({
    run_id: z.string().min(1),
    base_commit: z.string().min(7).max(64),
    branch_ref: z.string().nullable(),
    started_at: z.iso.datetime(),
    /** device:inode of the git folders: a replaced .git is never touched by the recovery. */
    git_dir_identities: z.record(z.string(), z.string().nullable()),
    /** The snapshot roots exactly as taken: which were single files and which were walked folders. */
    git_roots: z.array(z.strictObject({ path: z.string().min(1), recursive: z.boolean() })),
    git_files: z.array(snapshotEntry),
    /**
     * Git config files outside the repository (~/.gitconfig may hold credentials) are kept in a
     * private file in the user's state folder instead of the project; this is its path.
     */
    outside_config_file: z.string().nullable(),
    /** Set just before the branch moves to the judged commit: only that exact commit may be kept. */
    committed: z.string().min(7).max(64).nullable(),
    /**
     * Where the tick last left the branch, once its builder had ended: HEAD as the judge saw it,
     * then base_commit again after a rollback reset it, or the judged commit. Commits on top of it
     * were made after the runner stopped (the user's) and are never moved. Null while the builder
     * may still run: then nobody can tell its commits from the user's, and recovery asks.
     */
    tick_head: z.string().min(7).max(64).nullable().default(null),
    flagged: z.record(z.string(), z.enum(['assume-unchanged', 'skip-worktree'])),
    replace_refs: z.array(z.string()),
    /** Written empty now (the rows are in `ignored_rows_nul`); read with it. */
    ignored: z.array(fingerprint),
    ignored_inside: z.array(fingerprint),
    ignored_rows_nul: z
      .string()
      .refine(fingerprintRowsValid, 'fingerprint rows: kind, path, size, mtime_ms, ino, NUL-separated')
      .meta({ pattern: FINGERPRINT_ROWS_PATTERN })
      .default(''),
    ignored_unwatched: z.array(z.string()),
    /**
     * Issue 17: files inside ignored folders on the repository's filesystem, names only; they are
     * judged by ctime against `ignored_clock` (the filesystem's clock when the snapshot began).
     */
    ignored_names: z.array(z.string()).default([]),
    /**
     * The same names in one string, NUL-separated (a NUL is the one byte no path holds), as runs
     * write them now: a 30k-file node_modules/ made an array that every update of this file parsed,
     * checked and printed again, one element at a time. Read with `ignored_names`.
     */
    ignored_names_nul: z.string().default(''),
    ignored_clock: z
      .strictObject({ since_ms: z.number().nonnegative(), dev: z.number().int().nonnegative() })
      .nullable()
      .default(null),
    /**
     * Issue 17: the paths the tick's sandboxed processes could write; the ignored snapshot covers
     * only what lies in them (null: the whole tree, as before it was kept).
     */
    ignored_within: z
      .array(
        // Joined onto the repository root by the recovery's judgement: never absolute, never `..`.
        z
          .string()
          .regex(/^(?!\/)(?!.*(?:^|\/)\.\.(?:\/|$))[^\0]+$/, 'a repository-relative path without ".."'),
      )
      .nullable()
      .default(null),
    /** Left by a recovery that could not restore everything: a human must look first. */
    unresolved: z.array(z.string()),
  }),
);

export type Inflight = z.infer<typeof inflightSchema>;

/** relais/INFLIGHT.agent.json: the agent's process group, so a builder orphaned by a crash can be ended. */
export const inflightAgentSchema = lazySchema(() =>
  z.strictObject({
    pgid: z.int().min(1),
    start_ticks: z.string().nullable(),
    /** The runner's mark prefix (runnerMark()): whatever it started and left alive carries it. */
    runner_mark: z
      .string()
      .regex(/^\d+\.[0-9a-f]{8}$/)
      .nullable()
      .default(null),
  }),
);
export type InflightEntry = z.infer<typeof snapshotEntry>;
