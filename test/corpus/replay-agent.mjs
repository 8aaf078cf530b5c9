#!/usr/bin/env node
// Replays one recorded agent transcript as the agent CLI printed it, for test/corpus/: it stands
// in for `claude` or `codex`. RELAIS_REPLAY names the transcript; RELAIS_REPLAY_FORMAT says how it
// was recorded:
//   claude-stream  Claude Code `--output-format stream-json` lines, printed as they are
//   codex-jsonl    `codex exec --json` lines, printed as they are
//   text           a plain-text final answer, printed inside Claude Code's one `result` object
//                  (how `claude -p --output-format json` carries a text answer)
// Asked with `--output-format json`, it prints only the `result` object of a stream transcript, as
// the real CLI does in that mode (not even its api_retry lines: checked with claude 2.1.330). As the
// orchestrator (no tools), a Claude transcript's tool calls are left out.
//
// Which call plays the transcript: RELAIS_REPLAY_ROLE is `any` (every call, the default),
// `builder` or `orchestrator` (a call in plan mode / Codex's read-only sandbox). The other role
// answers what RELAIS_REPLAY_TASK (orchestrator) or RELAIS_REPLAY_BUILDER (builder) holds, so a
// tick reaches the call under test.
//
// RELAIS_REPLAY_WRITE is a JSON object of files (path -> text, relative to the working directory)
// the call that plays the transcript writes first: the work the agent did, for the runner to find
// in git. RELAIS_REPLAY_STDERR is printed on stderr, RELAIS_REPLAY_EXIT is the exit code, and
// RELAIS_REPLAY_HANG=1 keeps the process alive after its output (a CLI still retrying when the
// runner's own timeout kills it).
//
// A transcript line {"type":"replay.tool","busy":true|false} is not printed: it is a tool call in
// flight. The replay starts a child process (busy: it spins on the CPU; idle: it sleeps), writes
// the child's pid to RELAIS_REPLAY_MARK, and goes on only once RELAIS_REPLAY_RELEASE exists (the
// test moves its clock meanwhile), then ends the child.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, watch, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

readFileSync(0); // the prompt, as the real CLIs read it
const argv = process.argv.slice(2);
const env = process.env;
const format = env.RELAIS_REPLAY_FORMAT;
const planning = argv.includes('plan') || argv.includes('read-only');
const role = planning ? 'orchestrator' : 'builder';
const jsonMode = argv[argv.indexOf('--output-format') + 1] === 'json';
const replayRole = env.RELAIS_REPLAY_ROLE ?? 'any';

const out = (line) => process.stdout.write(`${line}\n`);
const result = (text) =>
  out(
    JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: text,
      total_cost_usd: 0.01,
      num_turns: 1,
    }),
  );

if (replayRole !== 'any' && replayRole !== role) {
  // The other role's call: its scripted answer, so the tick reaches the call under test.
  result(role === 'orchestrator' ? env.RELAIS_REPLAY_TASK : env.RELAIS_REPLAY_BUILDER);
} else {
  await play();
}

async function play() {
  for (const [path, text] of Object.entries(JSON.parse(env.RELAIS_REPLAY_WRITE ?? '{}'))) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  const text = readFileSync(env.RELAIS_REPLAY, 'utf8');
  if (format === 'text') result(text.replace(/\n$/, ''));
  else {
    for (const line of text.split('\n').filter((l) => l.trim())) {
      const parsed = JSON.parse(line);
      // An orchestrator runs Claude Code with no tools: a builder's tool calls are not in its run.
      const toolLine = parsed.type === 'assistant' || parsed.type === 'user' || parsed.type === 'replay.tool';
      if (format === 'claude-stream' && replayRole === 'orchestrator' && toolLine) continue;
      if (parsed.type === 'replay.tool') {
        await toolInFlight(parsed.busy === true);
        continue;
      }
      if (jsonMode && format === 'claude-stream' && parsed.type !== 'result') continue;
      out(line);
    }
  }
  if (env.RELAIS_REPLAY_STDERR) process.stderr.write(`${env.RELAIS_REPLAY_STDERR}\n`);
  if (env.RELAIS_REPLAY_HANG === '1') setInterval(() => undefined, 1 << 30);
  else process.exitCode = Number(env.RELAIS_REPLAY_EXIT ?? 0);
}

/** A tool call in flight: a child process at work (or asleep) until the test releases it. */
async function toolInFlight(busy) {
  // Idle is `sleep`: a node child would spend CPU starting up, which is work to the watcher.
  const child = busy
    ? spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' })
    : spawn('sleep', ['1000'], { stdio: 'ignore' });
  const mark = env.RELAIS_REPLAY_MARK;
  const release = env.RELAIS_REPLAY_RELEASE;
  writeFileSync(`${mark}.tmp`, String(child.pid));
  renameSync(`${mark}.tmp`, mark);
  await new Promise((resolve) => {
    const watcher = watch(dirname(release), (_event, name) => {
      if (name === basename(release) && existsSync(release)) done();
    });
    const done = () => {
      watcher.close();
      resolve();
    };
    if (existsSync(join(dirname(release), basename(release)))) done();
  });
  child.kill('SIGKILL');
}
