import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
} from 'node:fs';

/**
 * lstat for the judge's per-file loops (objects, tree walks, stamps): synchronous on purpose, since
 * thousands of calls have nothing to overlap and the async round trip dominated; any failure
 * (missing, a parent replaced by a file, no permission) reads as "not there".
 */
export function statOrNull(path: string): BigIntStats | null {
  try {
    return lstatSync(path, { bigint: true, throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

/**
 * The bytes of a regular file (through a symbolic link, as a plain read would), or null for
 * anything else, anything unreadable, or a file larger than `maxBytes`. Opened without blocking
 * and checked on the open descriptor: the judge's synchronous reads must never wait on a FIFO a
 * builder left (or swapped in after an lstat), which would freeze the whole runner, signal
 * handlers included.
 */
export function readRegularFile(path: string, maxBytes = Number.POSITIVE_INFINITY): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stat = fstatSync(fd);
    return stat.isFile() && stat.size <= maxBytes ? readOpenFile(fd, stat.size) : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** The largest file `readFileSync` reads in Node 20 (kIoMaxLength). */
const READ_FILE_MAX_BYTES = 2 ** 31 - 1;

/**
 * What `readFileSync(fd)` reads from a regular file (up to the size its fstat gave, or less if it
 * shrank meanwhile), without the second fstat it makes and with a small file's buffer taken from
 * Node's pool: the refs guard reads every ref file and the ignored snapshot every kept file, each
 * tick (issue 17). A size of 0 keeps readFileSync's own reading to the end (files of /proc and
 * the like say 0 and hold bytes).
 */
function readOpenFile(fd: number, size: number): Buffer {
  // Above readFileSync's own limit it throws ERR_FS_FILE_TOO_LARGE (read as null by the caller),
  // as before; readSync's length would wrap at 4 GiB and read a giant file as empty.
  if (size === 0 || size > READ_FILE_MAX_BYTES) return readFileSync(fd);
  const buffer = Buffer.allocUnsafe(size);
  let filled = 0;
  while (filled < size) {
    const read = readSync(fd, buffer, filled, size - filled, null);
    if (read === 0) break;
    filled += read;
  }
  return filled < size ? buffer.subarray(0, filled) : buffer;
}

/** What the unsafe-files walk needs of one file's lstat. */
export interface LinkFacts {
  /** ctime in whole milliseconds, rounded down (never later than the bigint lstat's ctimeMs + 1). */
  readonly ctimeFloorMs: number;
  readonly nlink: number;
  readonly isFile: boolean;
  /** FIFO, socket or device node; null for anything else. */
  readonly special: 'FIFO' | 'socket' | 'device node' | null;
}

/**
 * Ignored folders the ignored-files walk of one judgement went through completely, each with the
 * lstat of every non-folder entry below it, by absolute path: the unsafe-files walk that runs
 * right after it, on the same tree, takes these instead of reading the folders a second time
 * (issue 17: a 30k-file node_modules/ was read twice per judgement). Never kept past the
 * judgement that made it.
 */
export type StatMemo = Map<string, Map<string, LinkFacts>>;

export function linkFactsOf(stat: {
  ctimeMs: number;
  nlink: number;
  isFile(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): LinkFacts {
  return {
    ctimeFloorMs: Math.floor(stat.ctimeMs),
    nlink: stat.nlink,
    isFile: stat.isFile(),
    special: stat.isFIFO()
      ? 'FIFO'
      : stat.isSocket()
        ? 'socket'
        : stat.isCharacterDevice() || stat.isBlockDevice()
          ? 'device node'
          : null,
  };
}

/** A folder's names, or none when it is gone or unreadable (the judge's synchronous walks). */
export function namesOrEmpty(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
