import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Answer,
  CycleRepo,
  type Handler,
  plan,
  scripted,
  spec,
  type TaskSpec,
  track,
  verdict,
  writes,
} from '../support/cycle-project.js';

// Runner-owned files (relais/, relais.config.json) and git's control files are guarded while an
// implementer runs and while stage 1 runs the project's tests: any change is restored and fails.

let repo: CycleRepo;
afterEach(() => repo?.dispose());

const GOOD = "module.exports = (name) => 'Hello, ' + name;\n// greeted\n";
const PLAN_JSON = 'relais/cycle/tracks/greet/plan.json';

async function atImplement(tasks: TaskSpec[] = [{ id: 'T1' }]) {
  repo = await CycleRepo.create();
  const agents = scripted({ planner: [track(), spec(), plan(tasks)] });
  await repo.cycles(agents.runners, (o) => o.action === 'generate_task', 6);
}

/** What a hostile implementer does besides its real change. */
const tampering =
  (extra: (cwd: string) => void): Handler =>
  (r, cwd): Answer => {
    writes({ 'src/greet.js': GOOD })(r, cwd);
    extra(cwd);
    return 'Implemented.';
  };

describe('the implementer may not touch runner-owned files', () => {
  it('a rewritten plan.json (every criterion DET:) is restored and the attempt fails', async () => {
    await atImplement();
    const before = repo.read(PLAN_JSON);
    const head = repo.head();
    const forged = JSON.parse(before);
    forged.tasks[0].acceptance = forged.tasks[0].acceptance.map((a: { id: string }) => ({
      id: a.id,
      text: 'DET: All tests pass',
      kind: 'DET',
    }));
    forged.tasks[0].estimatedDiff = 100_000;
    const out = await repo.cycle(
      scripted({
        implementer: [tampering((cwd) => writeFileSync(join(cwd, PLAN_JSON), JSON.stringify(forged)))],
      }).runners,
    );
    expect(out).toMatchObject({
      action: 'implement_task',
      reply: 'CYCLE_FAIL',
      code: 'CYCLE_PROTECTED_CHANGED',
    });
    expect(out.details).toContain(`${PLAN_JSON} (modified)`);
    expect(repo.read(PLAN_JSON)).toBe(before);
    // Nothing of the attempt is committed; its work is kept aside.
    expect(repo.head()).toBe(head);
    expect(repo.status()).toBe('');
    expect(repo.state().task).toMatchObject({ retry_count: 1, sub_step: 'implement' });
    expect(repo.state().task.failure_context.join('\n')).toContain(PLAN_JSON);
  });

  it('a notification replaced by a link out of the repository is removed', async () => {
    await atImplement();
    const outside = join(repo.base, 'outside.txt');
    writeFileSync(outside, 'untouched\n');
    const out = await repo.cycle(
      scripted({
        implementer: [
          tampering((cwd) => {
            mkdirSync(join(cwd, 'relais/notifications'), { recursive: true });
            symlinkSync(outside, join(cwd, 'relais/notifications/complete.md'));
          }),
        ],
      }).runners,
    );
    expect(out.code).toBe('CYCLE_PROTECTED_CHANGED');
    expect(repo.exists('relais/notifications/complete.md')).toBe(false);
  });

  it('relais.config.json is runner-owned: an edit, even one the agent commits itself, is undone', async () => {
    await atImplement();
    const config = repo.read('relais.config.json');
    const head = repo.head();
    const out = await repo.cycle(
      scripted({
        implementer: [
          tampering((cwd) => {
            const raw = JSON.parse(readFileSync(join(cwd, 'relais.config.json'), 'utf8'));
            raw.verification.templates = [{ id: 'test', cmd: 'true', args: [] }];
            writeFileSync(join(cwd, 'relais.config.json'), JSON.stringify(raw));
            execFileSync('git', ['commit', '-qam', 'agent commit'], { cwd });
          }),
        ],
      }).runners,
    );
    expect(out).toMatchObject({ code: 'CYCLE_PROTECTED_CHANGED' });
    expect(out.details).toContain('relais.config.json (modified)');
    expect(repo.read('relais.config.json')).toBe(config);
    expect(repo.head()).toBe(head);
    expect(repo.status()).toBe('');
  });

  it('a planted git hook is restored before the runner runs git again', async () => {
    await atImplement();
    const out = await repo.cycle(
      scripted({
        implementer: [
          tampering((cwd) => writeFileSync(join(cwd, '.git/hooks/pre-commit'), '#!/bin/sh\nexit 1\n')),
        ],
      }).runners,
    );
    expect(out.code).toBe('CYCLE_PROTECTED_CHANGED');
    expect(out.details).toContain('.git/hooks/pre-commit (created)');
    expect(repo.exists('.git/hooks/pre-commit')).toBe(false);
  });
});

