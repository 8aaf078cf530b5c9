import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/**
 * relais/STATE.json: the budget ledger (seed 000 §12, seed 001 PR1 WorkspaceState). Counters are
 * per milestone; cost is the sum of what the agent CLI reported, not an estimate.
 */

export const ledgerSchema = lazySchema(() =>
  z.strictObject({
    ticks: z.int().min(0),
    orchestrator_calls: z.int().min(0),
    builder_calls: z.int().min(0),
    verify_runs: z.int().min(0),
    estimated_cost_usd: z.number().min(0),
    /** Patch-mode builds (seed 000 builder.patch.max_patch_attempts_per_milestone). */
    patch_attempts: z.int().min(0).default(0),
    /**
     * The part of `estimated_cost_usd` that is not spend but a reservation: each agent call whose
     * cost the CLI never reported (killed, interrupted, or still running when the runner died) is
     * held at its --max-budget-usd so the caps stay safe. Shown apart from spend, never as money
     * spent. Older files: none.
     */
    unreported_usd: z.number().min(0).default(0),
    /** How many agent calls `unreported_usd` holds. */
    unreported_calls: z.int().min(0).default(0),
  }),
);

export const archivedMilestoneSchema = lazySchema(() =>
  z.strictObject({
    milestone_id: z.string().min(1),
    budgets: ledgerSchema,
    archived_at: z.iso.datetime(),
  }),
);

export const workspaceStateSchema = lazySchema(() =>
  z.strictObject({
    schema_version: z.literal(1),
    milestone_id: z.string().min(1).nullable(),
    budgets: ledgerSchema,
    budget_warning: z.boolean(),
    last_run_id: z.string().nullable(),
    last_verdict: z.enum(['success', 'stop', 'blocked']).nullable(),
    last_code: z.string().nullable(),
    archived_milestones: z.array(archivedMilestoneSchema).max(1000),
    /** Every milestone together, for status and doctor. */
    totals: ledgerSchema.prefault({
      ticks: 0,
      orchestrator_calls: 0,
      builder_calls: 0,
      verify_runs: 0,
      estimated_cost_usd: 0,
      patch_attempts: 0,
      unreported_usd: 0,
      unreported_calls: 0,
    }),
    updated_at: z.iso.datetime(),
  }),
);

export type Ledger = z.infer<typeof ledgerSchema>;
export type WorkspaceState = z.infer<typeof workspaceStateSchema>;

export const emptyLedger = (): Ledger => ({
  ticks: 0,
  orchestrator_calls: 0,
  builder_calls: 0,
  verify_runs: 0,
  estimated_cost_usd: 0,
  patch_attempts: 0,
  unreported_usd: 0,
  unreported_calls: 0,
});

export function freshState(now: Date): WorkspaceState {
  return {
    schema_version: 1,
    milestone_id: null,
    budgets: emptyLedger(),
    budget_warning: false,
    last_run_id: null,
    last_verdict: null,
    last_code: null,
    archived_milestones: [],
    totals: emptyLedger(),
    updated_at: now.toISOString(),
  };
}
