import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { LedgerUpdatedEvent } from '../events.js';
import type { RelaisConfig } from '../protocol/config.js';
import { archivedMilestoneSchema, emptyLedger, type Ledger, type WorkspaceState } from '../protocol/state.js';
import { writeJsonAtomic } from '../workspace/atomic-write.js';
import { applyDelta, ensureMilestone } from '../workspace/ledger.js';
import type { WorkspacePaths } from '../workspace/paths.js';
import { writeState } from '../workspace/state-store.js';

/**
 * The tick's view of STATE.json. Every spend is written through before (calls) or right after
 * (cost) it happens, so a crash or a forced quit never forgets a call that was made (seed 000 §12
 * reservation, seed 001 PR1 ledger).
 */
export class TickLedger {
  private readonly tickSoFar: Ledger = emptyLedger();

  constructor(
    private readonly paths: WorkspacePaths,
    public state: WorkspaceState,
    private readonly now: () => Date,
    private readonly announce: (state: WorkspaceState) => void = () => undefined,
  ) {}

  async add(delta: Partial<Ledger>): Promise<void> {
    this.state = applyDelta(this.state, delta, this.now());
    for (const key of Object.keys(delta) as (keyof Ledger)[]) this.tickSoFar[key] += delta[key] ?? 0;
    await writeState(this.paths, this.state);
    this.announce(this.state);
  }

  /** Seed 001 PR3: the milestone is persisted as soon as the orchestrator names it. */
  async enterMilestone(milestoneId: string): Promise<void> {
    const moved = ensureMilestone(this.state, milestoneId, this.now(), this.tickSoFar);
    if (!moved.changed) return;
    const archived =
      moved.state.archived_milestones.length > this.state.archived_milestones.length
        ? moved.state.archived_milestones.at(-1)
        : undefined;
    this.state = moved.state;
    await writeState(this.paths, this.state);
    this.announce(this.state);
    if (archived) {
      // Seed 001 PR2, autonomous mode: the finished milestone's ledger is archived in history too.
      const dir = join(this.paths.historyDir, 'milestones');
      await mkdir(dir, { recursive: true });
      const stamp = archived.archived_at.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
      await writeJsonAtomic(
        join(dir, `${safeName(archived.milestone_id)}-${stamp}.json`),
        archivedMilestoneSchema,
        archived,
      );
    }
  }
}

/** Milestone ids may hold "/" or ":" (the task schema allows them); file names may not. */
function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** The `ledger.updated` event: the milestone's counters against their caps. */
export function ledgerEvent(
  state: WorkspaceState,
  caps: RelaisConfig['budgets']['per_milestone'],
): LedgerUpdatedEvent {
  const b = state.budgets;
  return {
    type: 'ledger.updated',
    milestone: state.milestone_id,
    used: {
      ticks: b.ticks,
      orchestrator_calls: b.orchestrator_calls,
      builder_calls: b.builder_calls,
      verify_runs: b.verify_runs,
      cost_usd: Math.round(b.estimated_cost_usd * 1e6) / 1e6,
    },
    caps: {
      ticks: caps.max_ticks,
      orchestrator_calls: caps.max_orchestrator_calls,
      builder_calls: caps.max_builder_calls,
      verify_runs: caps.max_verify_runs,
      cost_usd: caps.max_estimated_cost_usd,
    },
  };
}
