import { mkdir } from 'node:fs/promises';
import type { Git } from '../../judge/git.js';
import { acquireLock } from '../../session/index.js';
import { SEED_DOCS } from '../actions/common.js';
import { commitPaths } from '../git-ops.js';
import { type MapResult, writeSafely } from '../mapper/run-mapper.js';
import { type CycleState, cyclePaths, freshState, readCycleState, writeCycleState } from '../state.js';
import type { BrainstormAnswers } from './answers.js';

/**
 * The brainstorm's five outputs (seed 003 seed_docs: VISION.md, PROJECT.md, REQUIREMENTS.md,
 * ROADMAP.md and the state), laid out from the human's answers, and written only when the human
 * confirmed what `renderSeedDocs` showed them.
 */

export type SeedDocs = Readonly<Record<(typeof SEED_DOCS)[number], string>>;

export function renderSeedDocs(
  a: BrainstormAnswers,
  map: Pick<MapResult, 'kind' | 'docs' | 'detection'>,
): SeedDocs {
  const bullets = (items: readonly string[]) => items.map((i) => `- ${i}`);
  const living = Object.keys(map.docs);
  return {
    'VISION.md': [
      '# Vision',
      '',
      a.vision,
      '',
      '## Users',
      '',
      a.users,
      '',
      '## Success looks like',
      '',
      ...bullets(a.success),
      ...(a.non_goals.length ? ['', '## Out of scope', '', ...bullets(a.non_goals)] : []),
      '',
    ].join('\n'),
    'PROJECT.md': [
      '# Project',
      '',
      '## Stack',
      '',
      a.stack,
      ...(a.constraints.length ? ['', '## Constraints', '', ...bullets(a.constraints)] : []),
      '',
      '## Codebase',
      '',
      map.kind === 'greenfield'
        ? '- Greenfield: no existing code was mapped.'
        : `- ${map.kind === 'returning' ? 'Returning' : 'Brownfield'} (${map.detection.why}); the living docs describe the code as it is:`,
      ...bullets(living),
      '',
    ].join('\n'),
    'REQUIREMENTS.md': ['# Requirements', '', ...a.requirements.map((r) => `- ${r.id}: ${r.text}`), ''].join(
      '\n',
    ),
    'ROADMAP.md': [
      '# Roadmap',
      '',
      ...a.phases.flatMap((p) => [
        `## ${p.id}: ${p.name}`,
        '',
        `Goal: ${p.goal}`,
        '',
        `Requirements: ${p.requirements.join(', ')}`,
        '',
        'Success criteria:',
        ...bullets(p.success),
        '',
      ]),
    ].join('\n'),
  };
}

export interface SeedWrite {
  readonly root: string;
  readonly docsDir: string;
  readonly workspaceDir: string;
  readonly git: Git;
  readonly now: Date;
  readonly mode: CycleState['mode'];
  /** The living docs the mapper wrote, committed with the seed docs. */
  readonly livingDocs: readonly string[];
}

export type SeedWritten =
  | {
      readonly ok: true;
      readonly written: string[];
      readonly state: 'created' | 'resumed' | 'kept';
      readonly commit: string | null;
      readonly commitNote: string | null;
    }
  | { readonly ok: false; readonly detail: string };

/**
 * Under the cycle's lock: the four docs and P2_DONE (atomically, inside the repository, never
 * through a link), then STATE.json: a new one when there is none, the seed_docs pause ended when
 * the cycle waits for these docs, any other state kept as it is. Then one commit of the docs, so
 * the cycle starts from a clean tree.
 */
export async function writeSeedDocs(w: SeedWrite, docs: SeedDocs): Promise<SeedWritten> {
  const paths = cyclePaths(w.root, w.workspaceDir);
  await mkdir(paths.dir, { recursive: true });
  const lock = await acquireLock(paths.lock, 'relais cycle init');
  if (!lock.ok) return { ok: false, detail: lock.detail };
  try {
    const read = await readCycleState(paths);
    if (read.kind === 'invalid')
      return {
        ok: false,
        detail: `relais/cycle/STATE.json does not validate (${read.reason}); nothing written`,
      };
    const written: string[] = [];
    for (const name of SEED_DOCS) {
      const path = `${w.docsDir}/${name}`;
      await writeSafely(w.root, path, docs[name]);
      written.push(path);
    }
    const marker = `${w.docsDir}/P2_DONE`;
    await writeSafely(w.root, marker, `brainstorm confirmed by a human at ${w.now.toISOString()}\n`);
    written.push(marker);
    let state: 'created' | 'resumed' | 'kept' = 'kept';
    if (read.kind !== 'ok') {
      await writeCycleState(paths, freshState(w.now, w.mode));
      state = 'created';
    } else if (
      read.value.phase === 'needs_human' &&
      read.value.needs_human?.code === 'CYCLE_SEED_DOCS_MISSING'
    ) {
      await writeCycleState(paths, {
        ...read.value,
        phase: read.value.needs_human.resume_phase,
        needs_human: null,
      });
      state = 'resumed';
    }
    const committed = await commitDocs(w, [...w.livingDocs, ...written]);
    return { ok: true, written, state, ...committed };
  } finally {
    await lock.lock.release();
  }
}

async function commitDocs(
  w: SeedWrite,
  paths: readonly string[],
): Promise<{ commit: string | null; commitNote: string | null }> {
  const head = await w.git.run(['rev-parse', '--verify', '-q', 'HEAD']);
  if (head.code !== 0)
    return { commit: null, commitNote: 'the repository has no commit yet: commit the docs yourself' };
  try {
    const commit = await commitPaths(w.git, paths, 'relais(init): seed docs from the brainstorm');
    return { commit, commitNote: commit ? null : 'nothing changed since the last commit' };
  } catch (error) {
    return {
      commit: null,
      commitNote: `not committed (${(error as Error).message}): commit the docs yourself`,
    };
  }
}
