import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/**
 * relais/lock.json (seed 000 §13): who holds the workspace. `pid_start_ticks` (the process start
 * time from /proc) tells a live holder from an unrelated process that reused its pid.
 */
export const lockFileSchema = lazySchema(() =>
  z.strictObject({
    pid: z.int().min(1),
    started_at: z.iso.datetime(),
    boot_id: z.string().min(1),
    hostname: z.string(),
    pid_start_ticks: z.string().nullable(),
    command: z.string().max(200),
  }),
);

export type LockFile = z.infer<typeof lockFileSchema>;
