/**
 * One entry per command: what `relais <command> --help`, `relais help <command>` and the usage
 * errors print, and the options each command accepts (an option not listed here is a usage
 * error, exit 2). main.ts reads this table BEFORE any command module loads, so help never runs a
 * command and costs no more than reading this file: keep it plain data, import nothing.
 *
 * Adding a command: add its entry here, then one `case` in main.ts. A subcommand (`relais config
 * get`) gets its own entry keyed by both words; `relais config get --help` finds it, and
 * `relais config --help` lists it under the parent's usage.
 */

export type OptionType = 'boolean' | 'string' | 'number';

export interface OptionHelp {
  /** The long name without dashes, kebab-case as typed (`max-ticks`); commands read it camelCased. */
  readonly name: string;
  readonly type: OptionType;
  /** How the value is shown in usage (`<n>`); only for string and number options. */
  readonly value?: string;
  readonly text: string;
}

export interface CommandHelp {
  /** One line each, without the program name: `run [dir] [--json]`. */
  readonly usage: readonly string[];
  /** One line for the command list. */
  readonly summary: string;
  /** A few lines saying what happens, in words a newcomer knows. */
  readonly details: readonly string[];
  readonly options: readonly OptionHelp[];
  /** Complete command lines, ready to paste. */
  readonly examples: readonly string[];
}

const JSON_EVENTS: OptionHelp = {
  name: 'json',
  type: 'boolean',
  text: 'Print machine-readable JSON (one engine event per line) instead of text',
};
const JSON_RESULT: OptionHelp = { name: 'json', type: 'boolean', text: 'Print the result as JSON' };

const DIR_LINE =
  '[dir] is the project folder, a git repository (default: the current folder; inside a repository, its root).';

