#!/usr/bin/env node
// A scripted external builder driver (seed 001 PR5, "cursor" mode) for the tests. It reads the
// task Relais wrote, acts as RELAIS_FAKE_DRIVER says, and writes its builder_result.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const plan = JSON.parse(readFileSync(process.env.RELAIS_FAKE_DRIVER, 'utf8'));
const [taskFile, outputFile] = process.argv.slice(2);
const task = JSON.parse(readFileSync(taskFile, 'utf8'));
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
