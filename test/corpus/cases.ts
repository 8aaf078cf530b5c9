import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/project.js';

/**
 * The corpus of recorded endings (issue 15): test/corpus/cases.json, as every engine's replay
 * reads it. `expect` is how the workflow's agent step reads a case (the `single` engine's dev
 * agent, the spec and QA agents); `engines` says how the other engines read it when that differs:
 * `ticks` (the transcript is a tick builder's run), `orchestrator` (it is the tick orchestrator's
 * answer) and `cycle` (it is `relais cycle`'s implementer). Every difference carries its reason:
 * the case's own `why`, or the engine's rule for that pair of verdicts in `engine_rules`.
 */

export type Engine = 'ticks' | 'orchestrator' | 'cycle';
export const ENGINES: readonly Engine[] = ['ticks', 'orchestrator', 'cycle'];

export interface Reading {
  readonly verdict: string;
  readonly resetAt?: string;
  readonly detail?: string;
}

export interface EngineReading extends Reading {
  /** Why this engine reads the case so, when no engine rule says it. */
  readonly why?: string;
}

export interface Case {
  readonly id: string;
  readonly format: 'claude-stream' | 'codex-jsonl' | 'text' | 'sentinel';
  readonly transcript: string;
  readonly expect: Reading;
  readonly source: string;
  readonly now?: string;
  readonly hang?: boolean;
  readonly exit?: number;
  /** Printed on stderr by the replay (a CLI that failed before any result object). */
  readonly stderr?: string;
  readonly evidence?: 'verified' | 'disproved';
  readonly prompt?: 'template';
  readonly block?: 'TRACK' | 'PLAN';
  /** The transcript holds a tool call in flight: its process tree busy (working) or idle (stuck). */
  readonly tool?: 'busy' | 'idle';
  /** How a peer decides the same case, when it decides differently (reported in docs/endings.md). */
  readonly peer?: string;
  readonly engines?: Partial<Record<Engine, string | EngineReading>>;
}

interface CorpusFile {
  readonly cases: Case[];
  readonly engine_rules: Record<Engine, Record<string, string>>;
}

export const CORPUS_DIR = join(REPO_ROOT, 'test/corpus');
export const REPLAY = join(CORPUS_DIR, 'replay-agent.mjs');
export const NOW = '2026-11-22T10:00:00.000Z';

const file = JSON.parse(readFileSync(join(CORPUS_DIR, 'cases.json'), 'utf8')) as CorpusFile;
export const cases: readonly Case[] = file.cases;
export const engineRules = file.engine_rules;

/** What `engine` must read for `c`: its own reading when given, else the workflow's. */
export function expectedFor(c: Case, engine: Engine): Reading {
  const own = c.engines?.[engine];
  // The same verdict; the workflow's detail is its own wording, the reset time is the case's.
  if (own === undefined) return { verdict: c.expect.verdict, resetAt: c.expect.resetAt };
  const reading = typeof own === 'string' ? { verdict: own } : own;
  // A limit read the same way keeps the workflow's reset time unless the engine names its own.
  return reading.verdict === 'limit' && c.expect.verdict === 'limit' && !reading.resetAt
    ? { ...reading, resetAt: c.expect.resetAt }
    : reading;
}

/** Why `engine` reads `c` differently from the workflow (null when it reads it the same way). */
export function whyDifferent(c: Case, engine: Engine): string | null {
  const expected = expectedFor(c, engine);
  if (expected.verdict === c.expect.verdict) return null;
  const own = c.engines?.[engine];
  const why = typeof own === 'object' ? own.why : undefined;
  return why ?? engineRules[engine]?.[`${c.expect.verdict}->${expected.verdict}`] ?? '';
}

/** The replay's environment for one case (see replay-agent.mjs). */
export function replayEnv(c: Case, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    RELAIS_REPLAY: join(CORPUS_DIR, c.transcript),
    RELAIS_REPLAY_FORMAT: c.format,
    RELAIS_REPLAY_EXIT: String(c.exit ?? 0),
    RELAIS_REPLAY_HANG: c.hang ? '1' : '0',
    ...(c.stderr ? { RELAIS_REPLAY_STDERR: c.stderr } : {}),
    ...extra,
  };
}

/** The cases an agent engine replays (sentinel blocks are the cycle parsers' alone). */
export const agentCases = cases.filter((c) => c.format !== 'sentinel');
