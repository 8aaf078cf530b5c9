import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { configScratch } from './bwrap-args.js';
import type { SandboxPolicy } from './policy.js';

/**
 * A private scratch folder per sandboxed process: its HOME and temp folder, removed when the
 * process has ended (its mount namespace is gone by then, so no bind is still inside it).
 * HOME files the agent needs (a login in ~/.claude.json) are copied in, never bound: a file bind
 * mount cannot be replaced by the rename a CLI saves it with. Each agent config overlay gets its
 * private folder here (bwrap-args.ts binds it over the config folder).
 */
export function makeScratch(policy: SandboxPolicy): string {
  const scratch = mkdtempSync(join(tmpdir(), 'relais-sandbox-'));
  mkdirSync(join(scratch, 'home'));
  mkdirSync(join(scratch, 'tmp'));
  copyInto(policy.homeFiles, join(scratch, 'home'));
  policy.agentConfigs.forEach((overlay, index) => {
    const dir = configScratch(scratch, index);
    mkdirSync(dir, { recursive: true });
    copyInto(overlay.copied, dir);
  });
  return scratch;
}

function copyInto(files: readonly string[], dir: string): void {
  for (const file of files) {
    try {
      copyFileSync(file, join(dir, basename(file)));
    } catch {
      // Unreadable or gone since the policy was made: the agent runs without it and says so.
    }
  }
}

export function removeScratch(scratch: string): void {
  rmSync(scratch, { recursive: true, force: true });
}
