import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { configSchema, type RelaisConfig } from '../protocol/config.js';
import { describeZodError } from '../protocol/model-json.js';
import { jsonErrorWhere } from './atomic-write.js';
import { CONFIG_FILE_NAME } from './paths.js';
import { readUserSettings, withUserDefaults } from './user-settings.js';

let builtIn: Record<string, object> | null = null;

/** Each role's built-in provider and model: the lowest layer under the user's and the project's. */
function builtInAgents(): Record<string, object> {
  builtIn ??= configSchema.parse({}).agents;
  return builtIn;
}

export type ConfigLoad =
  | { ok: true; config: RelaisConfig }
  | { ok: false; problem: 'missing' | 'unreadable' | 'invalid'; detail: string };

/** Reads relais.config.json; a bad file is reported with the field (or line) and the reason. */
export async function loadConfig(root: string, env: NodeJS.ProcessEnv = process.env): Promise<ConfigLoad> {
  const path = join(root, CONFIG_FILE_NAME);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      return { ok: false, problem: 'missing', detail: `${CONFIG_FILE_NAME} not found in ${root}` };
    return { ok: false, problem: 'unreadable', detail: `${CONFIG_FILE_NAME}: ${(error as Error).message}` };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      problem: 'invalid',
      detail: `${CONFIG_FILE_NAME} is not JSON: ${jsonErrorWhere(text, error as Error)}`,
    };
  }
  // The user's settings (`relais config`) sit beneath the project's file: the project wins. A
  // broken settings file is left out here; the command's session warns with its path
  // (cli/engine-session.ts), and `relais config list` names what is wrong.
  const user = readUserSettings(env);
  // The built-in agents (a whole parse of the schema's defaults) only when the user has agent defaults.
  const parsed = configSchema.safeParse(
    user.ok && user.settings.agents ? withUserDefaults(raw, user.settings, builtInAgents()) : raw,
  );
  if (!parsed.success) {
    return {
      ok: false,
      problem: 'invalid',
      detail: `${CONFIG_FILE_NAME}: ${describeZodError(parsed.error)}`,
    };
  }
  return { ok: true, config: parsed.data };
}
