import { join } from 'node:path';

/** Where the cycle keeps its files (apart from state.ts, so finding them loads no schema). */
export interface CyclePaths {
  readonly dir: string;
  readonly state: string;
  readonly lock: string;
  readonly notifications: string;
  readonly tracksData: string;
  readonly verifyDir: string;
}

export function cyclePaths(root: string, workspaceDir: string): CyclePaths {
  const dir = join(root, workspaceDir, 'cycle');
  return {
    dir,
    state: join(dir, 'STATE.json'),
    lock: join(dir, 'lock.json'),
    notifications: join(root, workspaceDir, 'notifications'),
    tracksData: join(dir, 'tracks'),
    verifyDir: join(dir, 'verify'),
  };
}
