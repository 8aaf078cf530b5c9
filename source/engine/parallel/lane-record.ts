import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { LANE_NAME } from '../protocol/workflow.js';
import { readJsonValidated, writeJsonAtomic } from '../workspace/atomic-write.js';
import type { WorkspacePaths } from '../workspace/paths.js';

/**
 * One runner-owned worktree, recorded in the main workspace (`relais/lanes/<name>.json`), never
 * inside the worktree where an agent works. Written atomically before the worktree is used, so a
 * kill -9 at any point leaves a record the next start reads (orphan detection).
 */
export const laneRecordSchema = z.strictObject({
  name: z.string().regex(LANE_NAME),
  task: z.int().min(0),
  branch: z.string().min(1).max(200),
  path: z.string().min(1),
  base: z.string().regex(/^[0-9a-f]{40,64}$/),
  /** running: a lane works in it (or did, when the runner died); kept: a failure left it for a human. */
  state: z.enum(['running', 'kept']),
  pid: z.int().min(0),
  created_at: z.string(),
  detail: z.string().max(2000).nullable(),
});

export type LaneRecord = z.infer<typeof laneRecordSchema>;

export function lanesDir(paths: WorkspacePaths): string {
  return join(paths.dir, 'lanes');
}

export function worktreesDir(paths: WorkspacePaths): string {
  return join(paths.dir, 'worktrees');
}

export async function writeLaneRecord(paths: WorkspacePaths, record: LaneRecord): Promise<void> {
  await mkdir(lanesDir(paths), { recursive: true });
  await writeJsonAtomic(join(lanesDir(paths), `${record.name}.json`), laneRecordSchema, record);
}

export async function removeLaneRecord(paths: WorkspacePaths, name: string): Promise<void> {
  await rm(join(lanesDir(paths), `${name}.json`), { force: true });
}

/** Every record; an unreadable one is reported by name, never silently dropped. */
export async function readLaneRecords(
  paths: WorkspacePaths,
): Promise<{ records: LaneRecord[]; invalid: string[] }> {
  const names = await readdir(lanesDir(paths)).catch(() => [] as string[]);
  const records: LaneRecord[] = [];
  const invalid: string[] = [];
  for (const file of names.filter((n) => n.endsWith('.json')).sort()) {
    const read = await readJsonValidated(join(lanesDir(paths), file), laneRecordSchema);
    if (read.kind === 'ok') records.push(read.value);
    else invalid.push(`${file}: ${read.kind === 'invalid' ? read.reason : 'missing'}`);
  }
  return { records, invalid };
}
