import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/project.js';

// README command 1: the bundled offline demo must keep working: `ralphy start` through the real
// claude binary (scripted model on 127.0.0.1), from PRD.md to a pushed branch.

describe('npm run demo', () => {
  it('runs the whole workflow offline to COMPLETED, stopping and rolling back a cheating tick on the way', async () => {
    const demoDir = mkdtempSync(join(tmpdir(), 'relais-demo-test-'));
    // A user's own gh, first on PATH: the demo must never run it (its answer differs per machine).
    const userBin = mkdtempSync(join(tmpdir(), 'relais-demo-user-gh-'));
    const userGhRan = join(userBin, 'ran');
    writeFileSync(join(userBin, 'gh'), `#!/bin/sh\ntouch '${userGhRan}'\nexit 1\n`);
    chmodSync(join(userBin, 'gh'), 0o755);
    const child = spawn(process.execPath, [join(REPO_ROOT, 'dist/demo/run-demo.js')], {
      env: {
        ...process.env,
        CI: 'true',
        RELAIS_DEMO_DIR: demoDir,
        PATH: `${userBin}${delimiter}${process.env.PATH}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    // The bare repository standing in for GitHub really received the feature branch.
    const [demo] = readdirSync(demoDir);
    const remote = spawnSync(
      'git',
      ['ls-remote', '--heads', join(demoDir, demo ?? '', 'github-stand-in.git')],
      {
        encoding: 'utf8',
      },
    ).stdout;
    // The demo's gh stand-in recorded the one call the PR phase makes, with the body it read.
    const ghCalls = readFileSync(join(demoDir, demo ?? '', 'gh-calls.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const userGh = existsSync(userGhRan);
    rmSync(demoDir, { recursive: true, force: true });
    rmSync(userBin, { recursive: true, force: true });
    expect(remote).toContain('refs/heads/ralphy/slugify-titles');
    expect(userGh).toBe(false);
    expect(ghCalls).toHaveLength(1);
    expect(ghCalls[0].args.slice(0, 8)).toEqual([
      'pr',
      'create',
      '--base',
      'main',
      '--head',
      'ralphy/slugify-titles',
      '--title',
      'Slugify titles',
    ]);
    expect(ghCalls[0].body).toContain('## Human gates');
    expect(code, out).toBe(0);
    // Seed 004: the planner asks its one question; with --yes nobody answers, so the runner
    // proceeds and the planner closes it as an assumption it states before the spec starts.
    // Said before anything runs: the model is scripted, and a typed answer changes nothing it writes.
    expect(out).toContain('This is a scripted demo.');
    expect(out).toContain('Phase: PLANNING');
    expect(out).toContain('=== Planner, round 1: 1 open question ===');
    expect(out).toContain("Gate plan: the planner's questions are not answered (nobody at a terminal");
    expect(out).toContain('Gate plan: approved automatically (--yes)');
    expect(out).toContain('gap 1 closed (inferred): Assumption: letters of any script stay as they are');
    expect(out).toContain('Proceeding under these assumptions:');
    expect(out.indexOf('Planner: ready for the spec')).toBeLessThan(out.indexOf('Phase: SPECIFICATION'));
    expect(out).toContain('Agent: spec-agent started');
    expect(out).toContain('spec tool Write');
    expect(out).toContain('Gate spec: approved automatically (--yes)');
    // Task 1, tick 1: the builder tries to edit the test and claims success anyway. The fence
    // refuses the write before it happens, and the runner's own test run (still red) stops the tick.
    expect(out).toContain(
      'Relais refused this write before it happened: tests/slugify.test.js is outside this task',
    );
    expect(out).toContain('Result: STOP_VERIFY_FAILED_FAST (0 files, +0/-0, 0 new)');
    expect(out).toMatch(
      /Task 1 Trim and collapse spaces: completed \(verified: SUCCESS, committed [0-9a-f]{12}/,
    );
    expect(out).toMatch(
      /Task 2 Drop punctuation: completed \(verified: SUCCESS, committed [0-9a-f]{12}.*test ✓/,
    );
    expect(out).toContain('Agent: qa-agent started');
    expect(out).toContain('Gate qa: approved automatically (--yes)');
    expect(out).toContain('Pull request: https://github.invalid/relais-demo/demo-project/pull/1');
    expect(out).toContain('Workflow COMPLETED https://github.invalid/relais-demo/demo-project/pull/1');
    // The demo says what happened to the pull request: a stand-in, offline, and the exact call.
    expect(out).toContain(
      "The pull request: the demo's gh stand-in (no GitHub, offline) was asked for it and answered https://github.invalid/relais-demo/demo-project/pull/1:",
    );
    expect(out).toMatch(
      /^ {5}gh pr create --base main --head ralphy\/slugify-titles --title 'Slugify titles' --body-file \S+\/relais\/PR_BODY\.md$/m,
    );
    expect(out).toContain('Workflow:  "Slugify titles" COMPLETED on ralphy/slugify-titles');
    expect(out).toContain('Tasks:     2/2');
  });
});
