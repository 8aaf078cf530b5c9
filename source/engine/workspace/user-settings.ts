import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import envPaths from 'env-paths';
import { describeZodError } from '../protocol/model-json.js';
import {
  isUserSettingKey,
  type UserSettings,
  userSettingKeys,
  userSettingsSchema,
} from '../protocol/user-settings.js';
import { PACKAGE_ROOT } from './package-assets.js';

/**
 * The user-level settings file, written through `conf`: in the OS config folder
 * (`$XDG_CONFIG_HOME/relais/config.json` on Linux, the folder conf itself picks through env-paths),
 * or in `RELAIS_CONFIG_DIR` when set (tests, portable setups). conf writes atomically; the shape is
 * checked with the zod schema on every read and before every write, so a bad value is refused by
 * name and a hand-edited file that broke is reported, never silently dropped.
 *
 * Only `relais config` loads conf. Importing it (through atomically's when-exit) hooks SIGINT,
 * SIGTERM and SIGHUP and raises the signal again after its own cleanup: in a running tick that
 * second signal turned the first Ctrl-C (stop the agent, roll back, report) into a forced quit with
 * no report. Every other command reads the same JSON file directly, validated the same way.
 */

export type SettingsRead = { ok: true; settings: UserSettings } | { ok: false; detail: string };

export interface UserSettingsStore {
  readonly path: string;
  read(): SettingsRead;
  /** Sets one dotted key (`agents.builder.provider`) after checking the whole result. */
  set(key: string, value: unknown): { ok: true } | { ok: false; detail: string };
  /** Removes one dotted key; the file is left as it is when the key is not set. */
  unset(key: string): void;
  /** Every key that can be set (`theme`, `agents.builder.model`...). */
  readonly keys: readonly string[];
  /** Whether `key` is a setting or a group of them (`agents.builder`). */
  isKnown(key: string): boolean;
}

/** The folder conf keeps the settings in (its `cwd` option, or its own env-paths default). */
function settingsFolder(env: NodeJS.ProcessEnv): string {
  return env.RELAIS_CONFIG_DIR || envPaths('relais', { suffix: '' }).config;
}

/** Where the settings file is: the same path conf reads and writes. */
export function userSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(settingsFolder(env), 'config.json');
}

function check(store: unknown, path: string): SettingsRead {
  const parsed = userSettingsSchema.safeParse(store);
  return parsed.success
    ? { ok: true, settings: parsed.data }
    : { ok: false, detail: `${path}: ${describeZodError(parsed.error)}` };
}

/** The store `relais config` edits; conf is loaded here only (see above). */
export async function openUserSettings(
  env: NodeJS.ProcessEnv = process.env,
): Promise<UserSettingsStore | { error: string }> {
  const { default: Conf } = await import('conf');
  let conf: InstanceType<typeof Conf<Record<string, unknown>>>;
  try {
    conf = new Conf<Record<string, unknown>>({
      projectName: 'relais',
      projectSuffix: '',
      cwd: settingsFolder(env),
    });
  } catch (error) {
    return { error: `user settings unreadable: ${(error as Error).message}` };
  }
  return {
    path: conf.path,
    read: () => check(conf.store, conf.path),
    set(key, value) {
      const next = structuredClone(conf.store);
      setDotted(next, key, value);
      const checked = check(next, conf.path);
      if (!checked.ok) return { ok: false, detail: checked.detail.replace(`${conf.path}: `, '') };
      conf.set(key, value);
      // Editors check the file against its schema (the installed package's copy).
      if (conf.get('$schema') === undefined) conf.set('$schema', USER_SETTINGS_SCHEMA);
      return { ok: true };
    },
    unset: (key) => {
      // conf writes the file on every delete, creating it when there was none.
      if (conf.has(key)) conf.delete(key);
    },
    keys: userSettingKeys(),
    isKnown: isUserSettingKey,
  };
}

/** schemas/user_settings.schema.json of this installation, as a URL an editor can open. */
const USER_SETTINGS_SCHEMA = pathToFileURL(join(PACKAGE_ROOT, 'schemas', 'user_settings.schema.json')).href;

/** What the user settings change in a command's session (cli/engine-session.ts). */
export interface UserPreferences {
  /** `theme: "none"`: the app draws without colours whatever the terminal; `auto`: NO_COLOR decides. */
  readonly theme: 'auto' | 'none';
  /** `notifications.enabled`: a terminal bell when a gate asks and when the work ends. */
  readonly bell: boolean;
  /** A broken settings file, ignored for this run: its path and what is wrong. */
  readonly problem: string | null;
}

/** Async so the engine's front door can load this module when a session starts, not before. */
export async function readUserPreferences(env: NodeJS.ProcessEnv = process.env): Promise<UserPreferences> {
  const read = readUserSettings(env);
  if (!read.ok) return { theme: 'auto', bell: false, problem: read.detail };
  return {
    theme: read.settings.theme ?? 'auto',
    bell: read.settings.notifications?.enabled === true,
    problem: null,
  };
}

/** The user settings, or none when there is no file; a broken file is reported, never dropped. */
export function readUserSettings(env: NodeJS.ProcessEnv = process.env): SettingsRead {
  const path = userSettingsPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, settings: {} };
    return { ok: false, detail: `${path}: ${(error as Error).message}` };
  }
  try {
    return check(JSON.parse(text), path);
  } catch (error) {
    return { ok: false, detail: `${path}: not JSON (${(error as Error).message})` };
  }
}

/**
 * The project's raw config with the user's agent defaults beneath it: a role field the project
 * names keeps its value; one it omits takes the user's, and then the built-in default.
 */
export function withUserDefaults(
  raw: unknown,
  settings: UserSettings,
  builtIn: Readonly<Record<string, object>>,
): unknown {
  if (!settings.agents || typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  const project = raw as Record<string, unknown>;
  if (project.agents !== undefined && (typeof project.agents !== 'object' || project.agents === null))
    return raw;
  const agents = (project.agents ?? {}) as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...agents };
  for (const [role, defaults] of Object.entries(settings.agents)) {
    const own = agents[role];
    if (own !== undefined && (typeof own !== 'object' || own === null)) continue; // the schema reports it
    merged[role] = { ...builtIn[role], ...defaults, ...(own as object | undefined) };
  }
  return { ...project, agents: merged };
}

function setDotted(target: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (typeof node[part] !== 'object' || node[part] === null) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts.at(-1) as string] = value;
}
