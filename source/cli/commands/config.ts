import { openUserSettings } from '../../engine/index.js';
import { EXIT } from '../exit-codes.js';
import { type CommandIo, println } from '../io.js';

/**
 * `relais config get <key> | set <key> <value> | unset <key> | list | path`: the user-level
 * settings (default provider and model per role, notifications, theme) in the OS config folder,
 * beneath every project's relais.config.json. A value is read as JSON when it parses (`true`,
 * `null`, `"x"`), else as text; the whole file is checked before anything is written.
 */
export async function configCommand(
  io: CommandIo,
  words: readonly string[],
  flags: { json: boolean },
): Promise<number> {
  const [action, key, value, ...extra] = words;
  const arity: Record<string, number> = { get: 1, set: 2, unset: 1, list: 0, path: 0 };
  const wanted = action === undefined ? undefined : arity[action];
  const given = words.length - 1;
  if (wanted === undefined || given !== wanted || extra.length > 0) {
    println(io.stderr, 'Usage: relais config get <key> | set <key> <value> | unset <key> | list | path');
    return EXIT.USAGE;
  }
  const store = await openUserSettings(io.env);
  if ('error' in store) {
    println(io.stderr, `relais config: ${store.error}`);
    return EXIT.STOP;
  }
  if (action === 'path') {
    println(io.stdout, store.path);
    return EXIT.SUCCESS;
  }
  // A key nobody knows is a usage error, named: never a silent nothing, never a file written.
  if (key !== undefined && !store.isKnown(key)) {
    println(io.stderr, `relais config: unknown key "${key}"\n  Keys: ${describeKeys(store.keys)}`);
    return EXIT.USAGE;
  }
  if (action === 'set' || action === 'unset') {
    const done = action === 'set' ? store.set(key as string, parseValue(value as string)) : unset(store, key);
    if (!done.ok) {
      // The detail already starts with the field (`theme: Invalid option...`).
      println(io.stderr, `relais config: ${done.detail}`);
      return EXIT.USAGE;
    }
    return EXIT.SUCCESS;
  }
  const read = store.read();
  if (!read.ok) {
    println(
      io.stderr,
      `relais config: ${read.detail}\n  Fix: relais config unset <key>, or edit ${store.path}`,
    );
    return EXIT.STOP;
  }
  if (action === 'list') {
    println(io.stdout, JSON.stringify(read.settings, null, flags.json ? undefined : 2));
    return EXIT.SUCCESS;
  }
  const found = valueAt(read.settings, key as string);
  if (found === undefined) {
    println(io.stderr, `relais config: ${key} is not set (relais config set ${key} <value>)`);
    return EXIT.STOP;
  }
  println(io.stdout, typeof found === 'string' && !flags.json ? found : JSON.stringify(found));
  return EXIT.SUCCESS;
}

function unset(
  store: Exclude<Awaited<ReturnType<typeof openUserSettings>>, { error: string }>,
  key: string | undefined,
): { ok: true } {
  store.unset(key as string);
  return { ok: true };
}

/** `theme, notifications.enabled, agents.<role>.provider|model|fallback_model (role: ...)`. */
function describeKeys(keys: readonly string[]): string {
  const roles = new Set<string>();
  const shown = new Set<string>();
  const perRole: string[] = [];
  for (const key of keys) {
    const role = /^agents\.([^.]+)\.(.+)$/.exec(key);
    if (!role) shown.add(key);
    else {
      roles.add(role[1] as string);
      if (!perRole.includes(role[2] as string)) perRole.push(role[2] as string);
    }
  }
  const agents =
    perRole.length > 0 ? [`agents.<role>.${perRole.join('|')} (role: ${[...roles].join(', ')})`] : [];
  return [...shown, ...agents].join(', ');
}

function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function valueAt(settings: object, key: string): unknown {
  let node: unknown = settings;
  for (const part of key.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}
