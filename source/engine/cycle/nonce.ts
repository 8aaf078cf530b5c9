import { createHash, randomBytes } from 'node:crypto';

/**
 * Seed 003 Step 2 VALIDATE 3: a hex cycle id gives `cycle_id[:6].upper()`, any other id
 * `sha256(cycle_id.encode('utf-8')).hexdigest()[:6].upper()`. A hex id shorter than six
 * characters would give a nonce that fails `^[0-9A-F]{6}$`, so it is hashed like a non-hex id.
 */
export const NONCE_PATTERN = /^[0-9A-F]{6}$/;

export function deriveNonce(cycleId: string): string {
  const nonce = /^[0-9a-fA-F]{6,}$/.test(cycleId)
    ? cycleId.slice(0, 6).toUpperCase()
    : createHash('sha256').update(cycleId, 'utf8').digest('hex').slice(0, 6).toUpperCase();
  if (!NONCE_PATTERN.test(nonce)) throw new Error(`derived nonce ${nonce} is not 6 hex digits`);
  return nonce;
}

/** A fresh cycle id: 16 random hex digits whose nonce is none of `used`. */
export function newCycleId(used: readonly string[] = []): string {
  for (;;) {
    const id = randomBytes(8).toString('hex');
    if (!used.includes(deriveNonce(id))) return id;
  }
}
