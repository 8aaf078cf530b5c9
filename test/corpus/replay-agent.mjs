#!/usr/bin/env node
// Replays one recorded agent transcript as the agent CLI printed it, for test/corpus/: it stands
// in for `claude` or `codex` and ignores their argv. RELAIS_REPLAY names the transcript;
// RELAIS_REPLAY_FORMAT says how it was recorded:
//   claude-stream  Claude Code `--output-format stream-json` lines, printed as they are
//   codex-jsonl    `codex exec --json` lines, printed as they are
//   text           a plain-text final answer, printed inside Claude Code's one `result` object
//                  (how `claude -p --output-format json` carries a text answer)
// RELAIS_REPLAY_STDERR is printed on stderr, RELAIS_REPLAY_EXIT is the exit code, and
// RELAIS_REPLAY_HANG=1 keeps the process alive after its output (a CLI still retrying when the
// runner's own timeout kills it).
import { readFileSync } from 'node:fs';

readFileSync(0); // the prompt, as the real CLIs read it
const text = readFileSync(process.env.RELAIS_REPLAY, 'utf8');
const format = process.env.RELAIS_REPLAY_FORMAT;
if (format === 'text')
  process.stdout.write(
    `${JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: text.replace(/\n$/, ''), total_cost_usd: 0.01, num_turns: 1 })}\n`,
  );
else process.stdout.write(text);
if (process.env.RELAIS_REPLAY_STDERR) process.stderr.write(`${process.env.RELAIS_REPLAY_STDERR}\n`);
if (process.env.RELAIS_REPLAY_HANG === '1') setInterval(() => undefined, 1 << 30);
else process.exitCode = Number(process.env.RELAIS_REPLAY_EXIT ?? 0);
