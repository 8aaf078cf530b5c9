import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { configScratch } from './bwrap-args.js';
import { copyLoginsIn, type LoginCopy, returnLogins } from './login-files.js';
import type { SandboxPolicy } from './policy.js';

/**
 * A private scratch folder per sandboxed process: its HOME and temp folder, removed when the
 * process has ended (its mount namespace is gone by then, so no bind is still inside it).
 * HOME files the agent needs (a login in ~/.claude.json) are copied in, never bound: a file bind
 * mount cannot be replaced by the rename a CLI saves it with. Each agent config overlay gets its
 * private folder here (bwrap-args.ts binds it over the config folder), with a private copy of the
 * CLI's login file that goes back to the host only as a same-shaped refresh (login-files.ts).
 */
export interface Scratch {
  readonly dir: string;
  readonly logins: readonly LoginCopy[];
}

export function makeScratch(policy: SandboxPolicy): Scratch {
  const dir = mkdtempSync(join(tmpdir(), 'relais-sandbox-'));
  mkdirSync(join(dir, 'home'));
  mkdirSync(join(dir, 'tmp'));
  copyInto(policy.homeFiles, join(dir, 'home'));
  const logins: LoginCopy[] = [];
  policy.agentConfigs.forEach((overlay, index) => {
    const config = configScratch(dir, index);
    mkdirSync(config, { recursive: true });
    copyInto(overlay.copied, config);
    logins.push(...copyLoginsIn(overlay.logins, config));
  });
  return { dir, logins };
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

const removals = new Set<Promise<void>>();

/**
 * After the process: refreshed logins go back (when they pass), now; then everything is deleted,
 * off the runner's thread. Right after a sandbox ends, an rmdir of a folder that held one of its
 * mount points can wait on the kernel releasing the dead namespace: in real Claude Code ticks
 * the synchronous removal took 2-4 ms most times and 43 ms once in eight calls, and profiles
 * showed 20-60 ms in rmdir per call (issue 17). Pending removals keep Node's event loop alive,
 * so a process that ends normally still removes every scratch folder.
 */
export function removeScratch(scratch: Scratch): void {
  returnLogins(scratch.logins);
  const removal: Promise<void> = rm(scratch.dir, { recursive: true, force: true, maxRetries: 3 })
    .catch(() => undefined)
    .finally(() => removals.delete(removal));
  removals.add(removal);
}

/** Resolves once every scratch folder removed so far is gone. */
export async function scratchRemovalsSettled(): Promise<void> {
  await Promise.all([...removals]);
}
