import { parseArgs } from 'node:util';
import {
  COMMAND_HELP,
  COMMAND_NAMES,
  type CommandHelp,
  type CommandName,
  isCommandName,
  type OptionHelp,
} from './commands.js';

/**
 * Reads argv into one of four answers (help, version, usage error, a command to run) without
 * loading anything but the help table: a help request is answered before any command module,
 * so `relais init --help` never initialises (issue 16 item 2). node:util's parseArgs instead of
 * meow keeps `relais --help` as cheap as Node's own start (issue 17's startup budget).
 */

export interface CliFlags {
  json: boolean;
  yes: boolean;
  preflight: boolean;
  force: boolean;
  resetLedger: boolean;
  mode: string;
  maxTicks: number | undefined;
  issue: number | undefined;
  engine: string | undefined;
  stats: boolean;
  loop: boolean;
  resume: boolean;
  cycleId: string | undefined;
  verdict: string | undefined;
  reason: string | undefined;
  answer: string | undefined;
  allow: string | undefined;
  db: string | undefined;
  prd: string | undefined;
  parallel: number | undefined;
  attempts: number | undefined;
  id: string | undefined;
  dir: string | undefined;
  concurrency: number | undefined;
  globalConcurrency: number | undefined;
  startsPerMinute: number | undefined;
  account: string | undefined;
  perMinute: number | undefined;
  no: boolean;
  usd: number | undefined;
  answers: string | undefined;
  confirm: boolean;
  remap: boolean;
}

const DEFAULT_FLAGS: CliFlags = {
  json: false,
  yes: false,
  preflight: false,
  force: false,
  resetLedger: false,
  mode: 'milestone',
  maxTicks: undefined,
  issue: undefined,
  engine: undefined,
  stats: false,
  loop: false,
  resume: false,
  cycleId: undefined,
  verdict: undefined,
  reason: undefined,
  answer: undefined,
  allow: undefined,
  db: undefined,
  prd: undefined,
  parallel: undefined,
  attempts: undefined,
  id: undefined,
  dir: undefined,
  concurrency: undefined,
  globalConcurrency: undefined,
  startsPerMinute: undefined,
  account: undefined,
  perMinute: undefined,
  no: false,
  usd: undefined,
  answers: undefined,
  confirm: false,
  remap: false,
};

export type CommandLine =
  | { readonly kind: 'help'; readonly topic: string | null }
  | { readonly kind: 'version' }
  | { readonly kind: 'usage'; readonly message: string; readonly showGeneralHelp: boolean }
  | {
      readonly kind: 'command';
      readonly command: CommandName;
      /** Every positional word, the command first (as meow's `input`). */
      readonly input: readonly string[];
      readonly flags: CliFlags;
    };

type ParseOptions = Record<string, { type: 'boolean' | 'string'; short?: string }>;

export function readCommandLine(argv: readonly string[]): CommandLine {
  const loose = parseArgs({
    args: withVersionLetter(argv),
    options: { ...everyOption(), ...GLOBAL_OPTIONS },
    strict: false,
    allowPositionals: true,
  });
  const words = loose.positionals;
  if (words[0] === 'help') return helpFor(words.slice(1));
  if (loose.values.help === true) return helpFor(words);
  // `-v`, `-V`, `--version` and `relais version`: what other CLIs taught people to type.
  if (loose.values.version === true) return { kind: 'version' };
  if (words[0] === 'version' && words.length === 1) return { kind: 'version' };

  const [command] = words;
  if (command === undefined) return withoutCommand(argv);
  if (!isCommandName(command) || command.includes(' ')) return unknownCommand(command);
  // A subcommand with its own options (`cycle init`) is parsed as its own command.
  const two = `${command} ${words[1] ?? ''}`;
  if (isCommandName(two)) return strictParse(two, argv);
  return strictParse(command, argv);
}

/** Help and version, understood before and after any command. */
const GLOBAL_OPTIONS: ParseOptions = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
};

