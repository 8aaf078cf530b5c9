#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { dropOutputToClosedPipe } from './closed-pipe.js';
import { EXIT } from './exit-codes.js';
import { readCommandLine } from './help/command-line.js';
import { COMMAND_HELP, COMMAND_NAMES } from './help/commands.js';
import { renderCommandHelp, renderGeneralHelp } from './help/render.js';
import type { CommandIo } from './io.js';
import { findProjectFolder } from './project-folder.js';

// Help, version and usage errors are answered from the help table before any command module
// loads: `relais init --help` prints and touches nothing (issue 16 item 2).
async function main(): Promise<number> {
  dropOutputToClosedPipe(process.stdout);
  dropOutputToClosedPipe(process.stderr);
  const cli = readCommandLine(process.argv.slice(2));
  switch (cli.kind) {
    case 'version':
      process.stdout.write(`${packageVersion()}\n`);
      return EXIT.SUCCESS;
    case 'help':
      process.stdout.write(helpText(cli.topic));
      return EXIT.SUCCESS;
    case 'usage':
      if (cli.showGeneralHelp) process.stdout.write(renderGeneralHelp(packageVersion()));
      if (cli.message) process.stderr.write(`${cli.message}\n`);
      return EXIT.USAGE;
    case 'command':
      break;
  }
  const [command, given, ...extra] = cli.input;
  // `config` takes its own words (get <key>, set <key> <value>...).
  if (
    extra.length > 0 &&
    cli.command !== 'config' &&
    cli.command !== 'fleet' &&
    !(cli.command === 'worktrees' && extra.length === 1)
  ) {
    process.stderr.write(`Too many arguments: ${extra.join(' ')}\nSee \`relais ${command} --help\`.\n`);
    return EXIT.USAGE;
  }
  const io: CommandIo = {
    cwd: process.cwd(),
    stdin: process.stdin,
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
  };
  const project = PROJECT_COMMANDS.has(cli.command) ? settleProject(io, cli.command, given) : given;
  if (project === null) return EXIT.USAGE;
  // Each command's modules load only when it runs: `relais status` does not pay for the app.
  switch (cli.command) {
    case 'start':
      return (await import('./commands/start.js')).startCommand(io, project, cli.flags);
    case 'plan':
      return (await import('./commands/plan.js')).planCommand(io, project, cli.flags);
    case 'abort':
      return (await import('./commands/abort.js')).abortCommand(io, project, cli.flags);
    case 'init':
      return (await import('./commands/init.js')).initCommand(io, project, cli.flags);
    case 'run':
      return (await import('./commands/run.js')).runCommand(io, project, cli.flags);
    case 'loop':
      return (await import('./commands/loop.js')).loopCommand(io, project, cli.flags);
    case 'cycle':
      return (await import('./commands/cycle.js')).cycleCommand(io, project, cli.flags);
    case 'cycle init':
      return (await import('./commands/cycle-init.js')).cycleInitCommand(io, project, cli.flags);
    case 'status':
      return (await import('./commands/status.js')).statusCommand(io, project, cli.flags);
    case 'doctor':
      return (await import('./commands/doctor.js')).doctorCommand(io, project, cli.flags);
    case 'config':
      return (await import('./commands/config.js')).configCommand(io, cli.input.slice(1), cli.flags);
    // The fleet (issue 20): DBOS and pg load only inside these commands.
    case 'worker':
      return (await import('./commands/worker.js')).workerCommand(io, cli.flags);
    case 'submit':
      return (await import('./commands/submit.js')).submitCommand(io, project, cli.flags);
    case 'approve':
      return (await import('./commands/approve.js')).approveCommand(io, project, cli.flags);
    case 'attach':
      return (await import('./commands/attach.js')).attachCommand(io, project, cli.flags);
    case 'fleet':
      return (await import('./commands/fleet.js')).fleetCommand(io, cli.input.slice(1), cli.flags);
    case 'worktrees': {
      const [action, dir] = cli.input.slice(1);
      const folder = settleProject(io, 'worktrees', dir);
      if (folder === null) return EXIT.USAGE;
      const { worktreesCommand } = await import('./commands/worktrees.js');
      return worktreesCommand(io, [action ?? 'list', folder], cli.flags);
    }
    case 'help':
      process.stdout.write(helpText(null)); // unreachable: readCommandLine answers `help` first
      return EXIT.SUCCESS;
  }
}

/** The commands whose first word after the name is the project folder (`[dir]`). */
const PROJECT_COMMANDS = new Set<string>([
  'start',
  'plan',
  'abort',
  'init',
  'run',
  'loop',
  'cycle',
  'cycle init',
  'status',
  'doctor',
]);

/** The repository the command works on, or null once a missing folder was said (exit 2). */
function settleProject(io: CommandIo, command: string, given: string | undefined): string | null {
  const found = findProjectFolder(io.cwd, given);
  if (!found.ok) {
    io.stderr.write(
      `relais ${command}: ${found.message}\nGive the project folder (a git repository), or run it inside one.\n`,
    );
    return null;
  }
  if (found.walkedUpFrom !== null)
    io.stderr.write(
      `relais ${command}: ${found.walkedUpFrom}/ is inside the repository ${found.root}: working at its root\n`,
    );
  return found.root;
}

function helpText(topic: string | null): string {
  if (topic === null) return renderGeneralHelp(packageVersion());
  const subcommands = COMMAND_NAMES.filter((name) => name.startsWith(`${topic} `));
  return renderCommandHelp(topic, COMMAND_HELP[topic as keyof typeof COMMAND_HELP], subcommands);
}

function packageVersion(): string {
  // dist/cli/main.js and source/cli/main.ts both sit two folders below package.json.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: Error) => {
    process.stderr.write(`relais: internal error: ${error.stack ?? error.message}\n`);
    process.exitCode = EXIT.INTERNAL;
  },
);
