import { lstat, open } from 'node:fs/promises';

/**
 * Line counts for files git does not diff for us (ignored files); anything but a regular file
 * counts as zero lines: binary when a NUL byte shows in
 * the first 8000 bytes, as git decides; reads in chunks so a huge file costs no memory.
 */
export async function countLines(path: string): Promise<{ lines: number; binary: boolean }> {
  // Only regular files are opened: a FIFO would block forever, a symlink would be followed.
  const stat = await lstat(path).catch(() => null);
  if (!stat?.isFile()) return { lines: 0, binary: false };
  const handle = await open(path, 'r').catch(() => null);
  if (!handle) return { lines: 0, binary: false };
  try {
    const buffer = Buffer.alloc(64 * 1024);
    let lines = 0;
    let offset = 0;
    let last = 10;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      if (offset < 8000 && chunk.subarray(0, 8000 - offset).includes(0)) return { lines: 0, binary: true };
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      last = chunk[bytesRead - 1] ?? 10;
      offset += bytesRead;
    }
    // A last line without a newline still counts, as it does in a diff.
    return { lines: offset > 0 && last !== 10 ? lines + 1 : lines, binary: false };
  } finally {
    await handle.close();
  }
}

export function countLinesInBuffer(content: Buffer): number {
  if (content.subarray(0, 8000).includes(0)) return 0;
  let lines = 0;
  for (let i = content.indexOf(10); i !== -1; i = content.indexOf(10, i + 1)) lines++;
  return content.length > 0 && content[content.length - 1] !== 10 ? lines + 1 : lines;
}
