#!/usr/bin/env node
import meow from 'meow';
import { EXIT } from './exit-codes.js';
import type { CommandIo } from './io.js';

const HELP = `
  Usage
    $ relais <command> [project-dir] [options]      (ralphy is the same program)

  Commands
    start     The Ralphy workflow: PRD.md -> plan -> spec -> [y/n] -> implementation -> QA -> [y/n] -> PR
    plan      The Relay planner on PRD.md (questions that change the spec, then proceed);
              --issue <n> plans a GitHub issue thread through gh; --stats shows its signals
    abort     Stop the running workflow (it ends FAILED, reason aborted)
    init      Create relais.config.json, the relais/ workspace and the git exclude entry
    run       Run one judged tick: orchestrate, build, judge, verify, report
    loop      Run ticks until done, stopped, blocked or out of budget
    cycle     Run one deadf cycle (seed 003); --loop until DONE or a human is needed;
              --resume ends a pause (needs_human)
    status    Show the workflow, the budget ledger, the lock and the last report
    doctor    Check claude, git, config, workspace, prompts and the ledger
    config    User settings beneath every project's relais.config.json:
              config get <key> | set <key> <value> | unset <key> | list | path

  Options
    --json        Machine-readable output (NDJSON events for start, run and loop)
    --yes         start, plan: approve every yes/no gate (a question for a human still needs one;
                  the planner proceeds under the assumptions it states)
    --issue       plan: the GitHub issue number to plan (one pass; run it again for the next)
    --stats       plan: questions, rounds, gaps closed by reason, spec acceptance rate
    --preflight   status: run the preflight checks without side effects
    --force       init: replace existing files (the old ones are kept as .bak)
    --loop        cycle: cycles until DONE, a human is needed, or too many failures
    --resume      cycle: go back to the phase a pause (needs_human) stopped in
    --cycle-id    cycle: a given cycle id (its nonce is derived from it; never reused)
    --verdict     cycle --resume: yes or no, your judgement of a verification that paused for
                  a human (--reason "why" is kept with it)
    --mode        loop: milestone (stop when the milestone changes) or autonomous
    --max-ticks   loop: at most this many ticks in this run

  Exit codes
    0 success, 1 stop (or a failed init/doctor), 2 usage error, 3 blocked,
    70 internal error, 130 interrupted; cycle: 0 CYCLE_OK, 1 CYCLE_FAIL, 3 needs a human,
    4 DONE (0 with --loop)
`;

const COMMANDS = [
  'start',
  'plan',
  'abort',
  'init',
  'run',
  'loop',
  'cycle',
  'status',
  'doctor',
  'config',
] as const;
type CommandName = (typeof COMMANDS)[number];

async function main(): Promise<number> {
  const cli = meow(HELP, {
    importMeta: import.meta,
    allowUnknownFlags: false,
    flags: {
      json: { type: 'boolean', default: false },
      yes: { type: 'boolean', default: false },
      preflight: { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
      mode: { type: 'string', default: 'milestone' },
      maxTicks: { type: 'number' },
      issue: { type: 'number' },
      stats: { type: 'boolean', default: false },
      loop: { type: 'boolean', default: false },
      resume: { type: 'boolean', default: false },
      cycleId: { type: 'string' },
      verdict: { type: 'string' },
      reason: { type: 'string' },
    },
  });
  const [command, project, ...extra] = cli.input;
  if (!command) {
    cli.showHelp(EXIT.USAGE);
    return EXIT.USAGE;
  }
  // `config` takes its own words (get <key>, set <key> <value>...).
  if (!COMMANDS.includes(command as CommandName) || (extra.length > 0 && command !== 'config')) {
    process.stderr.write(
      extra.length > 0 ? `Too many arguments: ${extra.join(' ')}\n` : `Unknown command: ${command}\n`,
    );
    process.stderr.write(`Commands: ${COMMANDS.join(', ')} (relais --help)\n`);
    return EXIT.USAGE;
  }
  const io: CommandIo = {
    cwd: process.cwd(),
    stdin: process.stdin,
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
  };
  // Each command's modules load only when it runs: `relais status` does not pay for the app.
  switch (command as CommandName) {
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
    case 'status':
      return (await import('./commands/status.js')).statusCommand(io, project, cli.flags);
    case 'doctor':
      return (await import('./commands/doctor.js')).doctorCommand(io, project, cli.flags);
    case 'config':
      return (await import('./commands/config.js')).configCommand(io, cli.input.slice(1), cli.flags);
  }
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
