import { COMMAND_HELP, COMMAND_NAMES, type CommandHelp, HELP_OPTION, type OptionHelp } from './commands.js';

/** The help texts, rendered from the table in commands.ts. Plain strings: nothing here runs anything. */

const PROGRAM = 'relais';

export function renderGeneralHelp(version: string): string {
  // Subcommands with their own options (`cycle init`) are listed too, right after their parent.
  const topLevel = COMMAND_NAMES;
  const width = Math.max(...topLevel.map((name) => name.length));
  return [
    `Relais ${version}: runs AI coding agents (Claude Code, Codex) in loops on a git repository,`,
    'and judges every change itself: what changed in git, whether it stayed in scope, whether your',
    'checks pass, and what it cost. `ralphy` is the same program as `relais`.',
    '',
    'Usage',
    `  ${PROGRAM} <command> [dir] [options]`,
    '',
    'Commands',
    ...topLevel.map((name) => `  ${name.padEnd(width)}  ${COMMAND_HELP[name].summary}`),
    '',
    'Options',
    `  -h, --help     Show help (also: ${PROGRAM} <command> --help, ${PROGRAM} help <command>)`,
    `  -v, --version  Print the version (also: -V, ${PROGRAM} version)`,
    '',
    'Exit codes',
    '  0 success, 1 stopped (or a failed init/doctor), 2 usage error (or no such folder),',
    '  3 blocked (refused to start), 70 internal error, 130 interrupted',
    '',
    'Start here',
    '  relais init && relais doctor     set up a project and check what it needs',
    '  ralphy start                     run the workflow on PRD.md',
    '',
  ].join('\n');
}

export function renderCommandHelp(
  topic: string,
  help: CommandHelp,
  subcommands: readonly string[] = [],
): string {
  const options = [...help.options, HELP_OPTION];
  const labels = options.map(optionLabel);
  const width = Math.max(...labels.map((label) => label.length));
  const lines = [
    `${PROGRAM} ${topic}: ${help.summary}`,
    '',
    'Usage',
    ...help.usage.map((usage) => `  ${PROGRAM} ${usage}`),
    ...subcommands.map((sub) => `  ${PROGRAM} ${sub} --help`),
    '',
    ...help.details.map((line) => `  ${line}`),
    '',
    'Options',
    ...options.map((option, i) => `  ${(labels[i] ?? '').padEnd(width)}  ${option.text}`),
    '',
    help.examples.length > 1 ? 'Examples' : 'Example',
    ...help.examples.map((example) => `  $ ${example}`),
    '',
  ];
  return lines.join('\n');
}

export function optionLabel(option: OptionHelp): string {
  const name = option.name === 'help' ? '-h, --help' : `--${option.name}`;
  return option.value ? `${name} ${option.value}` : name;
}
