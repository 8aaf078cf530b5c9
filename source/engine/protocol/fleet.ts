/**
 * What the fleet looks like from its database (issue 20: `relais fleet status` and the app's fleet
 * view): runs per state, the gates waiting, spend against the fleet budget, the model accounts'
 * rates, the workers alive. Plain data: `fleet status --json` prints it, and the `fleet.status`
 * event carries it to the app.
 */

export interface FleetRunSummary {
  readonly run_id: string;
  readonly repo: string;
  readonly state: string;
  readonly status: string;
  readonly waiting_gate: string | null;
  readonly pr_url: string | null;
  readonly spent_usd: number;
  readonly detail: string | null;
  readonly executor_id: string | null;
}

export interface FleetWaitingGate {
  readonly run_id: string;
  readonly gate: string;
  /** The question, as the gate shows it. */
  readonly title: string;
  readonly answer: 'yes_no' | 'text';
}

export interface FleetWorkerSummary {
  readonly executor_id: string;
  readonly host: string;
  readonly pid: number;
  /** Milliseconds since its last heartbeat, by the database's clock. */
  readonly age_ms: number;
  readonly stopped: boolean;
  readonly taken_over_by: string | null;
  readonly alive: boolean;
}

export interface FleetAccountSummary {
  readonly name: string;
  readonly calls_per_minute: number | null;
  readonly last_minute: number;
}

export interface FleetSnapshot {
  readonly runs: readonly FleetRunSummary[];
  readonly byStatus: Readonly<Record<string, number>>;
  readonly waitingGates: readonly FleetWaitingGate[];
  readonly budget: {
    readonly cap_usd: number | null;
    readonly spent_usd: number;
    readonly reserved_usd: number;
  };
  readonly accounts: readonly FleetAccountSummary[];
  readonly workers: readonly FleetWorkerSummary[];
}
