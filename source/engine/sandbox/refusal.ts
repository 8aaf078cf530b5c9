import { isAbsolute } from 'node:path';
import { isInside } from './writable-paths.js';

/**
 * Whether a failed process's own error output says the sandbox refused one of its writes: the
 * read-only view of the filesystem answers EROFS, and a hard link or rename out of a writable
 * folder answers EXDEV (bwrap-args.ts). A builder that dies of it was fenced, not interrupted
 * (issue 14): the tick says so, with the line that shows it. Pure, so the wording of each
 * runtime (node's `EROFS: read-only file system`, libc's `Read-only file system`, Python's
 * `[Errno 30]`) is tested in one place.
 */
const REFUSED = /\bEROFS\b|read-only file system|\bEXDEV\b|invalid cross-device link/i;

const MAX_LINE = 300;

/**
 * The first line of `text` that shows a write the sandbox refused, or null. With the folders the
 * sandbox bound writable, a recursive mkdir's ENOENT outside them counts too (below).
 */
export function sandboxRefusalIn(
  text: string | null | undefined,
  writable: readonly string[] | null = null,
): string | null {
  if (!text) return null;
  const line = text.split('\n').find((l) => REFUSED.test(l));
  if (line !== undefined) return line.trim().slice(0, MAX_LINE);
  return writable ? mkdirRefusalIn(text, writable) : null;
}

/**
 * Node's recursive mkdir (`fs.mkdir(dir, { recursive: true })`, how node tools make a new file's
 * folder) answers ENOENT, not EROFS, on a read-only mount (Node 20), so a builder that died making
 * a folder the sandbox does not let it write was reported interrupted. Such a line is a refusal
 * when its folder (absolute, as the runner cannot place a relative one) is outside every folder
 * the sandbox bound writable. Control characters in the name are escaped.
 */
const MKDIR_ENOENT = /ENOENT: no such file or directory, mkdir '([^']*)'/;

export function mkdirRefusalIn(text: string | null | undefined, writable: readonly string[]): string | null {
  const match = text ? MKDIR_ENOENT.exec(text) : null;
  const dir = match?.[1];
  if (!match || dir === undefined || !isAbsolute(dir)) return null;
  if (writable.some((folder) => dir === folder || isInside(folder, dir))) return null;
  return escapeControls(match[0]).slice(0, MAX_LINE);
}

function escapeControls(text: string): string {
  return [...text]
    .map((c) => {
      const code = c.codePointAt(0) ?? 0;
      return code < 0x20 || (code >= 0x7f && code <= 0x9f) ? JSON.stringify(c).slice(1, -1) : c;
    })
    .join('');
}
