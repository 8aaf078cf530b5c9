import Conf from 'conf';
import { describeZodError } from '../protocol/model-json.js';
import { type UserSettings, userSettingsSchema } from '../protocol/user-settings.js';

/**
 * The user-level settings file, through `conf`: in the OS config folder (`$XDG_CONFIG_HOME/relais`
 * on Linux), or in `RELAIS_CONFIG_DIR` when set (tests, portable setups). conf writes atomically;
 * the shape is checked with the zod schema on every read and before every write, so a bad value is
 * refused by name and a hand-edited file that broke is reported, never silently dropped.
 */

export type SettingsRead = { ok: true; settings: UserSettings } | { ok: false; detail: string };

export interface UserSettingsStore {
  readonly path: string;
  read(): SettingsRead;
  /** Sets one dotted key (`agents.builder.provider`) after checking the whole result. */
  set(key: string, value: unknown): { ok: true } | { ok: false; detail: string };
  unset(key: string): void;
}

export function openUserSettings(
  env: NodeJS.ProcessEnv = process.env,
): UserSettingsStore | { error: string } {
  let conf: Conf<Record<string, unknown>>;
  try {
    conf = new Conf<Record<string, unknown>>({
      projectName: 'relais',
      projectSuffix: '',
      ...(env.RELAIS_CONFIG_DIR ? { cwd: env.RELAIS_CONFIG_DIR } : {}),
    });
  } catch (error) {
    return { error: `user settings unreadable: ${(error as Error).message}` };
  }
  const check = (store: unknown): SettingsRead => {
    const parsed = userSettingsSchema.safeParse(store);
    return parsed.success
      ? { ok: true, settings: parsed.data }
      : { ok: false, detail: `${conf.path}: ${describeZodError(parsed.error)}` };
  };
  return {
    path: conf.path,
    read: () => check(conf.store),
    set(key, value) {
      const next = structuredClone(conf.store);
      setDotted(next, key, value);
      const checked = check(next);
      if (!checked.ok) return { ok: false, detail: checked.detail.replace(`${conf.path}: `, '') };
      conf.set(key, value);
      return { ok: true };
    },
    unset: (key) => conf.delete(key),
  };
}

/** The user settings, or none when the folder has no valid file (`relais config list` names the problem). */
export function readUserSettings(env: NodeJS.ProcessEnv = process.env): SettingsRead {
  const store = openUserSettings(env);
  return 'error' in store ? { ok: false, detail: store.error } : store.read();
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