/** `-V` is the version too (parseArgs allows one short letter per option). */
function withVersionLetter(argv: readonly string[]): string[] {
  return argv.map((arg) => (arg === '-V' ? '-v' : arg));
}

/** No command: the general help, and an option nobody knows is named, not silently ignored. */
function withoutCommand(argv: readonly string[]): CommandLine {
  try {
    parseArgs({
      args: withVersionLetter(argv),
      options: GLOBAL_OPTIONS,
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    return {
      kind: 'usage',
      message: `relais: ${optionProblem(error as Error)}\nSee \`relais --help\`.`,
      showGeneralHelp: false,
    };
  }
  return { kind: 'usage', message: '', showGeneralHelp: true };
}

/** `help run ./dir` and `run ./dir --help` both mean run's help: the longest known prefix wins. */
function helpFor(words: readonly string[]): CommandLine {
  if (words.length === 0) return { kind: 'help', topic: null };
  for (let n = words.length; n > 0; n--) {
    const topic = words.slice(0, n).join(' ');
    if (isCommandName(topic)) return { kind: 'help', topic };
  }
  return unknownCommand(words[0] ?? '');
}

function unknownCommand(word: string): CommandLine {
  const names = COMMAND_NAMES.filter((name) => !name.includes(' ') && name !== 'help');
  return {
    kind: 'usage',
    message: `Unknown command: ${word}\nCommands: ${names.join(', ')} (relais --help)`,
    showGeneralHelp: false,
  };
}

function strictParse(command: CommandName, argv: readonly string[]): CommandLine {
  const help: CommandHelp = COMMAND_HELP[command];
  const seeHelp = `See \`relais ${command} --help\`.`;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: parseOptions(help.options),
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    return {
      kind: 'usage',
      message: `relais ${command}: ${optionProblem(error as Error)}\n${seeHelp}`,
      showGeneralHelp: false,
    };
  }
  const flags: Record<string, unknown> = { ...DEFAULT_FLAGS };
  for (const option of help.options) {
    const value = parsed.values[option.name];
    if (value === undefined) continue;
    if (option.type === 'number') {
      const number = Number(value);
      if (value === '' || !Number.isFinite(number)) {
        return {
          kind: 'usage',
          message: `relais ${command}: --${option.name} needs a number (got "${String(value)}")\n${seeHelp}`,
          showGeneralHelp: false,
        };
      }
      flags[camelCase(option.name)] = number;
    } else {
      flags[camelCase(option.name)] = value;
    }
  }
  // A two-word command is one word of input (`cycle init`), so `[dir]` stays the second.
  const input = command.includes(' ') ? [command, ...parsed.positionals.slice(2)] : parsed.positionals;
  return { kind: 'command', command, input, flags: flags as unknown as CliFlags };
}

/** parseArgs's messages end with advice about `--` that does not apply; keep the first sentence. */
function optionProblem(error: Error): string {
  const unknown = /Unknown option '([^']+)'/.exec(error.message);
  if (unknown) return `unknown option ${unknown[1]}`;
  const missing = /Option '(--[\w-]+)[^']*' argument missing/.exec(error.message);
  if (missing) return `${missing[1]} needs a value`;
  const extra = /Option '(--[\w-]+)' does not take an argument/.exec(error.message);
  if (extra) return `${extra[1]} takes no value`;
  return (error.message.split('. ')[0] ?? error.message).replace(/\.$/, '');
}

function parseOptions(options: readonly OptionHelp[]): ParseOptions {
  const out: ParseOptions = {};
  for (const option of options) out[option.name] = { type: option.type === 'boolean' ? 'boolean' : 'string' };
  return out;
}

function everyOption(): ParseOptions {
  const all: ParseOptions = {};
  for (const name of COMMAND_NAMES) Object.assign(all, parseOptions(COMMAND_HELP[name].options));
  return all;
}

function camelCase(name: string): string {
  return name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}
