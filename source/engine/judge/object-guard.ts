import { createHash } from 'node:crypto';
import { lstatSync, type Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import type { Git } from './git.js';
import type { RepoFacts } from './repo.js';
import { namesOrEmpty } from './stat-or-null.js';

/**
 * Issue 14 "Git integrity": objects the tick did not create must be unchanged before anything is
 * committed. Git objects are immutable by name, so the snapshot keeps only each file's identity
 * (inode, size, change time: a change time cannot be set back by a builder); only files whose
 * identity moved are read and re-hashed, which keeps an unchanged repository's check to a
 * directory walk. A pack that is new or changed is checked with `git verify-pack` (a new pack
 * could hold a forged copy of an existing object, and git reads packs before loose objects).
 */

export interface ObjectSnapshot {
  readonly objectsDir: string;
  readonly format: 'sha1' | 'sha256';
  /** Loose object id -> file identity. */
  readonly loose: ReadonlyMap<string, string>;
  /** Pack or index file name -> file identity. */
  readonly packs: ReadonlyMap<string, string>;
}

export async function snapshotObjects(
  git: Git,
  facts: Pick<RepoFacts, 'commonDir' | 'head'>,
): Promise<ObjectSnapshot> {
  const objectsDir = join(facts.commonDir, 'objects');
  return {
    objectsDir,
    format: formatOfObjectId(facts.head) ?? (await askObjectFormat(git)),
    loose: looseObjects(objectsDir),
    packs: packFiles(objectsDir),
  };
}

/**
 * A repository names every object with one hash, so the length of any object id it gave says
 * which: 40 hex digits for SHA-1, 64 for SHA-256 (git's two object formats). HEAD's id, read with
 * the repository facts, saves a `git rev-parse --show-object-format` per guard (issue 17).
 */
export function formatOfObjectId(oid: string): ObjectSnapshot['format'] | null {
  if (/^[0-9a-f]{40}$/.test(oid)) return 'sha1';
  if (/^[0-9a-f]{64}$/.test(oid)) return 'sha256';
  return null;
}

async function askObjectFormat(git: Git): Promise<ObjectSnapshot['format']> {
  const format = (await git.run(['rev-parse', '--show-object-format'])).stdout.toString().trim();
  return format === 'sha256' ? 'sha256' : 'sha1';
}

/** Every object of the snapshot that is now damaged, missing or shadowed; empty when all hold. */
export async function damagedObjects(git: Git, before: ObjectSnapshot): Promise<string[]> {
  const damaged: string[] = [];
  const nowLoose = looseObjects(before.objectsDir);
  const gone: string[] = [];
  for (const [oid, identity] of before.loose) {
    const now = nowLoose.get(oid);
    if (now === undefined) gone.push(oid);
    else if (now !== identity && !(await looseObjectIntact(before, oid)))
      damaged.push(`object ${oid} was changed in .git/objects`);
  }
  // A repack moves loose objects into a pack: they must still be readable, with their content.
  if (gone.length > 0) damaged.push(...(await unreadable(git, gone, before.format)));

  const nowPacks = packFiles(before.objectsDir);
  const changedIdx = [...nowPacks]
    .filter(([name, identity]) => name.endsWith('.idx') && before.packs.get(name) !== identity)
    .map(([name]) => name);
  const changedPacks = [...nowPacks]
    .filter(([name, identity]) => name.endsWith('.pack') && before.packs.get(name) !== identity)
    .map(([name]) => name.replace(/\.pack$/, '.idx'));
  for (const idx of new Set([...changedIdx, ...changedPacks])) {
    const result = await git.run(['verify-pack', join(before.objectsDir, 'pack', idx)]);
    if (result.code !== 0) damaged.push(`pack ${idx.replace(/\.idx$/, '')} fails git verify-pack`);
  }
  const removedPacks = [...before.packs.keys()].filter((name) => !nowPacks.has(name));
  if (removedPacks.length > 0) {
    // Objects of a removed pack may be gone: everything reachable must still be there.
    const fsck = await git.run(['fsck', '--connectivity-only', '--no-dangling', '--no-progress']);
    if (fsck.code !== 0)
      damaged.push(
        `pack ${removedPacks[0]} was removed and objects are missing: ${fsck.stderr.slice(0, 200)}`,
      );
  }
  return damaged;
}

async function looseObjectIntact(snapshot: ObjectSnapshot, oid: string): Promise<boolean> {
  try {
    const raw = inflateSync(await readFile(join(snapshot.objectsDir, oid.slice(0, 2), oid.slice(2))));
    return createHash(snapshot.format).update(raw).digest('hex') === oid;
  } catch {
    return false;
  }
}

/** Reads the objects through git (loose or packed) and re-hashes their content. */
async function unreadable(
  git: Git,
  oids: readonly string[],
  format: ObjectSnapshot['format'],
): Promise<string[]> {
  const out = await git.run(['cat-file', '--batch'], { stdin: `${oids.join('\n')}\n` });
  const bad: string[] = [];
  let at = 0;
  for (const oid of oids) {
    const eol = out.stdout.indexOf(0x0a, at);
    const header = out.stdout.subarray(at, eol < 0 ? out.stdout.length : eol).toString('utf8');
    const [name, type, sizeText] = header.split(' ');
    if (eol < 0 || name !== oid || !type || sizeText === undefined || type === 'missing') {
      bad.push(`object ${oid} is missing from .git/objects`);
      if (eol < 0) break;
      at = eol + 1;
      continue;
    }
    const size = Number(sizeText);
    const body = out.stdout.subarray(eol + 1, eol + 1 + size);
    at = eol + 1 + size + 1;
    const hash = createHash(format).update(`${type} ${size}\0`).update(body).digest('hex');
    if (hash !== oid) bad.push(`object ${oid} was changed in .git/objects`);
  }
  return bad;
}

/** A loose object's file name in its fan-out folder: the id's last 38 (SHA-1) or 62 hex digits. */
export const LOOSE_OBJECT_NAME = /^[0-9a-f]{38}([0-9a-f]{24})?$/;

/**
 * Every loose object's id and path (the object guard, and the packing in compact-objects.ts).
 * Listed synchronously, like the lstats that follow: up to 256 fan-out folders, each listing
 * awaited in turn cost a round trip of its own (about 35 ms per snapshot with a loop's few hundred
 * loose objects spread over them, twice a tick, issue 17), for microseconds of work each.
 */
export function looseObjectFiles(objectsDir: string): { id: string; path: string }[] {
  const files: { id: string; path: string }[] = [];
  for (const dir of namesOrEmpty(objectsDir)) {
    if (!/^[0-9a-f]{2}$/.test(dir)) continue;
    for (const name of namesOrEmpty(join(objectsDir, dir)))
      if (LOOSE_OBJECT_NAME.test(name)) files.push({ id: dir + name, path: join(objectsDir, dir, name) });
  }
  return files;
}

function looseObjects(objectsDir: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const { id, path } of looseObjectFiles(objectsDir)) {
    const identity = identityOf(path);
    if (identity) found.set(id, identity);
  }
  return found;
}

function packFiles(objectsDir: string): Map<string, string> {
  const found = new Map<string, string>();
  const dir = join(objectsDir, 'pack');
  for (const name of namesOrEmpty(dir)) {
    if (!name.endsWith('.pack') && !name.endsWith('.idx')) continue;
    const identity = identityOf(join(dir, name));
    if (identity) found.set(name, identity);
  }
  return found;
}

/**
 * Synchronous on purpose: thousands of loose objects, one lstat each, nothing to overlap. A number
 * lstat, not a bigint one (issue 17: a BigIntStats per object was a third of this loop's cost):
 * its ctimeMs resolves about a quarter of a microsecond at today's dates. A write after the
 * snapshot sets a ctime later than the one the snapshot read by at least the time the snapshot's
 * own lstat of the file took in between (more than that quarter microsecond), unless the kernel's
 * clock did not move at all, which a nanosecond reading would not show either.
 */
function identityOf(path: string): string | null {
  let stat: Stats | undefined;
  try {
    stat = lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return null;
  }
  return stat ? `${stat.ino}:${stat.size}:${stat.ctimeMs}:${stat.isFile() ? 'f' : 'x'}` : null;
}
