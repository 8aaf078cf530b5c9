#!/usr/bin/env node
// A scripted external builder driver (seed 001 PR5, "cursor" mode) for the tests. It reads the
// task Relais wrote, acts as RELAIS_FAKE_DRIVER says, and writes its builder_result.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const script = JSON.parse(readFileSync(process.env.RELAIS_FAKE_DRIVER, 'utf8'));
const [taskFile, outputFile] = process.argv.slice(2);
const task = JSON.parse(readFileSync(taskFile, 'utf8'));
// Parallel lanes run the same driver for several tasks: a task's own entry (by task_id) wins.
const plan = { ...script, ...(script.by_task?.[task.task_id] ?? {}) };
writeFileSync(
  `${process.env.RELAIS_FAKE_DRIVER}.seen.json`,
  JSON.stringify({
    argv: process.argv.slice(2),
    task_id: task.task_id,
    env_output: process.env.RELAIS_OUTPUT_FILE,
  }),
);
// As an agent provider it also gets its role's prompt on stdin: kept when the plan asks.
if (plan.record_stdin)
  writeFileSync(
    `${process.env.RELAIS_FAKE_DRIVER}.stdin.json`,
    JSON.stringify({ role: process.env.RELAIS_AGENT_ROLE, stdin: readFileSync(0, 'utf8') }),
  );
for (const [path, content] of Object.entries(plan.writes ?? {})) {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileSync(resolve(path), content);
}
// Writes a sandbox must refuse: each try's outcome, "<error code or OK> <path>", goes to probe_log.
for (const path of plan.probes ?? []) {
  let said = 'OK';
  try {
    writeFileSync(path, 'hijacked\n');
  } catch (error) {
    said = error.code;
  }
  appendFileSync(plan.probe_log, `${said} ${path}\n`);
}
if (plan.daemon) {
  // A double-forked `setsid` daemon (issue 14): it outlives the driver unless the sandbox ends it,
  // and after its delay edits what it names (an out-of-scope file, .git/hooks/pre-commit).
  const log = `${process.env.RELAIS_FAKE_DRIVER}.daemon.log`;
  const code = `
    const fs = require('fs');
    fs.appendFileSync(${JSON.stringify(log)}, 'up ' + process.pid + '\\n');
    setTimeout(() => {
      for (const [p, c] of Object.entries(${JSON.stringify(plan.daemon.writes ?? {})})) {
        try { fs.writeFileSync(p, c, { mode: 0o755 }); fs.appendFileSync(${JSON.stringify(log)}, 'wrote ' + p + '\\n'); }
        catch (e) { fs.appendFileSync(${JSON.stringify(log)}, e.code + ' ' + p + '\\n'); }
      }
    }, ${Number(plan.daemon.delay_ms ?? 500)});
    setInterval(() => {}, 1000);`;
  const first = spawn('setsid', [process.execPath, '-e', code], { stdio: 'ignore', detached: true });
  first.unref();
  // The driver returns once its daemon is up, as a real one would after forking.
  while (!readIfExists(log).includes('up ')) spawnSync('sleep', ['0.05']);
}
function readIfExists(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
if (plan.sleep) {
  const child = spawn('sleep', ['300'], { stdio: 'ignore' });
  writeFileSync(`${process.env.RELAIS_FAKE_DRIVER}.pids`, `${process.pid} ${child.pid}`);
  console.log('driver working');
  setInterval(() => undefined, 1000);
} else if (plan.fifo_output) {
  spawnSync('mkfifo', [outputFile]);
  console.log('driver left a FIFO');
} else {
  if (plan.result !== undefined)
    writeFileSync(outputFile, typeof plan.result === 'string' ? plan.result : JSON.stringify(plan.result));
  console.log('driver done');
  process.exitCode = plan.exit_code ?? 0;
}
