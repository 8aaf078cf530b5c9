import { createHash } from 'node:crypto';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { acquireLock, type HeldLock } from '../session/index.js';
import { type JsonRead, readJsonValidated, writeJsonAtomic } from '../workspace/atomic-write.js';
import type { WorkspacePaths } from '../workspace/paths.js';
import { normalize } from './questions.js';
import {
  type Learning,
  type LearningsFile,
  learningsFileSchema,
  type Session,
  type Subject,
  sessionSchema,
} from './schemas.js';

/**
 * relais/planner/: one file per planning session (sessions/<id>.json: its gaps, discussion,
 * handoff and signals) and the workspace's learnings (learnings.json). Validated on read,
 * written atomically; a corrupt file is reported, never replaced silently.
 */

export interface PlannerPaths {
  readonly dir: string;
  readonly relDir: string;
  readonly sessionsDir: string;
  readonly learnings: string;
  /** Held while learnings.json is read, changed and written (and FACTS.md rendered from it). */
  readonly learningsLock: string;
  /** Where a comment's body waits for `gh issue comment --body-file`. */
  readonly outboxDir: string;
  /** Comments the runner refused to post (they looked like they hold a secret), for a human. */
  readonly withheldDir: string;
  readonly facts: string;
  readonly workspace: WorkspacePaths;
}

export function plannerPaths(paths: WorkspacePaths): PlannerPaths {
  const dir = join(paths.dir, 'planner');
  return {
    dir,
    relDir: `${paths.relDir}/planner`,
    sessionsDir: join(dir, 'sessions'),
    learnings: join(dir, 'learnings.json'),
    learningsLock: join(dir, 'learnings.lock.json'),
    outboxDir: join(dir, 'outbox'),
    withheldDir: join(dir, 'withheld'),
    facts: paths.facts,
    workspace: paths,
  };
}

/** The same PRD text is the same planning session, whoever runs it (`ralphy start`, `relais plan`). */
export function prdSessionId(prdText: string): string {
  return `prd-${sha256(prdText).slice(0, 12)}`;
}

