import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type WorkspacePaths, workspacePaths } from '../../source/engine/workspace/paths.js';

/** A workspace folder with an empty history, in a temp folder of its own (`dir`, for the caller to remove). */
export interface HistoryWorkspace {
  readonly dir: string;
  readonly paths: WorkspacePaths;
  /** A run folder holding one file of `bytes` bytes, as a finished run leaves it. */
  run(name: string, bytes: number): string;
}

export function makeHistoryWorkspace(prefix: string): HistoryWorkspace {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const paths = workspacePaths(dir, 'ws');
  mkdirSync(paths.historyDir, { recursive: true });
  return {
    dir,
    paths,
    run(name, bytes) {
      const folder = join(paths.historyDir, name);
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'report.md'), 'x'.repeat(bytes));
      return folder;
    },
  };
}

/**
 * Whether folders in the temp folder count their subfolders in their link count (ext4, xfs,
 * tmpfs), which history's tally needs: on btrfs or a merged overlayfs folder a tick never keeps
 * one, by design (workspace/history-tally.ts), and every tick lists history as unit/history tests.
 */
export function tempFolderCountsSubfolders(): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'relais-nlink-'));
  try {
    mkdirSync(join(dir, 'a'));
    mkdirSync(join(dir, 'b'));
    return statSync(dir).nlink === 4;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
