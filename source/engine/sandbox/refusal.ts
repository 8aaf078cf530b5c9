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

/** The first line of `text` that shows a write the sandbox refused, or null. */
export function sandboxRefusalIn(text: string | null | undefined): string | null {
  if (!text) return null;
  const line = text.split('\n').find((l) => REFUSED.test(l));
  return line === undefined ? null : line.trim().slice(0, MAX_LINE);
}
