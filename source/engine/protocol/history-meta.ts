import * as z from 'zod';
import { ALL_CODES } from './codes.js';
import { lazySchema } from './lazy-schema.js';

/** relais/history/<run_id>/meta.json: the run at a glance, plus what the runner itself used. */
export const historyMetaSchema = lazySchema(() =>
  z.strictObject({
    run_id: z.string().min(1),
    started_at: z.iso.datetime(),
    ended_at: z.iso.datetime(),
    verdict: z.enum(['success', 'stop', 'blocked']),
    code: z.enum(ALL_CODES),
    base_commit: z.string().nullable(),
    head_commit: z.string().nullable(),
    relais_version: z.string(),
    node_version: z.string(),
    max_rss_kb: z.int().min(0),
  }),
);

export type HistoryMeta = z.infer<typeof historyMetaSchema>;
