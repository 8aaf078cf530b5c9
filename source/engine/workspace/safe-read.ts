import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { resolvesUnderRoot } from './safe-path.js';

/**
 * Reads a file another program wrote, without trusting it: a symlink is not followed, a FIFO
 * never blocks (non-blocking open, then only regular files are read), and the size is capped.
 */
export async function readUntrustedFile(
  path: string,
  maxBytes: number,
): Promise<{ ok: true; text: string } | { ok: false; reason: string }> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      reason: code === 'ENOENT' ? 'missing' : code === 'ELOOP' ? 'is a symlink' : `unreadable (${code})`,
    };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { ok: false, reason: 'is not a regular file' };
    if (stat.size > maxBytes) return { ok: false, reason: `is larger than ${maxBytes} bytes` };
    return { ok: true, text: await handle.readFile('utf8') };
  } finally {
    await handle.close();
  }
}

/**
 * A file of the repository named by its relative path, read as `readUntrustedFile` does and only
 * when every folder on the way is really in the repository: a cloned repository can ship
 * `specs/` as a link to a folder outside, or a document as a link to a private file, and what the
 * runner reads goes to gates, agent prompts and the pull request body.
 */
export async function readRepoFile(
  root: string,
  rel: string,
  maxBytes: number,
): Promise<{ ok: true; text: string } | { ok: false; reason: string }> {
  if (!(await resolvesUnderRoot(root, rel))) return { ok: false, reason: 'leads out of the repository' };
  return readUntrustedFile(join(root, rel), maxBytes);
}
