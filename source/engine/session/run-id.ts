import { randomBytes } from 'node:crypto';
import { makeRunId } from '../tick/tick-record.js';

/** A fresh run id (20261122T035000Z-a1b2c3): sortable, and unique enough for one repository. */
export function newRunId(now: Date): string {
  return makeRunId(now, randomBytes(3).toString('hex'));
}