export const COMMAND_HELP = {
  start: {
    usage: [
      'start [dir] [--yes] [--engine ticks|single|cycle] [--parallel <n>] [--attempts <k>] [--json]',
      'start --issue <n> [dir] [--yes] [--json]',
    ],
    summary: 'Run the whole workflow on PRD.md: plan, spec, [y/n], implement, QA, [y/n], pull request',
    details: [
      'Reads PRD.md (a "# Title" and an "## Objective" section), asks the planner questions,',
      'has an agent write specs/SPEC.md and specs/TASKS.md, waits for your yes/no, implements',
      'each task in judged steps on a new branch ralphy/<title>, runs QA, waits for your yes/no,',
      'then pushes the branch and opens a pull request with gh. Runs `relais init` first when',
      'the project has no relais.config.json. Running it again resumes a stopped workflow.',
      '--issue n starts from a GitHub issue whose planning (relais plan --issue n) is ready for',
      'the spec: the thread and the settled gaps are the PRD, and the result is posted back on it.',
      DIR_LINE,
    ],
    options: [
      {
        name: 'yes',
        type: 'boolean',
        text: 'Approve every yes/no gate without asking (the planner proceeds on its stated assumptions)',
      },
      {
        name: 'parallel',
        type: 'number',
        value: '<n>',
        text: 'Run up to n tasks at once, each in its own worktree (tasks with a Scope that does not overlap; default workflow.parallel, 1)',
      },
      {
        name: 'attempts',
        type: 'number',
        value: '<k>',
        text: 'Best of k: k builders try every task, each in its own worktree; the runner lands the verified one with the smallest diff (default: 1; tasks marked "Risk: high" get workflow.best_of)',
      },
      {
        name: 'engine',
        type: 'string',
        value: '<ticks|single|cycle>',
        text: 'The implementation engine for this workflow (default: workflow.implementation_engine)',
      },
      {
        name: 'issue',
        type: 'number',
        value: '<n>',
        text: 'Run the workflow from GitHub issue n once its planning is ready for the spec',
      },
      JSON_EVENTS,
    ],
    examples: [
      'ralphy start',
      'ralphy start ./my-project --yes --json > run.ndjson',
      'ralphy start --parallel 4',
      'ralphy start --attempts 3',
      'ralphy start --engine cycle',
      'ralphy start --issue 42',
    ],
  },
  plan: {
    usage: ['plan [dir] [--yes] [--json]', 'plan --issue <n> [dir] [--json]', 'plan --stats [dir] [--json]'],
    summary: 'Plan PRD.md with the planner (its questions, your answers), without implementing',
    details: [
      'The same planning session `ralphy start` opens with: the planner reads PRD.md and the',
      'code, asks the questions whose answers change the spec, and writes what it settled.',
      'Answer at the prompt (end with an empty line). --issue plans a GitHub issue thread',
      'instead, through gh (one pass; run it again after a human replies). --stats shows every',
      "planning session's signals.",
      DIR_LINE,
    ],
    options: [
      {
        name: 'yes',
        type: 'boolean',
        text: 'Proceed without asking, under the assumptions the planner states',
      },
      {
        name: 'issue',
        type: 'number',
        value: '<n>',
        text: 'Plan GitHub issue n through gh (reads it, posts comments)',
      },
      {
        name: 'stats',
        type: 'boolean',
        text: 'Show questions, rounds, gaps closed and the spec acceptance rate',
      },
      JSON_EVENTS,
    ],
    examples: ['relais plan', 'relais plan --issue 42', 'relais plan --stats --json'],
  },
  abort: {
    usage: ['abort [dir] [--json]'],
    summary: 'Stop the workflow running in another terminal (it can be resumed with start)',
    details: [
      'Asks the running `ralphy start` to stop: its agent is killed, the workflow ends FAILED',
      '(reason aborted) and `ralphy start` resumes it later. Does nothing when none is running.',
      DIR_LINE,
    ],
    options: [JSON_RESULT],
    examples: ['ralphy abort', 'ralphy abort ./my-project'],
  },
  init: {
    usage: ['init [dir] [--force] [--allow globs] [--json]', 'init [dir] --reset-ledger [--json]'],
    summary: 'Set up a project: relais.config.json, the relais/ folder, the git exclude entry',
    details: [
      'Writes a default relais.config.json (checks taken from the lint, typecheck and test scripts',
      'of your package.json), the relais/ workspace Relais keeps its state in (ignored by git through',
      '.git/info/exclude) and its prompts. Safe to run twice: it never overwrites your files',
      'unless --force, which keeps the old file as .bak; even then a valid relais.config.json stays',
      '(--force replaces only one that does not load). The scope fence (the paths the builder may',
      'touch) is derived from your tracked source, test and doc files and package.json files, main',
      'and workspaces; on a terminal init shows it and asks, --allow gives it outright. A glob',
      'outside the repository (../**, /etc/**) is refused. It also leaves a PRD.md template in',
      'relais/PRD.template.md for ralphy start. --reset-ledger starts a fresh budget ledger',
      '(relais/STATE.json, the fix for a corrupt one) and touches nothing else.',
      DIR_LINE,
    ],
    options: [
      {
        name: 'force',
        type: 'boolean',
        text: 'Replace an invalid config, your edited prompts and a corrupt ledger (old files kept)',
      },
      {
        name: 'allow',
        type: 'string',
        value: '<globs>',
        text: 'The scope fence as comma-separated globs, instead of the derived one',
      },
      {
        name: 'reset-ledger',
        type: 'boolean',
        text: 'Only start a fresh relais/STATE.json (the old one is kept beside it)',
      },
      JSON_RESULT,
    ],
    examples: [
      'relais init',
      "relais init --allow 'index.js,test.js,readme.md'",
      'relais init --reset-ledger',
    ],
  },
  run: {
    usage: ['run [dir] [--json]'],
    summary: 'Run one judged step: an agent picks one task, another does it, Relais checks it',
    details: [
      'One "tick": the orchestrator model proposes one task, the builder agent does it, then',
      'Relais itself reads what changed in git, checks it stayed in scope, runs your checks,',
      'and commits it or rolls it back. The verdict and its fix are printed and written to',
      'relais/REPORT.md. Ctrl-C stops the agent and rolls back.',
      DIR_LINE,
    ],
    options: [JSON_EVENTS],
    examples: ['relais run', 'relais run ./my-project --json'],
  },
  loop: {
    usage: ['loop [dir] [--mode milestone|autonomous] [--max-ticks <n>] [--json]'],
    summary: 'Run judged steps until done, stopped, blocked or out of budget',
    details: [
      'Repeats `relais run` until the orchestrator says the work is done, a step is stopped or',
      'blocked, the budget runs low, or --max-ticks steps ran. In milestone mode (the default) it',
      'also stops when the orchestrator moves to the next milestone.',
      DIR_LINE,
    ],
    options: [
      {
        name: 'mode',
        type: 'string',
        value: '<mode>',
        text: 'milestone (stop when the milestone changes; default) or autonomous',
      },
      { name: 'max-ticks', type: 'number', value: '<n>', text: 'Run at most n steps' },
      JSON_EVENTS,
    ],
    examples: ['relais loop', 'relais loop --mode autonomous --max-ticks 5'],
  },
  cycle: {
    usage: [
      'cycle [dir] [--loop] [--yes] [--cycle-id <id>] [--json]',
      'cycle --resume [dir] [--verdict yes|no [--reason <text>] | --answer <text>] [--json]',
    ],
    summary: 'Run one plan-implement-verify-reflect cycle (--loop: until done or a human is needed)',
    details: [
      'One cycle loads the project state, decides the next action (plan a track, write a task,',
      'implement it, verify it, reflect), runs it, records it, and prints CYCLE_OK, CYCLE_FAIL',
      'or DONE as its last line. When it needs a human it pauses; --resume continues, and',
      '--verdict gives your judgement of a check that paused for you, --answer your answer to',
      "the implementer's question.",
      'Exit codes: 0 CYCLE_OK, 1 CYCLE_FAIL, 3 needs a human, 4 DONE (0 with --loop).',
      DIR_LINE,
    ],
    options: [
      {
        name: 'loop',
        type: 'boolean',
        text: 'Run cycles until DONE, a human is needed, or too many failures',
      },
      { name: 'resume', type: 'boolean', text: 'End a pause: go back to the phase it stopped in' },
      {
        name: 'verdict',
        type: 'string',
        value: 'yes|no',
        text: 'With --resume: your judgement of the paused check',
      },
      { name: 'reason', type: 'string', value: '<text>', text: 'With --verdict: why (kept with it)' },
      {
        name: 'answer',
        type: 'string',
        value: '<text>',
        text: "With --resume: your answer to the implementer's question",
      },
      { name: 'yes', type: 'boolean', text: 'Approve every yes/no question without asking' },
      { name: 'cycle-id', type: 'string', value: '<id>', text: 'Use this cycle id (never reused)' },
      JSON_EVENTS,
    ],
    examples: [
      'relais cycle',
      'relais cycle --loop',
      'relais cycle --resume --verdict yes --reason "checked by hand"',
    ],
  },
  'cycle init': {
    usage: ['cycle init [dir] [--answers <file> --confirm] [--remap]'],
    summary:
      'Map the codebase, then brainstorm the seed docs with you (VISION, PROJECT, REQUIREMENTS, ROADMAP)',
    details: [
      'First the codebase mapper: a project with code (brownfield) gets seven short living docs in',
      '<docs_dir>/p12/ written by the mapper agent (agents.mapper); an empty one (greenfield) gets none,',
      'and a failed mapping continues as greenfield. Then the brainstorm asks you about the vision,',
      'users, success, stack, requirements and roadmap phases, shows the four documents, and writes',
      'them (with P2_DONE and the cycle state) only when you say yes. Without a terminal, give your',
      'answers as JSON with --answers and confirm with --confirm (docs/cycle.md shows the shape).',
      DIR_LINE,
    ],
    options: [
      {
        name: 'answers',
        type: 'string',
        value: '<file>',
        text: 'Read the brainstorm answers from this JSON file instead of asking',
      },
      {
        name: 'confirm',
        type: 'boolean',
        text: 'With --answers: write the documents shown (without it, they are only shown)',
      },
      { name: 'remap', type: 'boolean', text: 'Map the codebase again even if it was mapped before' },
    ],
    examples: ['relais cycle init', 'relais cycle init --answers brainstorm.json --confirm'],
  },
  status: {
    usage: ['status [dir] [--preflight] [--json]'],
    summary: 'Show the workflow, the budget, the lock and the last report (reads only)',
    details: [
      'Shows where the workflow and the cycle stand and what to do next, the budget spent',
      'against its caps, whether a run holds the lock, and the last verdict. Changes nothing.',
      DIR_LINE,
    ],
    options: [
      {
        name: 'preflight',
        type: 'boolean',
        text: 'Also run the checks a run starts with (exit 3 with the reason if it would be refused)',
      },
      JSON_RESULT,
    ],
    examples: ['relais status', 'relais status --preflight --json'],
  },
  doctor: {
    usage: ['doctor [dir] [--json]'],
    summary: 'Check Node, git, claude, the config, the relais/ folder and the budget, with fixes',
    details: [
      'Runs every check a run depends on and prints each with its fix. Exits 1 if one fails.',
      DIR_LINE,
    ],
    options: [JSON_RESULT],
    examples: ['relais doctor', 'relais doctor --json'],
  },
  config: {
    usage: [
      'config get <key>',
      'config set <key> <value>',
      'config unset <key>',
      'config list [--json]',
      'config path',
    ],
    summary: 'Your own settings (provider and model per role, notifications, theme), beneath every project',
    details: [
      'Kept in your OS config folder (relais config path), checked before anything is written.',
      "A project's relais.config.json always wins; these fill what it leaves out.",
      'Keys: agents.<role>.provider (claude, codex, external), agents.<role>.model,',
      'agents.<role>.fallback_model, notifications.enabled (a terminal bell at gates and at the end),',
      'theme (auto: colours unless NO_COLOR; none: never). A broken file is named and left out of runs.',
    ],
    options: [JSON_RESULT],
    examples: [
      'relais config set agents.builder.provider codex',
      'relais config get theme',
      'relais config list',
    ],
  },
  worker: {
    usage: [
      'worker --db <url> [--id <name>] [--concurrency <n>] [--dir <folder>]',
      'worker --db <url> [--global-concurrency <n>] [--starts-per-minute <n>]',
      'worker --db <url> [--account <provider>=<account>,...]',
    ],
    summary: 'Fleet: execute queued runs from a PostgreSQL database (DBOS durable workflows)',
    details: [
      'Runs until Ctrl-C. Each run is a durable workflow; each phase a step checkpointed in the',
      'database. A worker that dies has its runs resumed by the others once its heartbeat is',
      'old enough, or by itself when restarted with the same --id (docs/fleet.md).',
    ],
    options: [
      { name: 'db', type: 'string', value: '<url>', text: 'The fleet database (default: $RELAIS_FLEET_DB)' },
      {
        name: 'id',
        type: 'string',
        value: '<name>',
        text: 'Executor id; keep it across restarts (default: host-pid)',
      },
      {
        name: 'concurrency',
        type: 'number',
        value: '<n>',
        text: 'Runs this worker executes at once (default 2)',
      },
      {
        name: 'global-concurrency',
        type: 'number',
        value: '<n>',
        text: 'Runs executing at once in the whole fleet',
      },
      {
        name: 'starts-per-minute',
        type: 'number',
        value: '<n>',
        text: 'Runs started per minute in the whole fleet (the last worker started sets it)',
      },
      {
        name: 'account',
        type: 'string',
        value: '<p=a,...>',
        text: "The model account of each provider's login here (rates: relais fleet rate)",
      },
      {
        name: 'dir',
        type: 'string',
        value: '<folder>',
        text: 'Where checkouts live (default ~/.relais/fleet)',
      },
    ],
    examples: ['relais worker --db postgresql://relais@localhost:5432/relais --id build-1'],
  },
  submit: {
    usage: [
      'submit <repo> [--prd <file>] [--engine ticks|single|cycle] [--yes] [--json] [--db <url>]',
      'submit <repo> [--issue <n>] [--parallel <n>] (refused until the workflow supports them)',
    ],
    summary: 'Fleet: queue one workflow run on a repository (URL or path) for the workers',
    details: [
      'A worker clones the repository, runs the workflow phase by phase and pushes its branch',
      'after every judged commit. Gates wait for relais approve (or --yes approves them).',
      'One run at a time per repository.',
    ],
    options: [
      { name: 'db', type: 'string', value: '<url>', text: 'The fleet database (default: $RELAIS_FLEET_DB)' },
      {
        name: 'prd',
        type: 'string',
        value: '<file>',
        text: "The PRD to run (default: the repository's PRD.md)",
      },
      {
        name: 'engine',
        type: 'string',
        value: '<name>',
        text: 'Implementation engine: ticks, single or cycle',
      },
      {
        name: 'issue',
        type: 'number',
        value: '<n>',
        text: 'A GitHub issue as the PRD (not supported yet: an error)',
      },
      { name: 'parallel', type: 'number', value: '<n>', text: 'Parallel lanes (only 1 is supported yet)' },
      { name: 'yes', type: 'boolean', text: 'Approve both gates without asking' },
      JSON_RESULT,
    ],
    examples: ['relais submit git@github.com:me/app.git --prd PRD.md --db postgresql://relais@db/relais'],
  },
  approve: {
    usage: [
      'approve <run> --yes|--no [--reason <text>] [--db <url>]',
      'approve <run> --answer <text> [--db <url>]',
    ],
    summary: "Fleet: answer a run's waiting gate (a yes/no gate or a question), from any machine",
    details: [
      'The answer is a durable message: it reaches the run whichever worker holds it, and answers',
      'only the wait it was given for. A question (the planner, an agent) takes --answer; --yes on',
      'a question lets the run go on without an answer. relais fleet status shows what waits.',
    ],
    options: [
      { name: 'db', type: 'string', value: '<url>', text: 'The fleet database (default: $RELAIS_FLEET_DB)' },
      { name: 'yes', type: 'boolean', text: 'Approve (on a question: go on without an answer)' },
      { name: 'no', type: 'boolean', text: 'Reject' },
      {
        name: 'reason',
        type: 'string',
        value: '<text>',
        text: 'Why (the agent reads it on its next attempt)',
      },
      { name: 'answer', type: 'string', value: '<text>', text: 'The answer to a question' },
    ],
    examples: [
      'relais approve run-20261125-abc123 --yes',
      'relais approve run-20261125-abc123 --answer "Use UTC"',
    ],
  },
  attach: {
    usage: ['attach <run> [--json] [--db <url>]'],
    summary: 'Fleet: the full-screen app on a run, wherever it executes; keys answer its gates',
    details: [
      "The run's events come from the fleet database; when it waits at a gate, y/n or a typed",
      'answer here answers it. q or Ctrl-C leaves the app; the run goes on in the fleet. Outside',
      'a terminal, the run is printed as lines (NDJSON with --json) until it ends.',
    ],
    options: [
      { name: 'db', type: 'string', value: '<url>', text: 'The fleet database (default: $RELAIS_FLEET_DB)' },
      JSON_RESULT,
    ],
    examples: ['ralphy attach run-20261125-abc123'],
  },
  fleet: {
    usage: [
      'fleet status [--json] [--db <url>]',
      'fleet doctor [--json] [--db <url>]',
      'fleet budget [--usd <n>] [--db <url>]',
      'fleet rate <account> [--per-minute <n>] [--db <url>]',
    ],
    summary: 'Fleet: runs per state, waiting gates, spend against the budget, workers alive; checks',
    details: [
      'status: what the database says (on a terminal, a live view; --json or a pipe: once).',
      'doctor: the connection, the schemas, workers alive.',
      'budget: the fleet-wide spend cap (no --usd: no cap); every agent call reserves first.',
      "rate: one model account's agent calls per minute across the fleet (no --per-minute: no",
      'limit); a worker names its accounts with --account.',
    ],
    options: [
      { name: 'db', type: 'string', value: '<url>', text: 'The fleet database (default: $RELAIS_FLEET_DB)' },
      { name: 'usd', type: 'number', value: '<n>', text: 'The budget cap in dollars (fleet budget)' },
      { name: 'per-minute', type: 'number', value: '<n>', text: 'Agent calls a minute (fleet rate)' },
      JSON_RESULT,
    ],
    examples: [
      'relais fleet status',
      'relais fleet doctor --db postgresql://relais@localhost:5432/relais',
      'relais fleet rate team-a --per-minute 20',
    ],
  },
  worktrees: {
    usage: ['worktrees list [dir] [--json]', 'worktrees prune [dir] [--json]'],
    summary: 'List or remove the worktrees of parallel lanes (ralphy start --parallel)',
    details: [
      'Each parallel task runs in its own worktree under relais/worktrees/. A merged one is removed;',
      'one whose task failed is kept for you to look at. `list` shows them (reads only); `prune`',
      'removes them all, after keeping every commit and uncommitted change at',
      'refs/relais/recovered/lanes/<name>. It refuses while a workflow runs.',
      DIR_LINE,
    ],
    options: [JSON_RESULT],
    examples: ['relais worktrees list', 'relais worktrees prune ./my-project'],
  },
  help: {
    usage: ['help [command]', '<command> --help', '--version'],
    summary: 'Show this help, or the help of one command',
    details: ['Help never runs anything: it only prints.'],
    options: [],
    examples: ['relais help start', 'relais run -h', 'relais --version'],
  },
} as const satisfies Record<string, CommandHelp>;

export type CommandName = keyof typeof COMMAND_HELP;

/** Options every command answers, besides its own. */
export const HELP_OPTION: OptionHelp = {
  name: 'help',
  type: 'boolean',
  text: 'Show this help and exit',
};

export function isCommandName(word: string): word is CommandName {
  return Object.hasOwn(COMMAND_HELP, word);
}

export function helpOf(command: CommandName): CommandHelp {
  return COMMAND_HELP[command];
}

export const COMMAND_NAMES = Object.keys(COMMAND_HELP) as CommandName[];
