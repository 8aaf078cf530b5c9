import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

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
