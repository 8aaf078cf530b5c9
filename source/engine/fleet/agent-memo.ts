import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import * as z from 'zod';
import type { AgentOutcome, AgentRequest } from '../agents/agent-run.js';
import type { EngineBus } from '../events.js';
import { FLEET_SCHEMA as S } from './settings.js';
import {
  applyChange,
  ChangeNotApplied,
  changeBetween,
  treeOf,
  type WorkTree,
  workTreeOf,
} from './tree-change.js';

/**
 * Every finished agent call of a fleet run is durable (issue 20: "each agent run is a DBOS
 * step"): its outcome, the lines it printed and the change it made to the worktree are kept in
 * `relais_fleet.agent_calls`, written in the same fenced transaction that settles its spend in the
 * ledger (budget.ts), so a call is either settled and kept, or neither. When a phase runs again
 * after its worker died, a call that had finished is replayed from there: its change applied to
 * the re-created checkout, its lines and outcome handed back, no model called and nothing spent.
 * The judge then judges the replayed tree from git, as it judged the first one.
 *
 * Not DBOS steps of their own: a phase is one DBOS step, and DBOS does not checkpoint a step
 * called inside a step; the record must also commit with the ledger and the owner's fence, which
 * DBOS's step records cannot. docs/fleet.md says more.
 *
 * A call is named by the run, the step (the phase's place in the run's workflow, the same on
 * every attempt), and within the step by the agent's role, a hash of its prompt (the checkout's
 * path taken out: it differs between workers) and how many calls with that role and prompt came
 * before it in the step. A replay also needs the worktree to be the one the call started from
 * (its tree id): a run whose calls come in another order, or a tree that differs, calls live.
 */

/** Lines kept per call for the replay (the circuit breaker reads them again). */
const MAX_LINES = 5000;
const MAX_LINE_CHARS = 4000;

const processSchema = z.object({
  exitCode: z.number().nullable(),
  // A signal's name as Node reported it when the call ran (kept as written, never sent).
  signal: z.custom<NodeJS.Signals>((v) => typeof v === 'string').nullable(),
  spawnError: z.string().nullable(),
  timedOut: z.boolean(),
  aborted: z.boolean(),
  stdoutTail: z.string(),
  stderrTail: z.string(),
  stdoutBytes: z.number(),
  stderrBytes: z.number(),
  durationMs: z.number(),
});

const outcomeSchema = z.object({
  text: z.string().nullable(),
  failure: z.string().nullable(),
  costUsd: z.number(),
  costReported: z.boolean(),
  errorText: z.string().nullable(),
  apiErrorStatus: z.number().nullable(),
  permissionDenials: z.array(z.string()),
  numTurns: z.number().nullable(),
  process: processSchema,
});

const rowSchema = z.object({
  tree_before: z.string(),
  tree_after: z.string(),
  change: z.instanceof(Buffer),
  outcome: outcomeSchema,
  lines: z.array(z.string()),
});

export interface CallMemoSpec {
  readonly pool: Pool;
  readonly runId: string;
  /** The step's name in the run ("step3"): the same on every attempt of that step. */
  readonly stepKey: string;
  /** The checkout's path: taken out of prompts before they are hashed. */
  readonly root: string;
  readonly env: NodeJS.ProcessEnv;
}

/** A call about to run live: how to record it once it ends (inside the ledger's transaction). */
export interface LiveCall {
  /** The request to run: the same, with its printed lines captured. */
  readonly request: AgentRequest;
  /** After the call: the record's write, or null when this call is not to be kept. */
  finish(outcome: AgentOutcome, ledgerKey: string): Promise<((c: PoolClient) => Promise<void>) | null>;
}

export type Begun = { kind: 'replayed'; outcome: AgentOutcome } | { kind: 'live'; call: LiveCall | null };

