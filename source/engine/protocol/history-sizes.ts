import { z } from 'zod';

/**
 * relais/history/sizes.json: the bytes of each run folder, measured once when the rotation first
 * meets the folder (a run's snapshot is complete when the next run starts), so keeping history
 * under `history.max_mb` costs one folder listing per tick instead of a walk of every run.
 */
export const historySizesSchema = z.strictObject({
  version: z.literal(1),
  runs: z.record(z.string().min(1), z.int().min(0)),
});

export type HistorySizes = z.infer<typeof historySizesSchema>;
