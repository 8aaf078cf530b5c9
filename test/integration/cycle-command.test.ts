import { afterEach, describe, expect, it } from 'vitest';
import { CYCLE_EXIT, cycleCommand } from '../../source/cli/commands/cycle.js';
import type { CommandIo } from '../../source/cli/io.js';
import {
  BASE_FILES,
  CycleRepo,
  phaseComplete,
  plan,
  scripted,
  spec,
  track,
  verdict,
  writes,
} from '../support/cycle-project.js';

// The `relais cycle` command function (main.ts wiring is the lead's), in-process with scripted agents.

let repo: CycleRepo;
afterEach(() => repo?.dispose());

function io(root: string) {
  const out: string[] = [];
  const err: string[] = [];
  const value: CommandIo = {
    cwd: root,
    env: { ...process.env, CI: 'true' },
    stdout: { write: (t: string) => out.push(t) },
    stderr: { write: (t: string) => err.push(t) },
  };
  return { io: value, lines: () => out.join('').trimEnd().split('\n'), err: () => err.join('') };
}

const flags = { json: false, loop: false, resume: false, yes: true };
const sections = (repo: CycleRepo) => ({
  policy: repo.policy,
  agents: { orchestrator: {}, planner: { provider: 'codex', model: 'm' } },
});

describe('relais cycle: reply token as the last line, distinct exit codes', () => {
  it('needs_human 3, --resume 0, CYCLE_OK 0, --loop to DONE 0, then DONE 4', async () => {
    repo = await CycleRepo.create({ ...BASE_FILES });
    const { runners } = scripted({});
    const a = io(repo.root);
    expect(await cycleCommand(a.io, undefined, flags, sections(repo), runners)).toBe(CYCLE_EXIT.NEEDS_HUMAN);
    expect(a.lines().at(-1)).toBe('CYCLE_FAIL');
    expect(a.lines().join('\n')).toContain('CYCLE_SEED_DOCS_MISSING: Run `relais cycle init`');

    for (const [path, text] of Object.entries({
      'specs/VISION.md': 'v\n',
      'specs/PROJECT.md': 'p\n',
      'specs/REQUIREMENTS.md': 'r\n',
      'specs/ROADMAP.md': 'm\n',
      'specs/P2_DONE': '',
    }))
      repo.write(path, text);
    repo.git('add', 'specs');
    repo.git('commit', '-q', '-m', 'seed docs');
    const b = io(repo.root);
    expect(await cycleCommand(b.io, undefined, { ...flags, resume: true }, sections(repo), runners)).toBe(0);
    expect(b.lines()).toEqual(['Resumed: phase research']);

    const c = io(repo.root);
    expect(await cycleCommand(c.io, undefined, flags, sections(repo), runners)).toBe(CYCLE_EXIT.CYCLE_OK);
    expect(c.lines().at(-1)).toBe('CYCLE_OK');

    const d = io(repo.root);
    const agents = scripted({
      planner: [track(), spec(), plan([{ id: 'T1' }]), phaseComplete],
      implementer: [writes({ 'src/greet.js': "module.exports = (name) => 'Hello, ' + name;\n// v2\n" })],
      verifier: verdict('YES'),
    });
    const loopCode = await cycleCommand(
      d.io,
      undefined,
      { ...flags, loop: true },
      sections(repo),
      agents.runners,
    );
    expect(loopCode, d.lines().join('\n')).toBe(0);
    expect(d.lines().at(-2)).toContain('Cycle loop ended after 9 cycle(s): DONE');
    expect(d.lines().at(-1)).toBe('DONE');
    expect(d.lines().join('\n')).toContain('Decide: summarize (row 14: project complete)');
    expect(d.lines().join('\n')).toMatch(
      /Notification complete \(summary\): Project complete \[relais\/notifications\/complete\.md\]/,
    );

    const e = io(repo.root);
    expect(await cycleCommand(e.io, undefined, flags, sections(repo), agents.runners)).toBe(CYCLE_EXIT.DONE);
    expect(e.lines().at(-1)).toBe('DONE');
  });

  it('--resume --loop: the pause ends, says so first, and the loop runs on to DONE', async () => {
    repo = await CycleRepo.create({ ...BASE_FILES });
    expect(await cycleCommand(io(repo.root).io, undefined, flags, sections(repo), scripted({}).runners)).toBe(
      CYCLE_EXIT.NEEDS_HUMAN,
    );
    for (const [path, text] of Object.entries({
      'specs/VISION.md': 'v\n',
      'specs/PROJECT.md': 'p\n',
      'specs/REQUIREMENTS.md': 'r\n',
      'specs/ROADMAP.md': 'm\n',
      'specs/P2_DONE': '',
    }))
      repo.write(path, text);
    repo.git('add', 'specs');
    repo.git('commit', '-q', '-m', 'seed docs');
    const agents = scripted({
      planner: [track(), spec(), plan([{ id: 'T1' }]), phaseComplete],
      implementer: [writes({ 'src/greet.js': "module.exports = (name) => 'Hello, ' + name;\n// v2\n" })],
      verifier: verdict('YES'),
    });
    const a = io(repo.root);
    const code = await cycleCommand(
      a.io,
      undefined,
      { ...flags, resume: true, loop: true },
      sections(repo),
      agents.runners,
    );
    expect(code, a.lines().join('\n')).toBe(0);
    expect(a.lines()[0]).toMatch(/^\[\d\d:\d\d:\d\d\] Resumed: phase research$/);
    expect(a.lines().at(-2)).toContain('Cycle loop ended after');
    expect(a.lines().at(-1)).toBe('DONE');
  });

  it('--json prints NDJSON events; a bad cycle section is refused by name', async () => {
    repo = await CycleRepo.create();
    const a = io(repo.root);
    expect(
      await cycleCommand(a.io, undefined, { ...flags, json: true }, sections(repo), scripted({}).runners),
    ).toBe(0);
    const events = a.lines().map((l) => JSON.parse(l));
    expect(events.map((e) => e.type)).toEqual(['cycle.started', 'cycle.decided', 'cycle.finished']);
    expect(events.at(-1)).toMatchObject({ reply: 'CYCLE_OK', action: 'seed_docs' });
    const b = io(repo.root);
    expect(
      await cycleCommand(b.io, undefined, flags, { policy: { escalation: { stuck_treshold: 1 } } }),
    ).toBe(3);
    expect(b.err()).toContain('stuck_treshold');
  });
});

