import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** What the builder claims it did (seed 000 §3.2). The runner judges git, not this claim. */
export const builderResultSchema = lazySchema(() =>
  z.strictObject({
    summary: z.string().min(1).max(800),
    files_intended: z.array(z.string().min(1).max(300)).max(200),
    commands_ran: z.array(z.string().min(1).max(300)).max(50),
    notes: z.array(z.string().min(1).max(300)).max(20),
  }),
);

export type BuilderResult = z.infer<typeof builderResultSchema>;
