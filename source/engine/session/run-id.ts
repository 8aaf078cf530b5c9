import { randomBytes } from 'node:crypto';

/** A fresh run id (20261122T035000Z-a1b2c3): sortable, and unique enough for one repository. */
export function newRunId(now: Date): string {
  return makeRunId(now, randomBytes(3).toString('hex'));
}

/** Sortable and unique enough for one repository: 20261122T035000Z-a1b2c3. */
export function makeRunId(now: Date, random: string): string {
  return `${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${random}`;
}