describe('relais cycle: a failure to retry (1) is told apart from a pause for a human (3)', () => {
  it('a plain CYCLE_FAIL (the planner answers no block twice) exits 1; the next cycle retries', async () => {
    repo = await CycleRepo.create();
    const { runners } = scripted({ planner: [() => 'prose', () => 'more prose', track()] });
    expect(await cycleCommand(io(repo.root).io, undefined, flags, sections(repo), runners)).toBe(0);
    const a = io(repo.root);
    expect(await cycleCommand(a.io, undefined, flags, sections(repo), runners)).toBe(CYCLE_EXIT.CYCLE_FAIL);
    expect(CYCLE_EXIT.CYCLE_FAIL).toBe(1);
    expect(a.lines().at(-1)).toBe('CYCLE_FAIL');
    expect(a.lines().join('\n')).toContain('CYCLE_PLANNER_OUTPUT_INVALID');
    expect(repo.state().phase).toBe('select-track');
    expect(await cycleCommand(io(repo.root).io, undefined, flags, sections(repo), runners)).toBe(0);
  });

  it('an unparseable STATE.json is a pause: exit 3, for one cycle and for --loop, the file untouched', async () => {
    repo = await CycleRepo.create();
    const { runners } = scripted({});
    expect(await cycleCommand(io(repo.root).io, undefined, flags, sections(repo), runners)).toBe(0);
    repo.write('relais/cycle/STATE.json', '{"phase": ');
    const a = io(repo.root);
    expect(await cycleCommand(a.io, undefined, flags, sections(repo), runners)).toBe(CYCLE_EXIT.NEEDS_HUMAN);
    expect(CYCLE_EXIT.NEEDS_HUMAN).toBe(3);
    expect(a.lines().join('\n')).toContain('CYCLE_STATE_INVALID');
    expect(a.lines().at(-1)).toBe('CYCLE_FAIL');
    const b = io(repo.root);
    expect(await cycleCommand(b.io, undefined, { ...flags, loop: true }, sections(repo), runners)).toBe(
      CYCLE_EXIT.NEEDS_HUMAN,
    );
    expect(b.lines().join('\n')).toContain('Cycle loop ended after 1 cycle(s): a human is needed');
    expect(repo.read('relais/cycle/STATE.json')).toBe('{"phase": ');
  });
});

describe('relais cycle: flags that cannot mean anything are refused before anything runs', () => {
  it.each([
    [{ loop: true, cycleId: 'abc123' }, '--cycle-id names one cycle and cannot be used with --loop'],
    [{ verdict: 'yes' }, '--verdict answers a paused verification: use it with --resume'],
    [{ resume: true, verdict: 'maybe' }, '--verdict is yes or no'],
    [{ resume: true, reason: 'why' }, '--reason goes with --verdict'],
  ])('%o', async (extra, message) => {
    repo = await CycleRepo.create({ ...BASE_FILES });
    const before = repo.head();
    const a = io(repo.root);
    expect(
      await cycleCommand(a.io, undefined, { ...flags, ...extra }, sections(repo), scripted({}).runners),
    ).toBe(2);
    expect(a.err()).toContain(message);
    expect(repo.exists('relais/cycle/STATE.json')).toBe(false);
    expect(repo.head()).toBe(before);
  });
});
