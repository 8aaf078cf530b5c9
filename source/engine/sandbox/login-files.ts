import { lstatSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * The agent CLIs' login files (`~/.claude/.credentials.json`, Codex's `auth.json`) inside the
 * sandbox (issue 14). Bound writable, a builder could swap the user's login for another account's,
 * or for anything at all. A CLI must still be able to keep a refreshed token, or the user would be
 * logged out. So the sandbox gets a private copy, and after the process ends the copy goes back
 * to the host, atomically (a temporary file renamed over it), only when:
 * - it changed, and the host file still holds what was copied in (a login another run refreshed
 *   meanwhile is never overwritten by an older one);
 * - it is a regular file of valid JSON with the same shape as before: the same top-level keys,
 *   each of the same JSON type, and each object among them (Claude Code's `claudeAiOauth`,
 *   Codex's `tokens`) with the same keys. A refresh changes values, never the shape.
 * Anything else stays in the scratch and is deleted with it; the host's file is unchanged.
 * Same-shaped values (another account's tokens in the right fields) do go back: the shape is what
 * the runner can check, not whose tokens they are (docs/sandbox.md, limits).
 */

export interface LoginCopy {
  /** The user's file on the host. */
  readonly host: string;
  /** The private copy the sandboxed CLI reads and rewrites. */
  readonly copy: string;
  /** The host file's bytes when the copy was made. */
  readonly original: Buffer;
}

/** Past this a login file is not a login file: it is neither copied back nor parsed. */
const MAX_LOGIN_BYTES = 1024 * 1024;

/** Copies each login into its overlay's private folder; a file that cannot be read is left out. */
export function copyLoginsIn(logins: readonly string[], privateDir: string): LoginCopy[] {
  const copies: LoginCopy[] = [];
  for (const host of logins) {
    try {
      const original = readFileSync(host);
      const copy = join(privateDir, basename(host));
      writeFileSync(copy, original, { mode: 0o600, flag: 'wx' });
      copies.push({ host, copy, original });
    } catch {
      // Unreadable or gone since the policy was made: the CLI runs without it and says so.
    }
  }
  return copies;
}

/** What happened to each login after the process: kept (copied back), unchanged, or refused. */
export type LoginReturn = 'unchanged' | 'kept' | 'refused' | 'host-changed';

/** Puts back the refreshed logins that passed the checks above; never throws. */
export function returnLogins(copies: readonly LoginCopy[]): LoginReturn[] {
  return copies.map((login) => {
    try {
      return returnLogin(login);
    } catch {
      return 'refused';
    }
  });
}

function returnLogin(login: LoginCopy): LoginReturn {
  const stat = lstatSync(login.copy);
  if (!stat.isFile() || stat.size > MAX_LOGIN_BYTES) return 'refused';
  const now = readFileSync(login.copy);
  if (now.equals(login.original)) return 'unchanged';
  if (!readFileSync(login.host).equals(login.original)) return 'host-changed';
  if (!sameShape(parseJson(login.original), parseJson(now))) return 'refused';
  const temp = join(dirname(login.host), `.${basename(login.host)}.relais-${process.pid}-${Date.now()}`);
  try {
    writeFileSync(temp, now, { mode: statSync(login.host).mode & 0o777, flag: 'wx' });
    renameSync(temp, login.host);
  } finally {
    rmSync(temp, { force: true });
  }
  return 'kept';
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Same top-level keys and JSON types, and the same keys in every object one level down. */
export function sameShape(before: unknown, after: unknown): boolean {
  if (!isObject(before) || !isObject(after)) return false;
  if (!sameKeys(before, after)) return false;
  return Object.keys(before).every((key) => {
    const was = before[key];
    const is = after[key];
    if (jsonType(was) !== jsonType(is)) return false;
    return !isObject(was) || (isObject(is) && sameKeys(was, is));
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sameKeys(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keysA = Object.keys(a).sort();
  const keysB = Object.keys(b).sort();
  return keysA.length === keysB.length && keysA.every((key, i) => key === keysB[i]);
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}