export function issueSessionId(issue: number): string {
  return `issue-${issue}`;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function sessionPath(pp: PlannerPaths, id: string): string {
  return join(pp.sessionsDir, `${id}.json`);
}

export function readSession(pp: PlannerPaths, id: string): Promise<JsonRead<Session>> {
  return readJsonValidated(sessionPath(pp, id), sessionSchema);
}

export async function writeSession(pp: PlannerPaths, session: Session): Promise<void> {
  await mkdir(pp.sessionsDir, { recursive: true });
  await writeJsonAtomic(sessionPath(pp, session.session_id), sessionSchema, session);
}

export function newSession(input: {
  id: string;
  subject: Subject;
  reporter: string | null;
  assignee: string | null;
  now: Date;
}): Session {
  const at = input.now.toISOString();
  return {
    schema_version: 1,
    session_id: input.id,
    subject: input.subject,
    reporter: input.reporter,
    assignee: input.assignee,
    status: 'open',
    created_at: at,
    updated_at: at,
    rounds: 0,
    planner_runs: 0,
    repairs: 0,
    cost_usd: 0,
    seen_message_id: 0,
    next_gap_id: 1,
    gaps: [],
    discussion: [],
    outbox: [],
    handoff: null,
    spec_first_gate: null,
  };
}

export type Opened = { ok: true; session: Session; created: boolean } | { ok: false; problem: string };

/** The session, or a new one; a corrupt file stops the caller (it is kept for the human to look at). */
export async function openSession(pp: PlannerPaths, fresh: () => Session): Promise<Opened> {
  const candidate = fresh();
  const read = await readSession(pp, candidate.session_id);
  if (read.kind === 'ok') return { ok: true, session: read.value, created: false };
  if (read.kind === 'invalid')
    return {
      ok: false,
      problem: `${pp.relDir}/sessions/${candidate.session_id}.json is unreadable (${read.reason}); it is kept as it is. Move it aside to plan again.`,
    };
  return { ok: true, session: candidate, created: true };
}

const EMPTY_LEARNINGS: LearningsFile = { schema_version: 1, next_id: 1, learnings: [] };

export async function readLearnings(
  pp: PlannerPaths,
): Promise<{ ok: true; file: LearningsFile } | { ok: false; problem: string }> {
  const read = await readJsonValidated(pp.learnings, learningsFileSchema);
  if (read.kind === 'ok') return { ok: true, file: read.value };
  if (read.kind === 'missing') return { ok: true, file: EMPTY_LEARNINGS };
  return {
    ok: false,
    problem: `${pp.relDir}/learnings.json is unreadable (${read.reason}); it is kept as it is. Fix it or move it aside.`,
  };
}

/**
 * Adds learnings (the same content twice is one learning) and returns every proposed one with its
 * id. learnings.json is the workspace's while `relais plan --issue` runs lock one issue each, so
 * the read, change and write happen under a workspace-level lock (learnings.lock.json): two runs
 * at once neither drop a learning nor give two the same id. `whileLocked` runs under the same lock
 * with the whole file as written (FACTS.md is rendered from it, so it is never an older view).
 * Throws when the file is unreadable or the lock stays held (by a live run) too long.
 */
export async function addLearnings(
  pp: PlannerPaths,
  proposed: ReadonlyArray<Omit<Learning, 'id'>>,
  whileLocked?: (all: Learning[]) => Promise<void>,
): Promise<{ file: LearningsFile; stored: Learning[] }> {
  await mkdir(pp.dir, { recursive: true });
  const lock = await lockLearnings(pp);
  try {
    const added = await addUnlocked(pp, proposed);
    await whileLocked?.(added.file.learnings);
    return added;
  } finally {
    await lock.release();
  }
}

/** Another run holds the lock for one read and write: retried for up to this long. */
const LOCK_PATIENCE_MS = 15_000;

async function lockLearnings(pp: PlannerPaths): Promise<HeldLock> {
  const started = Date.now();
  for (let delay = 5; ; delay = Math.min(delay * 2, 200)) {
    const attempt = await acquireLock(pp.learningsLock, 'relais planner: learnings.json');
    if (attempt.ok) return attempt.lock;
    if (Date.now() - started > LOCK_PATIENCE_MS)
      throw new Error(
        `${pp.relDir}/learnings.lock.json stayed held for ${LOCK_PATIENCE_MS / 1000} s (${attempt.detail}); the learnings were not saved`,
      );
    await setTimeout(delay);
  }
}

async function addUnlocked(
  pp: PlannerPaths,
  proposed: ReadonlyArray<Omit<Learning, 'id'>>,
): Promise<{ file: LearningsFile; stored: Learning[] }> {
  const read = await readLearnings(pp);
  if (!read.ok) throw new Error(read.problem);
  let file = read.file;
  const stored: Learning[] = [];
  for (const learning of proposed) {
    const same = file.learnings.find((l) => normalize(l.content) === normalize(learning.content));
    if (same) {
      stored.push(same);
      continue;
    }
    const added: Learning = { ...learning, id: file.next_id };
    file = { ...file, next_id: file.next_id + 1, learnings: [...file.learnings, added].slice(-5000) };
    stored.push(added);
  }
  if (stored.some((l) => !read.file.learnings.includes(l)))
    await writeJsonAtomic(pp.learnings, learningsFileSchema, file);
  return { file, stored };
}

export async function listSessions(
  pp: PlannerPaths,
): Promise<Array<{ id: string; session: Session | null; problem: string | null }>> {
  const names = await readdir(pp.sessionsDir).catch(() => [] as string[]);
  const ids = names.filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -'.json'.length));
  const out: Array<{ id: string; session: Session | null; problem: string | null }> = [];
  for (const id of ids.sort()) {
    const read = await readSession(pp, id);
    out.push(
      read.kind === 'ok'
        ? { id, session: read.value, problem: null }
        : { id, session: null, problem: read.kind === 'missing' ? 'missing' : read.reason },
    );
  }
  return out;
}
