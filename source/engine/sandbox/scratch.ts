import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { SandboxPolicy } from './policy.js';

/**
 * A private scratch folder per sandboxed process: its HOME and temp folder, removed when the
 * process has ended (its mount namespace is gone by then, so no bind is still inside it).
 * HOME files the agent needs (a login in ~/.claude.json) are copied in, never bound: a file bind
 * mount cannot be replaced by the rename a CLI saves it with.
 */
export function makeScratch(policy: SandboxPolicy): string {
  const scratch = mkdtempSync(join(tmpdir(), 'relais-sandbox-'));
  mkdirSync(join(scratch, 'home'));
  mkdirSync(join(scratch, 'tmp'));
  for (const file of policy.homeFiles) {
    try {
      copyFileSync(file, join(scratch, 'home', basename(file)));
    } catch {
      // Unreadable or gone since the policy was made: the agent runs without it and says so.
    }
  }
  return scratch;
}

export function removeScratch(scratch: string): void {
  rmSync(scratch, { recursive: true, force: true });
}
