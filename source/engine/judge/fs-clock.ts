import { lstatSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The filesystem's own clock, read as the change time (ctime) of a file the runner writes now.
 *
 * Why ctime can stand in for a before/after fingerprint: the kernel sets an inode's ctime to the
 * current time on every change to it (a write, truncate, chmod, link, rename of the file) and
 * no system call sets it to anything else (utimes sets mtime and atime, and moves ctime to now).
 * A process cannot set it back without changing the machine's clock, which takes root. So on the
 * filesystem that holds this marker, every file changed after the clock was read has
 * `ctime >= sinceMs`: both stamps come from the same kernel clock and are truncated to the same
 * granularity, which is why the marker's device is returned and a folder on another device
 * (another filesystem, a network mount with its own clock) is never judged this way.
 *
 * The kernel stamps with a coarse clock (one tick, a few ms), so a change made just before the
 * marker can carry the marker's own stamp. The marker is therefore touched until its stamp moves
 * on, and that later stamp is the clock: whatever changed before reading it, except in that last
 * tick while the runner itself was only touching the marker, is older. A filesystem whose stamps
 * do not move within MAX_WAIT_MS (whole seconds: HFS+, ext3, FAT) gets no clock.
 */
export interface FsClock {
  /**
   * ctime of the marker once it moved past its first stamp, in milliseconds as Node's plain lstat
   * gives them (seconds * 1e3 + nanoseconds / 1e6, a double). That sum never decreases as the
   * stamp grows, so comparing two such numbers with >= keeps the kernel's order: a later stamp
   * never reads as earlier (it can only read equal within half a microsecond, which counts as
   * changed). Plain numbers, not bigint stats: they cost no garbage on 30k-file walks.
   */
  readonly sinceMs: number;
  /** st_dev of the marker: only files on this device can be judged by ctime. */
  readonly dev: number;
}

const MAX_WAIT_MS = 50;

/** Null when there is no usable clock (unwritable folder, coarse stamps): callers fingerprint everything. */
export function readFsClock(dir: string): FsClock | null {
  const marker = join(dir, `.relais-clock-${process.pid}`);
  try {
    writeFileSync(marker, '');
    const first = lstatSync(marker);
    const deadline = performance.now() + MAX_WAIT_MS;
    while (performance.now() < deadline) {
      const now = new Date();
      utimesSync(marker, now, now);
      const stat = lstatSync(marker);
      if (stat.ctimeMs > first.ctimeMs) return { sinceMs: stat.ctimeMs, dev: stat.dev };
    }
    return null;
  } catch {
    return null;
  } finally {
    rmSync(marker, { force: true });
  }
}
