import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LIVING_DOCS, LIVING_DOCS_TOKEN_CAP } from '../../source/engine/cycle/mapper/living-docs.js';
import { CLI, TestProject } from '../support/project.js';

// `relais cycle init` spawned from dist/cli/main.cjs in real git repositories, the mapper agent
// played by the fake claude CLI (seed 003 P12 then P2).

let project: TestProject | undefined;
afterEach(() => project?.dispose());

const ANSWERS = {
  vision: 'A tiny greeting library that people enjoy.',
  users: 'Developers who need greetings in their CLI tools.',
  success: ['greet("A") returns "Hello, A"', 'Documented in the README'],
  non_goals: ['Translations'],
  stack: 'Node 20, plain JavaScript, no dependencies.',
  constraints: ['No network access'],
  requirements: [
    { id: 'R1', text: 'greet(name) says hello' },
    { id: 'R2', text: 'farewell(name) says goodbye' },
  ],
  phases: [
    { id: 'P1', name: 'basics', goal: 'Greet', requirements: ['R1'], success: ['greet works'] },
    { id: 'P2', name: 'more', goal: 'Say goodbye', requirements: ['R2'], success: ['farewell works'] },
  ],
};

const BROWNFIELD = {
  'package.json': JSON.stringify(
    { name: 'greeter', type: 'module', scripts: { test: 'node --test tests/', lint: 'eslint src' } },
    null,
    2,
  ),
  'src/greet.js': "export const greet = (n) => 'Hello, ' + n;\n",
  'src/farewell.js': "export const farewell = (n) => 'Bye, ' + n;\n",
  'tests/greet.test.js': "import { greet } from '../src/greet.js';\n",
  'README.md': '# greeter\nGreets people.\n',
};

function mapperAnswer(size = 1): object {
  const body = (title: string) => `# ${title}\n${'- a fact about this project\n'.repeat(size)}`;
  return {
    docs: Object.fromEntries(LIVING_DOCS.map((d) => [d, body(d.replace('.md', ''))])),
    loading_map: [
      { area: 'src', paths: ['src/'], docs: ['PATTERNS.md', 'PITFALLS.md'] },
      { area: 'all', paths: ['*'], docs: ['TECH_STACK.md'] },
    ],
  };
}

function answersFile(p: TestProject, answers: object = ANSWERS): string {
  const path = join(p.base, 'answers.json');
  writeFileSync(path, JSON.stringify(answers));
  return path;
}

function tokensOf(p: TestProject): number {
  return LIVING_DOCS.reduce((n, d) => n + Math.ceil(p.read(`specs/p12/${d}`).length / 4), 0);
}

const SEED_FILES = [
  'specs/VISION.md',
  'specs/PROJECT.md',
  'specs/REQUIREMENTS.md',
  'specs/ROADMAP.md',
  'specs/P2_DONE',
];

