#!/usr/bin/env node
// A scripted stand-in for the `claude` CLI, used by the F001-F012 fixtures: it speaks Claude
// Code's real output formats (`json` wrapper, `stream-json` lines) and replays one step of a
// scenario file per call. The scenario is JSON: { "orchestrator": [step...], "builder": [step...] }.
// Every call is appended to `<scenario>.calls.jsonl` (argv, role, prompt) so tests can assert
// how Relais invoked it.
import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';

const argv = process.argv.slice(2);
if (argv.includes('--version')) {
  process.stdout.write('9.9.9 (Fake Claude Code)\n');
  process.exit(0);
}
const scenarioSetting = process.env.RELAIS_FAKE_SCENARIO;
if (!scenarioSetting) {
  process.stderr.write('fake-claude: RELAIS_FAKE_SCENARIO is not set\n');
  process.exit(2);
}
// `~/…`: under HOME as this process sees it. In the OS sandbox HOME is a private folder whose
// ~/.claude is the real one, bound writable: a project with the default config (sandbox on, no
// writable_outside) can still keep the scenario's call log there.
const scenarioPath = scenarioSetting.startsWith('~/')
  ? resolve(process.env.HOME ?? '/', scenarioSetting.slice(2))
  : scenarioSetting;
// Every start, before the prompt is read: a process the runner started ahead of its call
// (issue 17) shows here whether or not it ever got a prompt.
appendFileSync(`${scenarioPath}.starts`, `${process.pid}\n`);
const scenario = JSON.parse(readFileSync(scenarioPath, 'utf8'));
const mode = argv[argv.indexOf('--permission-mode') + 1];
const appended = argv.includes('--append-system-prompt')
  ? argv[argv.indexOf('--append-system-prompt') + 1]
  : '';
// The workflow's agents say who they are in the system prompt they append (spec-agent, ...).
const workflowRole = /\b(spec|dev|qa)-agent\b/.exec(appended)?.[1];
// The Relay planner (seed 004) answers JSON with its own system prompt, like the orchestrator.
const system = argv.includes('--system-prompt') ? argv[argv.indexOf('--system-prompt') + 1] : '';
// The codebase mapper (`relais cycle init`, seed 003 P12) too.
const role = /^You are Relay\b/.test(system)
  ? 'planner'
  : /^You are the Relais codebase mapper\b/.test(system)
    ? 'mapper'
    : mode === 'plan'
      ? 'orchestrator'
      : (workflowRole ?? 'builder');
const format = argv[argv.indexOf('--output-format') + 1];
const stdin = readFileSync(0, 'utf8');

const log = `${scenarioPath}.calls.jsonl`;
const previous = existsSync(log)
  ? readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
  : [];
// Parallel lanes (issue 19) call agents in no fixed order: a `keyed` scenario holds one script per
// key, and a call plays the script of the first key whose text for its role (`match[role]`, else
// the key itself; a list: every text of it) its prompt contains, with its own count per key.
const matches = (k) => {
  const wanted = scenario.keyed[k].match?.[role] ?? k;
  return (Array.isArray(wanted) ? wanted : [wanted]).every((text) => stdin.includes(text));
};
const key = Object.keys(scenario.keyed ?? {}).find((k) => scenario.keyed[k][role] && matches(k));
const script = key === undefined ? scenario[role] : scenario.keyed[key][role];
const index = previous.filter((c) => c.role === role && c.key === key).length;
// HOME too: in the sandbox it is the sandbox's private scratch HOME (tests tell the two apart).
appendFileSync(
  log,
  `${JSON.stringify({ role, key, argv, prompt: stdin, cwd: process.cwd(), home: process.env.HOME })}\n`,
);

writeFileSync(`${scenarioPath}.${role}.pid`, String(process.pid));
const step = script?.[index];
if (!step) {
  process.stderr.write(`fake-claude: no ${role} step #${index + 1} in the scenario\n`);
  process.exit(3);
}

