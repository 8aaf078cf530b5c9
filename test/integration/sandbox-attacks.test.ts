import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fsck, refsOf } from '../redteam/aftermath.js';
import { REPO_ROOT, TestProject, task } from '../support/project.js';

// Issue 14's daemon escapes, as a hostile builder would try them, through the real `relais run`
// with the default sandbox (bubblewrap). The scripted external driver does the attack.

let project: TestProject;
afterEach(() => project?.dispose());

const DRIVER = join(REPO_ROOT, 'test/support/fake-driver.mjs');
const RESULT = { summary: 'driver did it', files_intended: ['src/a.ts'], commands_ran: [], notes: [] };
const cursorTask = (verification = { fast: ['ok'], slow: [] }) =>
  task({ builder: { mode: 'cursor', max_turns: 1, instructions: 'do it' }, verification });

function withDriver(configure?: (config: any) => void): TestProject {
  return TestProject.create({ 'src/a.ts': 'export const a = 1;\n', 'README.md': 'readme\n' }, (c) => {
    c.builder.cursor = {
      command: DRIVER,
      args: ['{{TASK_FILE}}', '{{OUTPUT_FILE}}'],
      timeout_seconds: 60,
      output_file: 'relais/BUILDER_RESULT.json',
    };
    configure?.(c);
  });
}

/** Processes on the host whose command line holds `needle` (the daemon's log path is unique). */
function processesWith(needle: string): string[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle);
      } catch {
        return false;
      }
    });
}

/**
 * The time the daemon waits before it strikes has passed: a twin started now, outside any
 * sandbox, with the same delay has ended (its exit is the event awaited, no sleep in the test).
 * The daemon started earlier, during the run, so its own delay is over too.
 */
function daemonDelayOver(ms: number): Promise<void> {
  return new Promise((resolve) => {
    spawn(process.execPath, ['-e', `setTimeout(() => {}, ${ms})`], { stdio: 'ignore' }).on('exit', () =>
      resolve(),
    );
  });
}

/** The verification the tick ran, run again by hand on the committed tree. */
const A_IS_2 =
  'process.exit(require("fs").readFileSync("src/a.ts", "utf8") === "export const a = 2;\\n" ? 0 : 1)';

/**
 * Everything issue 14 asks after such an attack: nothing out of scope changed, no hook exists or
 * runs on the user's next commit, no process of the run is alive, git fsck is clean, no stray
 * ref, and the committed tree passes the check the verdict was about.
 */
function expectNothingLeft(p: TestProject, log: string, refsBefore: string, hookRan: string): void {
  expect(p.read('README.md')).toBe('readme\n');
  expect(existsSync(join(p.root, '.git/hooks/pre-commit'))).toBe(false);
  expect(processesWith(log)).toEqual([]);
  const check = fsck(p);
  expect(check.ok, check.output).toBe(true);
  // Only the branch moved, to the tick's own commit.
  const others = (refs: string) =>
    refs
      .split('\n')
      .filter((l) => !l.startsWith('refs/heads/main '))
      .join('\n');
  expect(others(refsOf(p))).toBe(others(refsBefore));
  expect(p.git('log', '-1', '--format=%s').trim()).toBe('relais(T1): Change a');
  expect(p.status()).toBe('');
  const recheck = spawnSync(process.execPath, ['-e', A_IS_2], { cwd: p.root });
  expect(recheck.status).toBe(0);
  // The user's next commit runs no hook of the daemon's.
  p.git('commit', '-q', '--allow-empty', '-m', 'the user commits');
  expect(existsSync(hookRan)).toBe(false);
}

