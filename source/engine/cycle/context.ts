import type { AgentRunner } from '../agents/agent-run.js';
import type { EngineBus } from '../events.js';
import type { GatePort } from '../gates.js';
import type { Git } from '../judge/git.js';
import type { RepoFacts } from '../judge/repo.js';
import type { RelaisConfig } from '../protocol/config.js';
import type { CycleAgents, CyclePolicy, CycleRole } from '../protocol/cycle-policy.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { CycleCode } from './codes.js';
import type { CyclePaths, CycleState } from './state.js';

/** Everything one cycle needs, injected: the CLI builds it from the config, tests build it by hand. */

export type CycleRunners = Readonly<Record<CycleRole, AgentRunner>>;

export interface CycleOptions {
  readonly root: string;
  readonly config: RelaisConfig;
  readonly policy: CyclePolicy;
  readonly agents: CycleAgents;
  readonly runners: CycleRunners;
  readonly bus: EngineBus;
  readonly signal: AbortSignal;
  readonly env: NodeJS.ProcessEnv;
  readonly gates: GatePort;
  readonly now?: () => Date;
  /** Workspace files another runner writes while the cycle's agents run (a workflow's state). */
  readonly runnerWrites?: readonly string[];
  /** A given cycle id (tests, or a driver like ralph.sh); a random hex id otherwise. */
  readonly cycleId?: string;
  /** The run's OS sandbox for verification commands; resolved from the config when absent. */
  readonly sandbox?: Sandbox;
}

export interface CycleContext extends CycleOptions {
  readonly sandbox: Sandbox;
  readonly git: Git;
  /** The repository's root and git folders, read once at LOAD (what the guards watch). */
  readonly facts: RepoFacts;
  readonly paths: CyclePaths;
  readonly cycleId: string;
  readonly nonce: string;
  readonly now: () => Date;
  /** Absolute folder of the seed docs and track documents. */
  readonly docsDir: string;
}

/** What an action hands to RECORD. */
export interface ActionResult {
  readonly state: CycleState;
  readonly ok: boolean;
  readonly details: string;
  readonly code: CycleCode | null;
  /** summarize replies DONE; everything else replies by `ok`. */
  readonly done?: boolean;
}