const out = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const stream = format === 'stream-json';

// Write tool calls made by `tool_write` actions, shown in the stream as Claude Code shows them.
const toolCalls = [];
for (const action of step.actions ?? []) act(action);
// `ignore_sigterm`: this process and the sleepers it starts shrug off SIGTERM, so only a SIGKILL
// ends them (a tree the graceful stop cannot end: the forced exit's to kill).
const sleep300 = step.ignore_sigterm ? ['sh', ['-c', 'trap "" TERM; exec sleep 300']] : ['sleep', ['300']];
if (step.ignore_sigterm) process.on('SIGTERM', () => undefined);
if (step.background_sleeper) {
  // A grandchild in the same process group that outlives this process unless the runner kills it.
  const sleeper = spawn(sleep300[0], sleep300[1], { stdio: 'ignore' });
  sleeper.unref();
  writeFileSync(`${scenarioPath}.sleeper.pid`, String(sleeper.pid));
}

if (stream) {
  out({ type: 'system', subtype: 'init', cwd: process.cwd(), tools: [], model: 'fake' });
  toolCalls.forEach((call, i) => {
    const id = `w${i}`;
    out({
      type: 'assistant',
      message: { content: [{ type: 'tool_use', id, name: 'Write', input: { file_path: call.path } }] },
    });
    const content = call.refusal ?? `File created successfully at: ${call.path}`;
    out({
      type: 'user',
      message: {
        content: [{ type: 'tool_result', tool_use_id: id, content, is_error: call.refusal !== null }],
      },
    });
  });
  for (const tool of step.tools ?? []) {
    out({
      type: 'assistant',
      message: { content: [{ type: 'tool_use', id: 't1', name: tool.name, input: tool.input }] },
    });
  }
  if (step.tool_result !== undefined) {
    // What a tool printed comes back as a `user` line; it is never the agent's own answer.
    out({
      type: 'user',
      message: {
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: step.tool_result,
            is_error: step.tool_result_error === true,
          },
        ],
      },
    });
  }
  if (step.say) out({ type: 'assistant', message: { content: [{ type: 'text', text: step.say }] } });
}
if (step.stderr) process.stderr.write(step.stderr);
if (step.print_bytes) printJunk(step.print_bytes, step.junk_line_bytes ?? 100);
if (step.daemon) {
  // A grandchild that leaves the process group (setsid): only a runner that watched the tree finds it.
  const daemon = spawn('setsid', [sleep300[0], ...sleep300[1]], { stdio: 'ignore', detached: true });
  daemon.unref();
  writeFileSync(`${scenarioPath}.daemon.pid`, String(daemon.pid));
}
if (step.print_line_bytes) printJunk(step.print_line_bytes, step.print_line_bytes + 1, false);

if (step.hang) {
  // Keep the process alive until it is killed.
  setInterval(() => undefined, 1000);
} else if (step.release_file) {
  // A model that works until the test lets it finish (it creates the file): a key can be pressed
  // while the agent is known to be at work, with no race against a timer.
  const poll = setInterval(() => {
    if (!existsSync(step.release_file)) return;
    clearInterval(poll);
    finish();
  }, 50);
} else if (step.delay_ms) {
  // A model that takes a fixed time per call (bench/parallel.mjs).
  setTimeout(finish, step.delay_ms);
} else {
  finish();
}

function finish() {
  if (!step.no_result) {
    const result =
      step.result_json !== undefined
        ? JSON.stringify(step.result_json)
        : step.cycle_verdict !== undefined
          ? cycleVerdict(step.cycle_verdict)
          : step.result;
    const wrapper = {
      type: 'result',
      subtype: step.is_error ? 'error_during_execution' : 'success',
      is_error: step.is_error === true,
      api_error_status: step.api_error_status ?? null,
      result,
      total_cost_usd: step.cost ?? 0.01,
      num_turns: 1,
      permission_denials: step.permission_denials ?? [],
    };
    out(wrapper);
  }
  process.exitCode = step.exit_code ?? 0;
}