describe('issue 14: nothing a builder starts outlives its tick', () => {
  it('a double-forked setsid daemon that waits, then edits out of scope, plants a hook and a ref, finds nothing to write to', async () => {
    project = withDriver((c) => {
      c.verification.templates.push({ id: 'a-is-2', cmd: 'node', args: ['-e', A_IS_2] });
    });
    project.scenario({ orchestrator: [{ result_json: cursorTask({ fast: ['a-is-2'], slow: [] }) }] });
    const plan = join(project.harness, 'driver.json');
    const log = `${plan}.daemon.log`;
    const hookRan = join(project.harness, 'hook-ran');
    const delay = 1500;
    const head = project.head();
    writeFileSync(
      plan,
      JSON.stringify({
        writes: { 'src/a.ts': 'export const a = 2;\n' },
        result: RESULT,
        daemon: {
          // Long enough for the tick to judge, verify and commit before it strikes.
          delay_ms: delay,
          writes: {
            [join(project.root, 'README.md')]: 'pwned\n',
            [join(project.root, 'src/a.ts')]: 'export const a = 666;\n',
            [join(project.root, '.git/hooks/pre-commit')]: `#!/bin/sh\ntouch ${hookRan}\n`,
            [join(project.root, '.git/refs/heads/evil')]: `${head}\n`,
          },
        },
      }),
    );
    const refsBefore = refsOf(project);
    const run = project.cliSync(['run'], { RELAIS_FAKE_DRIVER: plan });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(project.report()).toMatchObject({ code: 'SUCCESS', sandbox: 'bwrap' });
    expect(project.read('relais/REPORT.md')).toContain('- Sandbox: bubblewrap (own PID namespace');
    // The daemon really ran inside the tick (it said so before the driver returned).
    expect(readFileSync(log, 'utf8')).toMatch(/^up \d+$/m);
    await daemonDelayOver(delay);
    // Its delay is over: it never wrote (it died with the sandbox), and nothing it aimed at changed.
    expect(readFileSync(log, 'utf8')).not.toMatch(/^(wrote|E[A-Z]+) /m);
    expect(project.read('src/a.ts')).toBe('export const a = 2;\n');
    expectNothingLeft(project, log, refsBefore, hookRan);
  });

  it('a daemon started by a verification command, waiting past the verification, dies with it', async () => {
    let log = '';
    let hookRan = '';
    const delay = 1500;
    project = withDriver((c) => {
      log = join(c.sandbox.writable_outside[0], 'verify-daemon.log');
      hookRan = join(c.sandbox.writable_outside[0], 'hook-ran');
      const daemon = `const fs = require('fs'); fs.appendFileSync(process.argv[1], 'up ' + process.pid + '\\n');
        setTimeout(() => { for (const [p, c] of [[process.argv[2], 'pwned'], ['.git/hooks/pre-commit', '#!/bin/sh\\ntouch ' + process.argv[3] + '\\n']]) {
          try { fs.writeFileSync(p, c, { mode: 0o755 }); fs.appendFileSync(process.argv[1], 'wrote ' + p + '\\n'); }
          catch (e) { fs.appendFileSync(process.argv[1], e.code + ' ' + p + '\\n'); } } }, ${delay}); setInterval(() => {}, 1000);`;
      c.verification.templates.push({ id: 'a-is-2', cmd: 'node', args: ['-e', A_IS_2] });
      c.verification.templates.push({
        id: 'daemon',
        cmd: 'node',
        args: [
          '-e',
          `const { spawn, spawnSync } = require('child_process');
           spawn('setsid', [process.execPath, '-e', process.argv[1], process.argv[2], process.argv[3], process.argv[4]], { stdio: 'ignore', detached: true }).unref();
           while (!require('fs').existsSync(process.argv[2])) spawnSync('sleep', ['0.05']);`,
          daemon,
          log,
          'README.md',
          hookRan,
        ],
      });
    });
    project.scenario({
      orchestrator: [{ result_json: cursorTask({ fast: ['daemon', 'a-is-2'], slow: [] }) }],
    });
    const plan = join(project.harness, 'driver.json');
    writeFileSync(plan, JSON.stringify({ writes: { 'src/a.ts': 'export const a = 2;\n' }, result: RESULT }));
    const refsBefore = refsOf(project);
    const run = project.cliSync(['run'], { RELAIS_FAKE_DRIVER: plan });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(project.report()).toMatchObject({ code: 'SUCCESS', sandbox: 'bwrap' });
    // The daemon was up during verification, and was ended with it: past its delay it never wrote
    // (had it written during verification, the verdict's binding to the verified tree would stop the tick).
    expect(readFileSync(log, 'utf8')).toMatch(/^up \d+\n/);
    await daemonDelayOver(delay);
    expect(readFileSync(log, 'utf8')).not.toMatch(/^(wrote|E[A-Z]+) /m);
    expectNothingLeft(project, log, refsBefore, hookRan);
  });
});
