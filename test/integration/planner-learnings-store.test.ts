import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addLearnings, plannerPaths } from '../../source/engine/planner/store.js';
import { acquireLock } from '../../source/engine/workspace/lock.js';
import { workspacePaths } from '../../source/engine/workspace/paths.js';

// relais/planner/learnings.json is the workspace's, while `relais plan --issue` runs lock one
// issue each: two runs adding learnings at once must neither drop one nor reuse an id.

let dir: string | null = null;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

function planner() {
  dir = mkdtempSync(join(tmpdir(), 'relais-learnings-'));
  return plannerPaths(workspacePaths(dir, 'relais'));
}

const learning = (content: string, session_id: string) => ({
  type: 'domain_learnings' as const,
  content,
  session_id,
  source_message_id: 1,
  source_author: 'pm',
  created_at: '2025-01-01T10:00:00.000Z',
});

describe('learnings.json under concurrent planner runs', () => {
  it('keeps every learning, each with its own id, when runs add at the same time', async () => {
    const pp = planner();
    const runs = Array.from({ length: 6 }, (_, i) =>
      addLearnings(pp, [learning(`fact ${i}`, `issue-${i + 1}`)]),
    );
    const results = await Promise.all(runs);
    const file = JSON.parse(readFileSync(pp.learnings, 'utf8'));
    expect(file.learnings.map((l: { content: string }) => l.content).sort()).toEqual(
      Array.from({ length: 6 }, (_, i) => `fact ${i}`),
    );
    expect(file.learnings.map((l: { id: number }) => l.id).sort()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(file.next_id).toBe(7);
    expect(results.map((r) => r.stored[0]?.id).sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('goes on once the lock another run holds is released; what runs under it sees the whole file', async () => {
    const pp = planner();
    await addLearnings(pp, [learning('first', 'issue-1')]);
    const held = await acquireLock(pp.learningsLock, 'another relais plan run');
    if (!held.ok) throw new Error(held.detail);
    const seen: string[][] = [];
    const adding = addLearnings(pp, [learning('second', 'issue-2')], async (all) => {
      seen.push(all.map((l) => l.content));
    });
    await held.lock.release();
    const { stored } = await adding;
    expect(stored.map((l) => [l.id, l.content])).toEqual([[2, 'second']]);
    expect(seen).toEqual([['first', 'second']]);
  });
});
