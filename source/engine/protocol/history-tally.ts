import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/**
 * relais/history-tally.json: what the last tick knew of relais/history when it ended, and the
 * stamp of history's folder then. The next tick trusts it instead of listing thousands of run
 * folders only while the folder's stamp is unchanged (workspace/history-tally.ts says why that
 * cannot miss an added or deleted folder). A cache: an unreadable or invalid file only means the
 * next tick lists history again.
 */
export const historyTallySchema = lazySchema(() => {
  /** A bigint of `stat` (device, inode, nanosecond times, link count), as decimal digits. */
  const digits = z.string().regex(/^\d{1,30}$/);
  const bytes = z.number().int().min(0);
  /**
   * One folder name of history, never a path: names are joined to history's folder to be measured
   * and scanned for temp files, so a forged `../..` must not lead out of it.
   */
  const runName = z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^/\\\0]+$/)
    .refine((name) => name !== '.' && name !== '..', 'a folder name, not . or ..');
  return z.strictObject({
    version: z.literal(1),
    /** History's folder as lstat saw it at the end of the tick that wrote this. */
    folder: z.strictObject({ dev: digits, ino: digits, mtime_ns: digits, ctime_ns: digits, nlink: digits }),
    /** Run folders in history (every folder but `agents`, as the rotation counts them). */
    runs: z.number().int().min(0),
    /** Bytes of every run folder but `unmeasured`. */
    bytes,
    /** The newest run folders by name, oldest first: where a killed run's temp files can be. */
    newest: z.array(runName).max(64),
    /** Run folders counted in `runs` but not measured yet: the tick's own, complete once it ended. */
    unmeasured: z.array(runName).max(64),
    /** Folders measured since relais/history/sizes.json was last written, with their bytes. */
    unsaved: z.array(z.tuple([runName, bytes])).max(64),
  });
});

export type HistoryTally = z.infer<typeof historyTallySchema>;
