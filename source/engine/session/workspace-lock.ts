/**
 * The workspace lock, as flows take it (through session/). Its own file so that a reader of the
 * workspace (`relais status`, the cycle's status lines) does not load every session module the
 * barrel index.ts re-exports (issue 17: start-up time).
 */
export { acquireLock, type HeldLock, inspectLock } from '../workspace/lock.js';
