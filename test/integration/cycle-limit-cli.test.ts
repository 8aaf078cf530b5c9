import { afterEach, describe, expect, it } from 'vitest';
import { BASE_FILES, SEED } from '../support/cycle-project.js';
import { TestProject } from '../support/project.js';

// Issue 15 through the built CLI: `relais cycle` waits out a usage limit. The planner's call ends
// on a limit message; the plain output announces the wait and counts down, the runner sleeps until
// the reset and runs the same call again, which then answers: the cycle goes on (CYCLE_OK), and
// the limit is neither a failed cycle nor a failure of its agent.

let project: TestProject | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

/** A hex cycle id gives the nonce its first six digits, upper case (seed 003 VALIDATE 3). */
const CYCLE_ID = 'a1b2c3d4e5f60718';
const NONCE = 'A1B2C3';

const TRACK = [
  'Picking the greeting track.',
  `<<<TRACK:V1:NONCE=${NONCE}>>>`,
  'TRACK_ID=greet',
  'TRACK_NAME="Greetings"',
  'PHASE=P1',
  'REQUIREMENTS=R1,R2',
  'GOAL="Greet and say goodbye"',
  'ESTIMATED_TASKS=2',
  'TRACK_TYPE=feature',
  `<<<END_TRACK:NONCE=${NONCE}>>>`,
].join('\n');

describe('relais cycle: a usage limit through the CLI', () => {
  it('the planner hits a limit: the wait is announced and counted down, then the same call runs again and the cycle goes on', async () => {
    const p = TestProject.create({ ...BASE_FILES, ...SEED }, (config) => {
      config.verification.templates = [{ id: 'test', cmd: 'node', args: ['tests/run.js'] }];
      config.cycle = {
        mode: 'yolo',
        verify: { tests: ['test'], lint: [] },
        agents: { planner: { provider: 'claude', model: 'sonnet' } },
      };
    });
    project = p;
    // The shortest wait a limit gets is 30 s: "wait 30 seconds" is read as such.
    p.scenario({
      orchestrator: [
        {
          is_error: true,
          result: 'Too many requests. Please wait 30 seconds before retrying.',
          exit_code: 1,
        },
        { result: TRACK },
      ],
    });
    // The first cycle checks the seed docs (no agent); the second picks a track.
    const first = p.cliSync(['cycle']);
    expect(first.stdout.trim().split('\n').at(-1), first.stdout + first.stderr).toBe('CYCLE_OK');

    const cli = p.cli(['cycle', '--cycle-id', CYCLE_ID]);
    await cli.waitFor('Waiting for the usage limit: 10s left');
    const run = await cli.done;
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines.at(-1)).toBe('CYCLE_OK');
    // The wait's announcement with its reason, then the countdown on the plain lines.
    expect(run.stdout).toMatch(/Too many requests\. Please wait 30 seconds before retrying\./);
    expect(lines.filter((l) => l.includes('Waiting for the usage limit:'))).toEqual([
      expect.stringMatching(/^\[\d{2}:\d{2}:\d{2}\] Waiting for the usage limit: 10s left \(resets at /),
    ]);
    // The same planner call again after the wait, and no failure counted anywhere.
    expect(p.calls().filter((c) => c.role === 'orchestrator')).toHaveLength(2);
    expect(p.json('relais/cycle/STATE.json')).toMatchObject({
      phase: 'select-track',
      last_action: 'pick_track',
      track: { id: 'greet', type: 'feature' },
    });
    expect(run.stdout).not.toContain('CYCLE_AGENT_FAILED');
  }, 120_000); // the runner's own 30 s wait, then the next call: real time, not a test's sleep
});