export function callMemo(spec: CallMemoSpec) {
  const seen = new Map<string, number>();
  const keyOf = (request: AgentRequest): string => {
    const prompt = `${request.systemPrompt}\n\n${request.userPrompt}`.replaceAll(spec.root, '<checkout>');
    // What the call was asked to be, besides its prompt: another model or other permissions is
    // another call, never answered by this one's checkpoint.
    const settings = JSON.stringify([
      request.model,
      request.fallbackModel,
      request.permissionMode,
      request.maxTurns,
      request.tools,
      request.allowedTools ?? null,
      request.writableGlobs ?? null,
    ]);
    const sha = createHash('sha256').update(prompt).update('\0').update(settings).digest('hex').slice(0, 32);
    const base = `${request.role}:${sha}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return `${base}:${n}`;
  };
  return {
    /** Replays the call when it finished on an earlier attempt; else prepares its record. */
    async begin(request: AgentRequest, bus: EngineBus): Promise<Begun> {
      const key = keyOf(request);
      const found = await lookUp(spec, key, request).catch((error: Error) => {
        // Not kept is not fatal: the call runs as it would without a fleet, only not durable.
        bus.emit({ type: 'log', level: 'warn', message: `agent call not kept: ${error.message}` });
        return null;
      });
      if (found === null) return { kind: 'live', call: null };
      const { tree, before, kept } = found;
      if (kept && kept.tree_before === before) {
        const applied = await applyChange(tree, kept.change, kept.tree_after).then(
          () => true,
          (error: Error) => {
            // `git apply` applies all or nothing: a change that did not apply left the tree as
            // it was, so the call runs live. Any other failure is the runner's and stops here.
            if (!(error instanceof ChangeNotApplied)) throw error;
            bus.emit({
              type: 'log',
              level: 'warn',
              message: `${request.role}-agent: ${error.message}; running it again`,
            });
            return false;
          },
        );
        if (!applied) return { kind: 'live', call: liveCall(spec, key, request, tree, before) };
        replayLines(request, kept.lines);
        bus.emit({
          type: 'log',
          level: 'info',
          message: `${request.role}-agent: call replayed from its checkpoint (it finished before its worker stopped); not run again, not paid again`,
        });
        return { kind: 'replayed', outcome: kept.outcome };
      }
      if (kept)
        bus.emit({
          type: 'log',
          level: 'warn',
          message: `${request.role}-agent: a checkpoint of this call exists, but the tree differs from the one it started on; running it again`,
        });
      return { kind: 'live', call: liveCall(spec, key, request, tree, before) };
    },
  };
}

/** The call's worktree, its tree now, and the kept call of that name if there is one. */
async function lookUp(spec: CallMemoSpec, key: string, request: AgentRequest) {
  const tree = await workTreeOf(request.cwd, spec.env);
  if (tree === null) return null;
  const before = await treeOf(tree);
  return { tree, before, kept: await readCall(spec, key) };
}

function liveCall(
  spec: CallMemoSpec,
  key: string,
  request: AgentRequest,
  tree: WorkTree,
  before: string,
): LiveCall {
  const lines: string[] = [];
  return {
    request: {
      ...request,
      onOutputLine: (line) => {
        if (lines.length < MAX_LINES) lines.push(line.slice(0, MAX_LINE_CHARS));
        request.onOutputLine?.(line);
      },
    },
    async finish(outcome, ledgerKey) {
      // A call cut off (the step stopped, the worker shuts down) did not finish: it runs again.
      if (outcome.process.aborted || request.signal.aborted) return null;
      const after = await treeOf(tree).catch(() => null);
      const change = after === null ? null : await changeBetween(tree, before, after);
      if (after === null || change === null) return null;
      return (c) =>
        c
          .query(
            `INSERT INTO ${S}.agent_calls (run_id, step_key, call_key, ledger_key, role, tree_before, tree_after, change, outcome, lines)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
             ON CONFLICT (run_id, step_key, call_key) DO UPDATE SET ledger_key = $4, tree_before = $6,
               tree_after = $7, change = $8, outcome = $9, lines = $10, at = now()`,
            [
              spec.runId,
              spec.stepKey,
              key,
              ledgerKey,
              request.role,
              before,
              after,
              change,
              JSON.stringify(outcome),
              JSON.stringify(lines),
            ],
          )
          .then(() => undefined);
    },
  };
}

/** The kept call, validated; a row that does not parse is not replayed (the call runs live). */
async function readCall(spec: CallMemoSpec, key: string): Promise<z.infer<typeof rowSchema> | null> {
  const { rows } = await spec.pool.query(
    `SELECT tree_before, tree_after, change, outcome, lines FROM ${S}.agent_calls
     WHERE run_id = $1 AND step_key = $2 AND call_key = $3`,
    [spec.runId, spec.stepKey, key],
  );
  if (rows.length === 0) return null;
  const parsed = rowSchema.safeParse(rows[0]);
  return parsed.success ? parsed.data : null;
}

function replayLines(request: AgentRequest, lines: readonly string[]): void {
  request.onActivity?.();
  for (const line of lines) request.onOutputLine?.(line);
}
