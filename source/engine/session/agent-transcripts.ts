import {
  listTranscripts,
  readTranscript,
  type TranscriptEntry,
  transcriptsDir,
} from '../agents/transcripts.js';
import { loadConfig } from '../workspace/load-config.js';
import { workspacePaths } from '../workspace/paths.js';

/**
 * A project's agent transcripts for the app's `l` (issue 16 item 11): where they are follows the
 * project's config (its workspace folder), which the session reads for every flow.
 */

/** The transcripts folder of the project at `root` (its config names the workspace folder). */
async function projectTranscriptsDir(root: string, env: NodeJS.ProcessEnv): Promise<string> {
  const loaded = await loadConfig(root, env);
  const workspace = loaded.ok ? loaded.config.workspace_dir : 'relais';
  return transcriptsDir(workspacePaths(root, workspace).historyDir);
}

/** The app's list of agent runs (`l`): the project's transcripts, newest first. */
export async function listAgentTranscripts(root: string, env: NodeJS.ProcessEnv): Promise<TranscriptEntry[]> {
  return listTranscripts(await projectTranscriptsDir(root, env), root);
}

/** One of the project's transcripts, by the id `listAgentTranscripts` gave. */
export async function readAgentTranscript(root: string, env: NodeJS.ProcessEnv, id: string): Promise<string> {
  return readTranscript(await projectTranscriptsDir(root, env), id);
}