describe('stage 1 test runs may not touch runner-owned files', () => {
  const evil = `require('fs').writeFileSync(${JSON.stringify(PLAN_JSON)}, '{}');\n`;

  async function verifyAfterEvilTest(sandbox: 'bwrap' | 'off') {
    await atImplement();
    repo.config = { ...repo.config, sandbox };
    const before = repo.read(PLAN_JSON);
    await repo.cycle(
      scripted({ implementer: [writes({ 'src/greet.js': GOOD, 'tests/evil.test.js': evil })] }).runners,
    );
    expect(repo.state().task.sub_step).toBe('verify');
    const { runners, calls } = scripted({ verifier: verdict('YES') });
    const out = await repo.cycle(runners);
    expect(out).toMatchObject({ action: 'verify_task', reply: 'CYCLE_FAIL', code: 'CYCLE_VERIFY_FAILED' });
    expect(repo.read(PLAN_JSON)).toBe(before);
    expect(calls).toEqual([]);
    return out;
  }

  it('in the sandbox the write is refused before it happens (relais/ is read-only): the test run fails', async () => {
    const out = await verifyAfterEvilTest('bwrap');
    expect(out.details).toContain('tests: test exited 1');
    expect(out.details).not.toContain('paths:');
  });

  it('without the sandbox the write happens, fails the paths check, and plan.json is restored', async () => {
    const out = await verifyAfterEvilTest('off');
    expect(out.details).toContain(`paths: the test or lint run changed ${PLAN_JSON} (modified`);
  });
});

describe('notification files', () => {
  it('are written atomically and never through a link; two of one event in the same second both stay', async () => {
    repo = await CycleRepo.create();
    const at = new Date('2026-03-01T10:00:00.250Z');
    repo.now = () => at;
    await repo.cycle(scripted({}).runners);
    repo.write('relais/cycle/STATE.json', '{');
    const outside = join(repo.base, 'outside.md');
    writeFileSync(outside, 'untouched\n');
    mkdirSync(join(repo.root, 'relais/notifications'), { recursive: true });
    symlinkSync(outside, join(repo.root, 'relais/notifications/escalation-2026-03-01T10:00:00Z.md'));
    await repo.cycle(scripted({}).runners);
    await repo.cycle(scripted({}).runners);
    expect(readFileSync(outside, 'utf8')).toBe('untouched\n');
    const files = repo.notifications().filter((f) => f.startsWith('escalation-'));
    expect(files).toEqual([
      'escalation-2026-03-01T10:00:00Z-2.md',
      'escalation-2026-03-01T10:00:00Z-3.md',
      'escalation-2026-03-01T10:00:00Z.md',
    ]);
    for (const f of files.slice(0, 2))
      expect(lstatSync(join(repo.root, 'relais/notifications', f)).isFile()).toBe(true);
  });

  it('complete.md planted as a link is replaced, not written through', async () => {
    repo = await CycleRepo.create();
    repo.policy.mode = 'yolo';
    const outside = join(repo.base, 'outside.md');
    writeFileSync(outside, 'untouched\n');
    mkdirSync(join(repo.root, 'relais/notifications'), { recursive: true });
    symlinkSync(outside, join(repo.root, 'relais/notifications/complete.md'));
    await repo.cycle(scripted({}).runners);
    repo.setState((s) => {
      s.phase = 'complete';
    });
    expect(await repo.cycle(scripted({}).runners)).toMatchObject({ reply: 'DONE' });
    expect(readFileSync(outside, 'utf8')).toBe('untouched\n');
    expect(lstatSync(join(repo.root, 'relais/notifications/complete.md')).isFile()).toBe(true);
    expect(repo.read('relais/notifications/complete.md')).toContain('# Project complete');
  });
});
