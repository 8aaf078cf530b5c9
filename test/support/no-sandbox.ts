import { chmodSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * PATHs on which no sandbox can be had, as on a machine without bubblewrap (issue 14's "where no
 * sandbox can be had"), for the real CLI: the product looks bwrap up on PATH each run.
 */

/** A PATH holding every program of this one (links in a folder of `base`) except bwrap. */
export function pathWithoutBwrap(base: string): string {
  const bin = join(base, 'bin-without-bwrap');
  mkdirSync(bin, { recursive: true });
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir || !existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (name === 'bwrap' || existsSync(join(bin, name))) continue;
      symlinkSync(join(dir, name), join(bin, name));
    }
  }
  return bin;
}

/**
 * A PATH whose first bwrap cannot create a sandbox, the way bubblewrap fails where unprivileged
 * user namespaces are off: it is found, and the probe's sandbox fails at start.
 */
export function pathWithBrokenBwrap(base: string): string {
  const bin = join(base, 'bin-broken-bwrap');
  mkdirSync(bin, { recursive: true });
  const bwrap = join(bin, 'bwrap');
  writeFileSync(bwrap, '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n');
  chmodSync(bwrap, 0o755);
  return `${bin}${delimiter}${process.env.PATH}`;
}
