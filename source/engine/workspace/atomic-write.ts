import { open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { z } from 'zod';
import { describeZodError } from '../protocol/model-json.js';

/**
 * Runner-owned files are written as seed 000 §13 says: a sibling `*.tmp`, fsync, rename over the
 * final name, fsync the folder. A crash leaves either the old file or the new one, plus at worst a
 * stale `*.tmp` that preflight removes.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  { durable = true }: { readonly durable?: boolean } = {},
): Promise<void> {
  const tmp = `${path}.${process.pid}.${await randomHex(3)}.tmp`;
  const handle = await open(tmp, 'w', 0o644);
  try {
    await handle.writeFile(data);
    if (durable) await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, path);
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    throw error;
  }
  if (durable) await syncFolder(dirname(path));
}

/**
 * node:crypto is loaded on the first write, not at import: a command that only reads the workspace
 * (`relais status`) never needs it, and loading it costs a few milliseconds of every start.
 */
export async function randomHex(bytes: number): Promise<string> {
  const { randomBytes } = await import('node:crypto');
  return randomBytes(bytes).toString('hex');
}

async function syncFolder(folder: string): Promise<void> {
  // Some filesystems refuse fsync on a directory; the rename is still atomic there.
  const handle = await open(folder, 'r').catch(() => undefined);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}

/**
 * Validates before writing: a runner bug must never put an invalid file on disk. `compact` writes
 * one line, for large files only the runner reads (indenting thousands of entries costs more than
 * the rest of the write). `durable: false` skips both fsyncs, for a cache the runner validates on
 * read and can rebuild: still renamed into place whole, but a crash may lose it.
 */
export async function writeJsonAtomic<S extends z.ZodType>(
  path: string,
  schema: S,
  value: z.infer<S>,
  { compact = false, durable = true }: { readonly compact?: boolean; readonly durable?: boolean } = {},
): Promise<void> {
  const checked = schema.safeParse(value);
  if (!checked.success) {
    throw new Error(`refusing to write invalid ${path}: ${describeZodError(checked.error)}`);
  }
  await writeFileAtomic(path, `${JSON.stringify(checked.data, null, compact ? undefined : 2)}\n`, {
    durable,
  });
}

export type JsonRead<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'missing' }
  | { kind: 'invalid'; reason: string };

/** Reads a runner-owned JSON file and validates it; never throws for a bad file. */
export async function readJsonValidated<S extends z.ZodType>(
  path: string,
  schema: S,
): Promise<JsonRead<z.infer<S>>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'invalid', reason: `unreadable: ${(error as Error).message}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: 'invalid', reason: `not JSON: ${jsonErrorWhere(text, error as Error)}` };
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) return { kind: 'invalid', reason: describeZodError(parsed.error) };
  return { kind: 'ok', value: parsed.data };
}

/** Turns JSON.parse's "at position N" into a line and column a human can jump to. */
export function jsonErrorWhere(text: string, error: Error): string {
  const match = /position (\d+)/.exec(error.message);
  if (!match?.[1]) return error.message;
  const position = Number(match[1]);
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  const column = position - before.lastIndexOf('\n');
  return `${error.message.replace(/ in JSON at position \d+.*$/, '')} at line ${line}, column ${column}`;
}
