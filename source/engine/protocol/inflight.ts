import { z } from 'zod';

/**
 * relais/INFLIGHT.json: written right before BUILD, removed once the tick has committed or rolled
 * back. If it is still there when the next run takes the lock, that run was killed mid-tick (a
 * second Ctrl-C, kill -9, a crash) and the next run recovers from it. It carries the git control
 * files as they were, so they can be restored before any git command runs.
 */
export const inflightSchema = z.strictObject({
  run_id: z.string().min(1),
  base_commit: z.string().min(7).max(64),
  branch_ref: z.string().nullable(),
  started_at: z.iso.datetime(),
  /** device:inode of the git folders: a replaced .git is never touched by the recovery. */
  git_dir_identities: z.record(z.string(), z.string().nullable()),
  /** The snapshot roots exactly as taken: which were single files and which were walked folders. */
  git_roots: z.array(z.strictObject({ path: z.string().min(1), recursive: z.boolean() })),
  git_files: z.array(
    z.strictObject({
      path: z.string().min(1),
      kind: z.enum(['absent', 'file', 'dir', 'symlink']),
      mode: z.int().min(0),
      content_base64: z.string().nullable(),
      target: z.string().nullable(),
    }),
  ),
  flagged: z.record(z.string(), z.enum(['assume-unchanged', 'skip-worktree'])),
  replace_refs: z.array(z.string()),
});

export type Inflight = z.infer<typeof inflightSchema>;