/**
 * The deadf cycle's verifier answers one criterion in a block carrying the cycle's nonce, both
 * read from its prompt (seed 003 sentinels): `cycle_verdict: "YES"` answers whatever it was asked.
 */
function cycleVerdict(answer) {
  const nonce = /This cycle's nonce is ([0-9A-F]{6})/.exec(stdin)?.[1] ?? '000000';
  const criterion = /^Criterion (\S+):/m.exec(stdin)?.[1] ?? 'AC1';
  return `Checked.\n<<<VERDICT:V1:${criterion}:NONCE=${nonce}>>>\nANSWER=${answer}\nREASON="the evidence shows it"\n<<<END_VERDICT:${criterion}:NONCE=${nonce}>>>`;
}

function act(action) {
  const path = (p) => resolve(process.cwd(), p);
  if (action.tool_write !== undefined) {
    // Claude Code's Write tool, with its PreToolUse hooks from `--settings` run first, as the real
    // CLI runs them: the command through sh, the event on stdin; exit 2 refuses the write.
    const refusal = preToolUseRefusal('Write', {
      file_path: path(action.tool_write),
      content: action.content ?? '',
    });
    appendFileSync(
      `${scenarioPath}.tools.jsonl`,
      `${JSON.stringify({ tool: 'Write', path: action.tool_write, refused: refusal })}\n`,
    );
    toolCalls.push({ path: path(action.tool_write), refusal });
    if (refusal !== null) return;
    mkdirSync(dirname(path(action.tool_write)), { recursive: true });
    writeFileSync(path(action.tool_write), action.content ?? '');
  } else if (action.write !== undefined) {
    mkdirSync(dirname(path(action.write)), { recursive: true });
    writeFileSync(path(action.write), action.content ?? '');
  } else if (action.append !== undefined) {
    appendFileSync(path(action.append), action.content ?? '');
  } else if (action.delete !== undefined) {
    rmSync(path(action.delete), { recursive: true, force: true });
  } else if (action.symlink !== undefined) {
    symlinkSync(action.target, path(action.symlink));
  } else if (action.exec !== undefined) {
    const [cmd, ...args] = action.exec;
    const r = spawnSync(cmd, args, { cwd: process.cwd(), stdio: 'ignore' });
    if (r.status !== 0) process.stderr.write(`fake-claude: ${cmd} exited ${r.status}\n`);
  }
}

/** The stderr of the first PreToolUse hook that refuses (exit 2) this tool call, or null. */
function preToolUseRefusal(tool, input) {
  if (!argv.includes('--settings')) return null;
  const settings = JSON.parse(argv[argv.indexOf('--settings') + 1]);
  for (const entry of settings.hooks?.PreToolUse ?? []) {
    if (!new RegExp(`^(${entry.matcher})$`).test(tool)) continue;
    for (const hook of entry.hooks ?? []) {
      const event = { hook_event_name: 'PreToolUse', tool_name: tool, cwd: process.cwd(), tool_input: input };
      const run = spawnSync('sh', ['-c', hook.command], { input: JSON.stringify(event), encoding: 'utf8' });
      if (run.status === 2) return run.stderr.trim();
    }
  }
  return null;
}

function printJunk(total, lineBytes, newline = true) {
  if (!newline) {
    const chunk = 'y'.repeat(65536);
    for (let written = 0; written < total; written += chunk.length) process.stdout.write(chunk);
    process.stdout.write('\n');
    return;
  }
  const line = `${'x'.repeat(Math.max(1, lineBytes - 1))}\n`;
  let written = 0;
  const chunk = line.repeat(Math.max(1, Math.floor(65536 / line.length)));
  while (written < total) {
    process.stdout.write(chunk);
    written += chunk.length;
  }
}
