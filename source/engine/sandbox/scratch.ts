import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { configScratch } from './bwrap-args.js';
import { scratchPrefix, sweepLeftoverScratchOnce } from './leftover-scratch.js';
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
  // What killed runners left (their logins' copies too) goes, once per process, in the background.
  void sweepLeftoverScratchOnce();
  const dir = mkdtempSync(join(tmpdir(), scratchPrefix('sandbox')));
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

/** After the process: refreshed logins go back (when they pass), then everything is deleted. */
export function removeScratch(scratch: Scratch): void {
  returnLogins(scratch.logins);
  try {
    rmSync(scratch.dir, { recursive: true, force: true });
  } catch {
    // A folder the agent made read-only (a Go module cache) when not run as root: left, named for
    // this runner, to the sweep of a later one (leftover-scratch.ts), which makes it writable first.
  }
}
