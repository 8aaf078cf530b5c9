import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/**
 * relais/history/sizes.json: the bytes of each run folder, measured once when the rotation first
 * meets the folder (a run's snapshot is complete when the next run starts), so keeping history
 * under `history.max_mb` costs one folder listing per tick instead of a walk of every run.
 *
 * `runs` is checked by one loop instead of `z.record(...)`: the file holds one entry per run ever
 * kept (thousands in a long-lived project) and is read every tick; zod's record check cost about
 * 20 ms a parse at 5,000 entries, this loop under 1 ms (issue 17). It accepts exactly what the
 * record schema did: an object whose own keys are non-empty and whose values are whole numbers >= 0.
 */
export function isRunSizes(value: unknown): value is Record<string, number> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const [name, bytes] of Object.entries(value)) {
    if (name.length === 0 || typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 0)
      return false;
  }
  return true;
}

export const historySizesSchema = lazySchema(() =>
  z.strictObject({
    version: z.literal(1),
    runs: z.custom<Record<string, number>>(isRunSizes, {
      message: 'runs must map each run folder name to its size in bytes (a whole number >= 0)',
    }),
  }),
);

export type HistorySizes = z.infer<typeof historySizesSchema>;
