import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, sandboxed, TestProject, task } from '../support/project.js';

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
    sandboxed(c);
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

describe('issue 14: nothing a builder starts outlives its tick', () => {
  it('a double-forked setsid daemon cannot edit out of scope or plant a git hook, during or after the tick', () => {
    project = withDriver();
    project.scenario({ orchestrator: [{ result_json: cursorTask() }] });
    const plan = join(project.harness, 'driver.json');
    const hook = join(project.root, '.git/hooks/pre-commit');
    writeFileSync(
      plan,
      JSON.stringify({
        writes: { 'src/a.ts': 'export const a = 2;\n' },
        result: RESULT,
        daemon: {
          delay_ms: 0,
          writes: { [join(project.root, 'README.md')]: 'pwned\n', [hook]: '#!/bin/sh\ntouch /tmp/pwned\n' },
        },
      }),
    );
    const run = project.cliSync(['run'], { RELAIS_FAKE_DRIVER: plan });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(project.report()).toMatchObject({ code: 'SUCCESS', sandbox: 'bwrap' });
    // The daemon really ran inside the tick, and every write it tried was refused by the sandbox.
    const log = readFileSync(`${plan}.daemon.log`, 'utf8');
    expect(log).toMatch(/^up \d+$/m);
    expect(log).not.toMatch(/^wrote /m);
    // And it is gone: no process of it is left on the host to try again later.
    expect(processesWith(`${plan}.daemon.log`)).toEqual([]);
    expect(project.read('README.md')).toBe('readme\n');
    expect(existsSync(hook)).toBe(false);
    expect(project.read('src/a.ts')).toBe('export const a = 2;\n');
    expect(project.status()).toBe('');
  });

  it('a daemon started by a verification command dies with the verification', () => {
    let log = '';
    project = withDriver((c) => {
      log = join(c.sandbox.writable_outside[0], 'verify-daemon.log');
      const daemon = `const fs = require('fs'); fs.appendFileSync(process.argv[1], 'up ' + process.pid + '\\n');
        setTimeout(() => { try { fs.writeFileSync(process.argv[2], 'pwned'); fs.appendFileSync(process.argv[1], 'wrote\\n'); }
        catch (e) { fs.appendFileSync(process.argv[1], e.code + '\\n'); } }, 2000); setInterval(() => {}, 1000);`;
      c.verification.templates.push({
        id: 'daemon',
        cmd: 'node',
        args: [
          '-e',
          `const { spawn, spawnSync } = require('child_process');
           spawn('setsid', [process.execPath, '-e', process.argv[1], process.argv[2], process.argv[3]], { stdio: 'ignore', detached: true }).unref();
           while (!require('fs').existsSync(process.argv[2])) spawnSync('sleep', ['0.05']);`,
          daemon,
          log,
          'README.md',
        ],
      });
    });
    project.scenario({ orchestrator: [{ result_json: cursorTask({ fast: ['daemon'], slow: [] }) }] });
    const plan = join(project.harness, 'driver.json');
    writeFileSync(plan, JSON.stringify({ writes: { 'src/a.ts': 'export const a = 2;\n' }, result: RESULT }));
    const run = project.cliSync(['run'], { RELAIS_FAKE_DRIVER: plan });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(project.report()).toMatchObject({ code: 'SUCCESS', sandbox: 'bwrap' });
    // The daemon was up during verification, and was ended with it: it never wrote (and had it
    // written during verification, the verdict's binding to the verified tree would stop the tick).
    expect(readFileSync(log, 'utf8')).toMatch(/^up \d+\n/);
    expect(readFileSync(log, 'utf8')).not.toContain('wrote');
    expect(processesWith(log)).toEqual([]);
    expect(project.read('README.md')).toBe('readme\n');
    expect(project.status()).toBe('');
  });
});
