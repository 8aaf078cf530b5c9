import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { cycleInitCommand } from '../../source/cli/commands/cycle-init.js';
import type { CommandIo } from '../../source/cli/io.js';
import { TestProject } from '../support/project.js';

// The brainstorm at a terminal (seed 003 P2, human-driven): `relais cycle init` in-process with a
// terminal stand-in (stdin and stdout flagged as TTYs), a real repository and the real writes.

let project: TestProject | undefined;
afterEach(() => project?.dispose());

function terminal(p: TestProject, lines: readonly string[], end = true) {
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  let out = '';
  const io: CommandIo = {
    cwd: p.root,
    stdin,
    env: p.env,
    stdout: { write: (t: string) => (out += t), isTTY: true },
    stderr: { write: (t: string) => (out += t) },
  };
  stdin.write(lines.map((l) => `${l}\n`).join(''));
  if (end) stdin.end();
  return { io, output: () => out };
}

const SESSION = [
  'A tiny greeting library.',
  'CLI authors.',
  'greet works',
  '',
  '', // no non-goals
  'Node 20',
  '', // no constraints
  'greet(name) says hello',
  'farewell(name) says goodbye',
  '',
  'basics',
  'Greet people',
  'R1, R9', // not a requirement: asked again
  'r1',
  'greet returns Hello',
  '',
  'more',
  'Say goodbye',
  'R2',
  'farewell returns Bye',
  '',
];

const FLAGS = { answers: undefined, confirm: false, remap: false };

describe('relais cycle init at a terminal', () => {
  it('asks, shows the four documents, and writes them when the human says y', async () => {
    project = TestProject.create({ 'README.md': '# new\n' });
    project.scenario({});
    const t = terminal(project, [...SESSION, 'y']);
    expect(await cycleInitCommand(t.io, undefined, FLAGS)).toBe(0);
    const out = t.output();
    expect(out).toContain('  not requirements: R9');
    expect(out).toContain('----- specs/ROADMAP.md -----');
    expect(out).toContain('Write these documents in specs/? [y/N]');
    expect(project.read('specs/REQUIREMENTS.md')).toBe(
      '# Requirements\n\n- R1: greet(name) says hello\n- R2: farewell(name) says goodbye\n',
    );
    expect(project.read('specs/ROADMAP.md')).toContain(
      '## P1: basics\n\nGoal: Greet people\n\nRequirements: R1',
    );
    expect(project.read('specs/VISION.md')).toContain('A tiny greeting library.');
    expect(project.json('relais/cycle/STATE.json').phase).toBe('research');
    expect(project.status()).toBe('');
  });

  it('writes nothing when the human says no, or stops before the end', async () => {
    project = TestProject.create({ 'README.md': '# new\n' });
    project.scenario({});
    const no = terminal(project, [...SESSION, 'n']);
    expect(await cycleInitCommand(no.io, undefined, FLAGS)).toBe(1);
    expect(no.output()).toContain('Nothing written.');
    const stopped = terminal(project, SESSION.slice(0, 5));
    expect(await cycleInitCommand(stopped.io, undefined, FLAGS)).toBe(1);
    expect(stopped.output()).toContain('Brainstorm stopped.');
    for (const f of ['specs/VISION.md', 'specs/P2_DONE', 'relais/cycle/STATE.json'])
      expect(project.exists(f)).toBe(false);
  });

  it('ends the seed_docs pause of a cycle that waited for these documents', async () => {
    project = TestProject.create({ 'README.md': '# new\n' });
    project.scenario({});
    const paused = project.cliSync(['cycle']);
    expect(paused.code).toBe(3);
    expect(paused.stdout + paused.stderr).toContain('Run `relais cycle init`');
    const t = terminal(project, [...SESSION, 'yes']);
    expect(await cycleInitCommand(t.io, undefined, FLAGS)).toBe(0);
    expect(t.output()).toContain('the pause for seed docs is over');
    expect(project.json('relais/cycle/STATE.json')).toMatchObject({ phase: 'research', needs_human: null });
    const next = project.cliSync(['cycle']);
    expect(next.stdout.trim().split('\n').at(-1)).toBe('CYCLE_OK');
  });
});