describe('relais cycle init', () => {
  it('greenfield: no mapper call, the five outputs written once confirmed, committed, and the cycle accepts them', () => {
    project = TestProject.create({ 'README.md': '# new thing\n' });
    project.scenario({});
    const run = project.cliSync(['cycle', 'init', '--answers', answersFile(project), '--confirm']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Codebase: greenfield');
    expect(run.stdout).toContain('Living docs: none');
    expect(project.calls()).toEqual([]);
    for (const f of SEED_FILES) expect(project.exists(f)).toBe(true);
    expect(project.read('specs/VISION.md')).toContain('A tiny greeting library that people enjoy.');
    expect(project.read('specs/REQUIREMENTS.md')).toContain('- R2: farewell(name) says goodbye');
    expect(project.read('specs/ROADMAP.md')).toContain('## P2: more');
    expect(project.read('specs/PROJECT.md')).toContain('Greenfield');
    expect(project.json('specs/p12/P12_DONE')).toMatchObject({ kind: 'greenfield', degraded: null });
    expect(project.json('relais/cycle/STATE.json')).toMatchObject({ phase: 'research' });
    expect(project.status()).toBe('');
    expect(project.git('log', '-1', '--format=%s').trim()).toBe(
      'relais(init): seed docs from the brainstorm',
    );
    // The cycle's seed_docs now finds everything it needs (seed 003 seed_docs 2).
    const cycle = project.cliSync(['cycle']);
    expect(cycle.stdout.trim().split('\n').at(-1)).toBe('CYCLE_OK');
    expect(project.json('relais/cycle/STATE.json')).toMatchObject({
      phase: 'select-track',
      last_action: 'seed_docs',
    });
  });

  it('brownfield: the mapper gets the repository facts and writes the seven living docs with the loading map', () => {
    project = TestProject.create(BROWNFIELD);
    project.scenario({ mapper: [{ result_json: mapperAnswer() }] });
    const run = project.cliSync(['cycle', 'init', '--answers', answersFile(project), '--confirm']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Codebase: brownfield');
    expect(run.stdout).toMatch(
      /Living docs: 7 files in specs\/p12\/, \d+ tokens, written by the mapper \(1 call\(s\)\)/,
    );
    // Shown whole to the human before the brainstorm (seed 003 P12: they feed it), in map order.
    const shown = run.stdout.indexOf('----- specs/p12/TECH_STACK.md -----');
    expect(shown).toBeGreaterThan(0);
    expect(run.stdout.slice(shown)).toContain(project.read('specs/p12/PITFALLS.md'));
    expect(run.stdout.indexOf('----- end of the living docs -----')).toBeLessThan(
      run.stdout.indexOf('----- specs/VISION.md -----'),
    );
    const calls = project.calls();
    expect(calls.map((c) => c.role)).toEqual(['mapper']);
    // Facts gathered by the runner: the manifest's scripts, the test files, the history.
    expect(calls[0]?.prompt).toContain('test: node --test tests/');
    expect(calls[0]?.prompt).toContain('tests/greet.test.js');
    expect(calls[0]?.prompt).toContain('## Recent commits');
    expect(calls[0]?.argv).toContain('plan');
    for (const d of LIVING_DOCS) expect(project.read(`specs/p12/${d}`)).toMatch(/^# /);
    const workflow = project.read('specs/p12/WORKFLOW.md');
    expect(workflow).toContain('- area=src | paths=src/ | docs=PATTERNS.md, PITFALLS.md');
    expect(tokensOf(project)).toBeLessThanOrEqual(LIVING_DOCS_TOKEN_CAP);
    expect(project.json('specs/p12/P12_DONE')).toMatchObject({
      kind: 'brownfield',
      tokens: tokensOf(project),
    });
    expect(project.read('specs/PROJECT.md')).toContain('specs/p12/TECH_STACK.md');
    // Living docs and seed docs are committed together: the cycle starts from a clean tree.
    expect(project.status()).toBe('');
    expect(project.git('show', '--name-only', '--format=', 'HEAD')).toContain('specs/p12/GLOSSARY.md');
  });

  it('returning: the earlier mapping is kept without a mapper call; --remap maps again', () => {
    project = TestProject.create(BROWNFIELD);
    project.scenario({ mapper: [{ result_json: mapperAnswer() }, { result_json: mapperAnswer(2) }] });
    expect(project.cliSync(['cycle', 'init', '--answers', answersFile(project), '--confirm']).code).toBe(0);
    const again = project.cliSync(['cycle', 'init', '--answers', answersFile(project), '--confirm']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Codebase: returning (specs/p12/P12_DONE and specs/P2_DONE found)');
    expect(again.stdout).toContain('kept from the last mapping');
    expect(again.stdout).toContain('----- specs/VISION.md (replaces the current file) -----');
    expect(project.calls()).toHaveLength(1);
    const remap = project.cliSync([
      'cycle',
      'init',
      '--remap',
      '--answers',
      answersFile(project),
      '--confirm',
    ]);
    expect(remap.code).toBe(0);
    expect(project.calls()).toHaveLength(2);
    expect(project.read('specs/p12/RISKS.md')).toBe(
      '# RISKS\n- a fact about this project\n- a fact about this project\n',
    );
  });

  it('token cap: too long docs are asked again with the overage, then trimmed by the runner, never over the cap', () => {
    project = TestProject.create(BROWNFIELD);
    // 7 docs x 400 lines x 27 characters: about 19,000 tokens, twice.
    project.scenario({ mapper: [{ result_json: mapperAnswer(400) }, { result_json: mapperAnswer(400) }] });
    const run = project.cliSync(['cycle', 'init', '--answers', answersFile(project), '--confirm']);
    expect(run.code).toBe(0);
    const calls = project.calls();
    expect(calls).toHaveLength(2);
    expect(calls[1]?.prompt).toMatch(/total about \d+ tokens .* the cap is 4999/);
    expect(run.stdout).toContain('trimmed to the cap');
    expect(tokensOf(project)).toBeLessThanOrEqual(LIVING_DOCS_TOKEN_CAP);
    expect(tokensOf(project)).toBeGreaterThan(4000);
    // The loading map survives the trim.
    expect(project.read('specs/p12/WORKFLOW.md')).toContain('- area=all | paths=* | docs=TECH_STACK.md');
  });

  it('mapper failure degrades to greenfield, never fatal (an invalid answer: test/unit/cycle-mapper)', () => {
    const reason = /mapper agent:/;
    project = TestProject.create(BROWNFIELD);
    project.scenario({ mapper: [{ result: 'boom', is_error: true, exit_code: 1 }] });
    const run = project.cliSync(['cycle', 'init', '--answers', answersFile(project), '--confirm']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Mapping failed, continuing as greenfield: /);
    expect(run.stdout).toMatch(reason);
    expect(project.exists('specs/p12/TECH_STACK.md')).toBe(false);
    expect(project.json('specs/p12/P12_DONE').degraded).toMatch(reason);
    expect(project.read('specs/PROJECT.md')).toContain('Greenfield');
    for (const f of SEED_FILES) expect(project.exists(f)).toBe(true);
  });

  it('shows the documents but writes nothing without --confirm', () => {
    project = TestProject.create({ 'README.md': '# new thing\n' });
    project.scenario({});
    const head = project.head();
    const run = project.cliSync(['cycle', 'init', '--answers', answersFile(project)]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('----- specs/ROADMAP.md -----');
    expect(run.stdout).toContain('Goal: Say goodbye');
    expect(run.stdout).toContain(
      'Nothing written: review the documents above, then run again with --confirm.',
    );
    for (const f of SEED_FILES) expect(project.exists(f)).toBe(false);
    expect(project.exists('relais/cycle/STATE.json')).toBe(false);
    expect(project.head()).toBe(head);
  });

  it('refuses without a human: no terminal and no answers file, before any mapping', () => {
    project = TestProject.create(BROWNFIELD);
    project.scenario({ mapper: [{ result_json: mapperAnswer() }] });
    const run = project.cliSync(['cycle', 'init']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('the brainstorm needs a human');
    expect(run.stderr).toContain('Fix: run it in a terminal, or write your answers in a JSON file');
    expect(project.calls()).toEqual([]);
    expect(project.exists('specs/p12')).toBe(false);
    expect(project.status()).toBe('');
  });

  it('bad answers: a clear error naming the problem, nothing written; --confirm alone is a usage error', () => {
    project = TestProject.create({ 'README.md': '# new thing\n' });
    project.scenario({});
    const bad = { ...ANSWERS, phases: [{ ...ANSWERS.phases[0], requirements: ['R1', 'R9'] }] };
    const run = project.cliSync(['cycle', 'init', '--answers', answersFile(project, bad), '--confirm']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('R9 is not a requirement');
    expect(run.stderr).toContain('no phase delivers R2');
    expect(run.stderr).toContain('Nothing was written.');
    expect(project.exists('specs/VISION.md')).toBe(false);
    const alone = project.cliSync(['cycle', 'init', '--confirm']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--confirm goes with --answers');
  });

  it('help: its own entry, listed under relais cycle --help', () => {
    const cli = (args: string[]) =>
      spawnSync(process.execPath, [CLI, ...args], { cwd: tmpdir(), encoding: 'utf8' });
    const help = cli(['cycle', 'init', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('cycle init [dir] [--answers <file> --confirm] [--remap]');
    expect(help.stdout).toContain('--remap');
    expect(cli(['cycle', '--help']).stdout).toContain('cycle init');
    expect(cli(['cycle', 'init', '--bogus']).stderr).toContain('relais cycle init: unknown option --bogus');
  });
});
