import * as z from 'zod';
import { ALL_CODES } from './codes.js';
import { lazySchema } from './lazy-schema.js';

/** relais/BLOCKED.json: why the runner refused (or stopped being able) to run, and the exact fix. */
export const blockedFileSchema = lazySchema(() =>
  z.strictObject({
    run_id: z.string().min(1),
    code: z.enum(ALL_CODES),
    detail: z.string().max(4000),
    remediation: z.string().min(1).max(600),
    created_at: z.iso.datetime(),
  }),
);

export type BlockedFile = z.infer<typeof blockedFileSchema>;
