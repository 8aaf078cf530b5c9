import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
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
