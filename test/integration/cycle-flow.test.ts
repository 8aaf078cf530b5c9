import { execFileSync } from 'node:child_process';
import { rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { updateRoadmapStatus } from '../../source/engine/cycle/roadmap-status.js';
import { resumeCycle } from '../../source/engine/cycle/status.js';
import { cycleStatusLines } from '../../source/engine/cycle/status-lines.js';
import { Git } from '../../source/engine/judge/git.js';
import {
  BASE_FILES,
  CycleRepo,
  nonceOf,
  phaseComplete,
  plan,
  SEED,
  scripted,
  spec,
  track,
  verdict,
  writes,
} from '../support/cycle-project.js';

// Seed 003 cycles on real git repositories; the agents are scripted in-process runners.

let repo: CycleRepo;
afterEach(() => repo?.dispose());

const TWO_TASKS = [
  { id: 'greet-01', title: 'Exclaim the greeting' },
  {
    id: 'greet-02',
    title: 'Add farewell',
    files:
      '- path=src/farewell.js action=add rationale="new module"\n- path=tests/farewell.test.js action=add rationale="its test"',
  },
];

describe('the cycle from research to DONE', () => {
  it('one track with two tasks: one action per cycle, docs committed, packets, verdicts, summary', async () => {
    repo = await CycleRepo.create();
    const { runners, calls } = scripted({
      planner: [track(), spec(), plan(TWO_TASKS), phaseComplete],
      implementer: [
        writes({
          'src/greet.js': "module.exports = (name) => 'Hello, ' + name + '!';\n",
          'tests/greet.test.js':
            "const assert = require('assert');\nassert.strictEqual(require('../src/greet.js')('A'), 'Hello, A!');\n",
        }),
        writes({
          'src/farewell.js': "module.exports = (name) => 'Goodbye, ' + name;\n",
          'tests/farewell.test.js':
            "const assert = require('assert');\nassert.strictEqual(require('../src/farewell.js')('A'), 'Goodbye, A');\n",
        }),
      ],
      verifier: verdict('YES'),
    });
    const outcomes = await repo.cycles(runners, (o) => o.reply !== 'CYCLE_OK');
    expect(outcomes.map((o) => o.action)).toEqual([
      'seed_docs',
      'pick_track',
      'create_spec',
      'create_plan',
      'generate_task',
      'implement_task',
      'verify_task',
      'reflect',
      'generate_task',
      'implement_task',
      'verify_task',
      'reflect',
      'pick_track',
      'summarize',
    ]);
    expect(outcomes.at(-1)).toMatchObject({ reply: 'DONE', phase: 'complete' });
    const state = repo.state();
    expect(state).toMatchObject({
      phase: 'complete',
      loop: { iteration: 14, stuck_count: 0 },
      cycle: { status: 'complete' },
      tracks_completed: [{ id: 'greet', tasks: 2, phase: 'P1' }],
      roadmap: { phases_completed: ['P1'], current_phase: null },
      last_good: { task_id: 'greet-02' },
    });
    // The last commit is the roadmap's status (PHASE_COMPLETE), right after the last good task.
    expect(state.last_good.commit).toBe(repo.git('rev-parse', 'HEAD~1').trim());
    expect(repo.read('specs/ROADMAP.md')).toContain('## Phase status\n\n- P1: complete\n- Roadmap complete.');
    // Results read from git: one runner commit per implementation, track docs committed too.
    expect(repo.subjects().slice(0, 8)).toEqual([
      'relais(roadmap): P1 complete',
      'relais(greet-02): Add farewell',
      'relais(greet-02): task packet',
      'relais(greet-01): Exclaim the greeting',
      'relais(greet-01): task packet',
      'relais(greet): plan',
      'relais(greet): spec',
      'relais config',
    ]);
    expect(repo.status()).toBe('');
    for (const doc of ['SPEC.md', 'PLAN.md', 'tasks/TASK_001.md', 'tasks/TASK_002.md'])
      expect(repo.exists(`specs/tracks/greet/${doc}`)).toBe(true);
    const packet = repo.read('specs/tracks/greet/tasks/TASK_001.md');
    for (const section of [
      '# TASK — greet-01',
      '## TITLE',
      '## SUMMARY (verbatim)',
      '## FILES (verbatim)',
      '## ACCEPTANCE (verbatim)',
      '## ESTIMATED_DIFF (verbatim)',
      '## DEPENDS_ON (verbatim)',
      '## OPS COMMANDS',
      '## FILES_TO_LOAD (ordered, capped)',
      '## HARD STOPS / SIGNALS',
      '- AC2: LLM: The change does what the title says',
      'ESTIMATED_DIFF=20',
      '- test: `node tests/run.js`',
      'tests: ["node","tests/run.js"] (template test)',
      '- path: src/greet.js | why: planned modify target',
      '- path: tests/greet.test.js | why: related test',
      '- REPLAN_REQUIRED: false',
      '- REQUEST_SPLIT: false',
    ])
      expect(packet).toContain(section);
    // Mechanical happy path: no planner call between create_plan and the next pick_track.
    expect(calls.map((c) => c.role)).toEqual([
      'planner',
      'planner',
      'planner',
      'implementer',
      'verifier',
      'implementer',
      'verifier',
      'planner',
    ]);
    // One verifier per LLM: criterion (AC1 is DET: and auto-passed), with the evidence bundle.
    const verifierPrompt = calls.find((c) => c.role === 'verifier')?.request.userPrompt ?? '';
    expect(verifierPrompt).toContain('Criterion AC2: LLM: The change does what the title says');
    expect(verifierPrompt).toContain('"pass":true');
    expect(verifierPrompt).toContain('src/greet.js');
    expect(verifierPrompt).toContain("answer NO with reason 'insufficient evidence'");
    // Task 1 also changed its test, which the plan did not list: the verifier is told so.
    expect(verifierPrompt).toContain('Files outside the planned scope were modified');
    expect(verifierPrompt).toMatch(/## Files outside the planned scope[\s\S]*tests\/greet\.test\.js/);
    const second = calls.filter((c) => c.role === 'verifier')[1]?.request.userPrompt ?? '';
    expect(second).not.toContain('Files outside the planned scope');
    // The implementer got the packet and the files to load.
    const impl = calls.find((c) => c.role === 'implementer')?.request.userPrompt ?? '';
    expect(impl).toContain('## TASK PACKET');
    expect(impl).toContain("--- src/greet.js ---\nmodule.exports = (name) => 'Hello, ' + name;");
    // Every prompt of a cycle carries that cycle's nonce, a new one each cycle.
    const nonces = calls.filter((c) => c.role === 'planner').map((c) => nonceOf(c.request));
    expect(new Set(nonces).size).toBe(4);
    // Hybrid mode: a new-track approval (gate), a track-complete notice, the summary.
    const files = repo.notifications();
    expect(files.some((f) => f.startsWith('new-track-'))).toBe(true);
    expect(files.some((f) => f.startsWith('track-complete-'))).toBe(true);
    expect(files).toContain('complete.md');
    expect(files.some((f) => f.startsWith('task-complete-'))).toBe(false);
    expect(repo.read('relais/notifications/complete.md')).toContain('1 track(s) complete: greet (2 task(s))');
    const finished = repo.events.filter((e) => e.type === 'cycle.finished');
    expect(finished.at(-1)).toMatchObject({ reply: 'DONE', action: 'summarize' });
    expect(repo.events).toContainEqual(
      expect.objectContaining({ type: 'gate.resolved', gate: 'spec', decision: 'approve' }),
    );
    // DONE is idempotent: another cycle summarizes again.
    expect(await repo.cycle(runners)).toMatchObject({ reply: 'DONE', action: 'summarize' });
  });

  it('seed_docs: needs_human until the docs exist, shown by status, then --resume goes on', async () => {
    repo = await CycleRepo.create({ ...BASE_FILES, 'specs/VISION.md': '# Vision\n' });
    const { runners } = scripted({});
    const first = await repo.cycle(runners);
    expect(first).toMatchObject({
      reply: 'CYCLE_FAIL',
      action: 'seed_docs',
      phase: 'needs_human',
      code: 'CYCLE_SEED_DOCS_MISSING',
    });
    expect(first.details).toContain('specs/PROJECT.md');
    expect(first.details).not.toContain('specs/VISION.md');
    expect(repo.notifications().some((f) => f.startsWith('seed-docs-'))).toBe(true);
    const lines = await cycleStatusLines(repo.root, 'relais');
    expect(lines[0]).toContain('phase needs_human');
    expect(lines.join('\n')).toContain('Needs a human (CYCLE_SEED_DOCS_MISSING)');
    expect(lines.join('\n')).toContain('Fix: Run `relais cycle init`');
    // Paused: the next cycle refuses and does not count.
    const paused = await repo.cycle(runners);
    expect(paused).toMatchObject({ reply: 'CYCLE_FAIL', refused: true, code: 'CYCLE_NEEDS_HUMAN' });
    expect(repo.state().loop.iteration).toBe(1);
    for (const [path, text] of Object.entries({
      'specs/PROJECT.md': 'p\n',
      'specs/REQUIREMENTS.md': 'r\n',
      'specs/ROADMAP.md': 'm\n',
      'specs/P2_DONE': '',
    }))
      repo.write(path, text);
    expect(await resumeCycle(repo.root, 'relais')).toEqual({ ok: true, phase: 'research' });
    expect(await repo.cycle(runners)).toMatchObject({
      reply: 'CYCLE_OK',
      action: 'seed_docs',
      phase: 'select-track',
    });
  });

  it('a runner commit takes only its own paths: what a human staged stays staged, out of relais(T): spec', async () => {
    repo = await CycleRepo.create();
    const { runners } = scripted({ planner: [track(), spec()] });
    await repo.cycles(runners, (o) => o.action === 'pick_track', 3);
    repo.write('notes.txt', 'my own work\n');
    repo.write('src/greet.js', "module.exports = (name) => 'Hi, ' + name;\n");
    repo.git('add', 'notes.txt', 'src/greet.js');
    expect(await repo.cycle(runners)).toMatchObject({ action: 'create_spec', reply: 'CYCLE_OK' });
    expect(repo.subjects()[0]).toBe('relais(greet): spec');
    expect(repo.git('show', '--name-only', '--format=', 'HEAD').trim()).toBe('specs/tracks/greet/SPEC.md');
    expect(repo.git('diff', '--cached', '--name-only').trim().split('\n')).toEqual([
      'notes.txt',
      'src/greet.js',
    ]);
  });

  it('documents are read as untrusted files: a link out of the repository is never followed, a FIFO never blocks', async () => {
    const { 'OPS.md': _ops, ...files } = { ...BASE_FILES, ...SEED };
    repo = await CycleRepo.create(files);
    writeFileSync(join(repo.base, 'outside.md'), 'OUTSIDE-SECRET\n');
    symlinkSync(join(repo.base, 'outside.md'), join(repo.root, 'OPS.md'));
    const { runners, calls } = scripted({ planner: [track()] });
    await repo.cycles(runners, (o) => o.action === 'pick_track', 3);
    expect(calls[0]?.request.userPrompt).toContain('--- specs/ROADMAP.md ---');
    expect(calls[0]?.request.userPrompt).not.toContain('OUTSIDE-SECRET');
    // A FIFO where OPS.md should be: read without blocking, and absent.
    rmSync(join(repo.root, 'OPS.md'));
    execFileSync('mkfifo', [join(repo.root, 'OPS.md')]);
    const again = scripted({ planner: [spec()] });
    expect(await repo.cycle(again.runners)).toMatchObject({ action: 'create_spec', reply: 'CYCLE_OK' });
    expect(again.calls[0]?.request.userPrompt).not.toContain('--- OPS.md ---');
  }, 20_000);

  it('a seed doc that links out of the repository is missing', async () => {
    const { 'specs/VISION.md': _v, ...files } = { ...BASE_FILES, ...SEED };
    repo = await CycleRepo.create(files);
    writeFileSync(join(repo.base, 'vision.md'), '# Vision from elsewhere\n');
    symlinkSync(join(repo.base, 'vision.md'), join(repo.root, 'specs/VISION.md'));
    const out = await repo.cycle(scripted({}).runners);
    expect(out).toMatchObject({ action: 'seed_docs', code: 'CYCLE_SEED_DOCS_MISSING' });
    expect(out.details).toContain('specs/VISION.md');
  });

  it('files_to_load: planned targets first, related tests and configs, capped at files_to_load_tokens', async () => {
    repo = await CycleRepo.create({
      ...BASE_FILES,
      ...SEED,
      'tests/greet-big.test.js': `/*\n${'x'.repeat(14_000)}\n*/\n`,
      'package.json': '{ "name": "greet" }\n',
    });
    // A tracked symlink that leads out of the repository is never loaded into a prompt.
    symlinkSync('/etc/hostname', join(repo.root, 'tests/greet-link.test.js'));
    repo.git('add', 'tests/greet-link.test.js');
    repo.git('commit', '-q', '-m', 'link');
    const { runners } = scripted({ planner: [track(), spec(), plan([{ id: 'T1' }])] });
    await repo.cycles(runners, (o) => o.action === 'generate_task', 6);
    expect(repo.state().task.files_to_load).toEqual([
      { path: 'src/greet.js', why: 'planned modify target' },
      { path: 'tests/greet.test.js', why: 'related test' },
      { path: 'package.json', why: 'project config' },
    ]);
    const packet = repo.read('specs/tracks/greet/tasks/TASK_001.md');
    expect(packet).toContain('- not loaded (over the cap): tests/greet-big.test.js');
  });
});

describe('roadmap phases (seed 003 pick_track 5): PHASE_BLOCKED and PHASE_COMPLETE', () => {
  const signal = (fields: string) => (r: Parameters<typeof nonceOf>[0]) =>
    `<<<TRACK:V1:NONCE=${nonceOf(r)}>>>\n${fields}\n<<<END_TRACK:NONCE=${nonceOf(r)}>>>`;

  it('PHASE_BLOCKED: needs_human with the reasons (notification, status), --resume asks the planner again', async () => {
    repo = await CycleRepo.create();
    const { runners, calls } = scripted({
      planner: [signal('PHASE_BLOCKED=true\nREASONS="the payment sandbox is down"'), track()],
    });
    await repo.cycle(runners); // seed_docs
    const blocked = await repo.cycle(runners);
    expect(blocked).toMatchObject({
      action: 'pick_track',
      reply: 'CYCLE_FAIL',
      phase: 'needs_human',
      code: 'CYCLE_PHASE_BLOCKED',
      details: 'phase blocked: the payment sandbox is down',
    });
    expect(repo.state()).toMatchObject({
      track: { id: null, status: 'none' },
      needs_human: {
        code: 'CYCLE_PHASE_BLOCKED',
        reason: 'phase blocked: the payment sandbox is down',
        resume_phase: 'select-track',
      },
    });
    // The notification pauses, says why and what to do.
    expect(repo.events).toContainEqual(
      expect.objectContaining({
        type: 'cycle.notification',
        event: 'escalation',
        action: 'pause',
        title: 'Roadmap phase blocked',
        lines: ['the payment sandbox is down'],
      }),
    );
    const [file] = repo.notifications().filter((f) => f.startsWith('escalation-'));
    const note = repo.read(`relais/notifications/${file}`);
    expect(note).toContain('# Roadmap phase blocked');
    expect(note).toContain('- the payment sandbox is down');
    expect(note).toContain('## Human action\n\nThe planner reported the roadmap phase blocked');
    const lines = (await cycleStatusLines(repo.root, 'relais')).join('\n');
    expect(lines).toContain(
      'Needs a human (CYCLE_PHASE_BLOCKED): phase blocked: the payment sandbox is down',
    );
    expect(lines).toContain('Fix: The planner reported the roadmap phase blocked (see reasons)');
    // Paused: nothing runs until --resume, which goes back to pick_track.
    expect(await repo.cycle(runners)).toMatchObject({ refused: true, code: 'CYCLE_NEEDS_HUMAN' });
    expect(calls).toHaveLength(1);
    expect(await resumeCycle(repo.root, 'relais')).toEqual({ ok: true, phase: 'select-track' });
    expect(await repo.cycle(runners)).toMatchObject({ action: 'pick_track', reply: 'CYCLE_OK' });
    expect(repo.state().track).toMatchObject({ id: 'greet', status: 'in-progress' });
  });

  it("PHASE_COMPLETE updates ROADMAP.md's phase status (one runner block, the humans' text kept), committed", async () => {
    repo = await CycleRepo.create();
    const { runners } = scripted({
      planner: [
        track(),
        spec(),
        plan([{ id: 'T1' }]),
        signal('PHASE_COMPLETE=true\nNEXT_PHASE=P2'),
        signal('PHASE_COMPLETE=true\nNEXT_PHASE=none'),
      ],
      implementer: [writes({ 'src/greet.js': "module.exports = (name) => 'Hello, ' + name;\n// v2\n" })],
      verifier: verdict('YES'),
    });
    const human = SEED['specs/ROADMAP.md'];
    const inode = statSync(join(repo.root, 'specs/ROADMAP.md')).ino;
    const first = await repo.cycles(runners, (o) => o.details.startsWith('phase P1 complete'), 12);
    expect(first.at(-1)).toMatchObject({ action: 'pick_track', reply: 'CYCLE_OK' });
    expect(first.at(-1)?.details).toBe('phase P1 complete; next phase P2; specs/ROADMAP.md updated');
    const roadmap = repo.read('specs/ROADMAP.md');
    expect(roadmap.startsWith(human)).toBe(true);
    expect(roadmap).toContain('## Phase status\n\n- P1: complete\n- P2: in progress\n');
    expect(repo.subjects()[0]).toBe('relais(roadmap): P1 complete');
    // Written to a temp file renamed over it (a new inode), never rewritten in place.
    expect(statSync(join(repo.root, 'specs/ROADMAP.md')).ino).not.toBe(inode);
    expect(repo.git('show', '--name-only', '--format=', 'HEAD').trim()).toBe('specs/ROADMAP.md');
    expect(repo.status()).toBe('');
    expect(repo.state().roadmap).toMatchObject({ current_phase: 'P2', phases_completed: ['P1'] });

    // A P2 track done: the next PHASE_COMPLETE replaces the block, it never adds a second one.
    repo.setState((s) => {
      s.tracks_completed.push({
        id: 'later',
        name: 'Later',
        phase: 'P2',
        completed_at: new Date().toISOString(),
        tasks: 1,
      });
    });
    const last = await repo.cycle(runners);
    expect(last).toMatchObject({ action: 'pick_track', phase: 'complete' });
    expect(last.details).toBe('phase P2 complete; the roadmap is done; specs/ROADMAP.md updated');
    const after = repo.read('specs/ROADMAP.md');
    expect(after.startsWith(human)).toBe(true);
    expect(after).toContain('## Phase status\n\n- P1: complete\n- P2: complete\n- Roadmap complete.\n');
    expect(after.split('## Phase status')).toHaveLength(2);
    expect(repo.subjects()[0]).toBe('relais(roadmap): P2 complete');
  });

  it('broken phase-status markers (an opening one alone, or out of order): ROADMAP.md is left as the humans wrote it, with a warning; the phase still completes', async () => {
    const open = '<!-- relais:phase-status (written by `relais cycle`; replaced when a phase completes) -->';
    const close = '<!-- /relais:phase-status -->';
    const alone = `# Roadmap\n## P1: basics\nR1, R2\n\n${open}\n## Phase status\n\n- P0: complete\n\n## Notes written after the end marker was deleted\nkeep me\n`;
    repo = await CycleRepo.create({ ...BASE_FILES, ...SEED, 'specs/ROADMAP.md': alone });
    const { runners } = scripted({
      planner: [
        track(),
        spec(),
        plan([{ id: 'T1' }]),
        signal('PHASE_COMPLETE=true\nNEXT_PHASE=P2'),
        signal('PHASE_COMPLETE=true\nNEXT_PHASE=none'),
      ],
      implementer: [writes({ 'src/greet.js': "module.exports = (name) => 'Hello, ' + name;\n// v2\n" })],
      verifier: verdict('YES'),
    });
    const first = await repo.cycles(runners, (o) => o.details.startsWith('phase P1 complete'), 12);
    expect(first.at(-1)).toMatchObject({ action: 'pick_track', reply: 'CYCLE_OK' });
    expect(first.at(-1)?.details).toContain(
      'phase P1 complete; next phase P2; specs/ROADMAP.md not updated: its phase-status markers are broken (1 opening, 0 closing)',
    );
    expect(repo.read('specs/ROADMAP.md')).toBe(alone);
    expect(repo.subjects().filter((s) => s.startsWith('relais(roadmap)'))).toEqual([]);
    expect(repo.status()).toBe('');
    expect(repo.state().roadmap).toMatchObject({ current_phase: 'P2', phases_completed: ['P1'] });
    expect(repo.events).toContainEqual(
      expect.objectContaining({
        type: 'log',
        level: 'warn',
        message: expect.stringContaining(
          "specs/ROADMAP.md's phase status is not updated: its phase-status markers are broken",
        ),
      }),
    );
    expect(repo.events).toContainEqual(
      expect.objectContaining({ type: 'cycle.notification', event: 'roadmap', action: 'warn' }),
    );
    const [note] = repo.notifications().filter((f) => f.startsWith('roadmap-'));
    expect(repo.read(`relais/notifications/${note}`)).toContain('# specs/ROADMAP.md not updated');

    // The end marker before the opening one: nothing tells where the runner's block ends either.
    const swapped = `# Roadmap\n${close}\n## Human notes\nkeep me too\n${open}\n`;
    repo.write('specs/ROADMAP.md', swapped);
    repo.git('commit', '-q', '-am', 'roadmap edited by hand');
    repo.setState((s) => {
      s.tracks_completed.push({
        id: 'later',
        name: 'Later',
        phase: 'P2',
        completed_at: new Date().toISOString(),
        tasks: 1,
      });
    });
    const last = await repo.cycle(runners);
    expect(last).toMatchObject({ action: 'pick_track', phase: 'complete' });
    expect(last.details).toContain(
      'specs/ROADMAP.md not updated: its phase-status markers are broken (1 opening, 1 closing, out of order)',
    );
    expect(repo.read('specs/ROADMAP.md')).toBe(swapped);
    expect(repo.subjects()[0]).toBe('roadmap edited by hand');
  });
});

describe("ROADMAP.md's status update never takes the humans' pending edits, nor goes through a link", () => {
  const progress = { phases_completed: ['P1'], current_phase: 'P2' };
  const message = 'relais(roadmap): P1 complete';
  const place = (docs = 'specs') => ({
    root: repo.root,
    docsDir: join(repo.root, docs),
    git: new Git(repo.root, process.env),
  });

  it('uncommitted edits (unstaged, then staged) skip the update and commit nothing; once the human commits them, the block is added', async () => {
    repo = await CycleRepo.create();
    const edited = `${SEED['specs/ROADMAP.md']}## P2: later\nR3\n`;
    repo.write('specs/ROADMAP.md', edited);
    const head = repo.head();
    const skipped = {
      ok: false,
      path: 'specs/ROADMAP.md',
      reason: 'it has uncommitted changes (commit or discard them first)',
    };
    expect(await updateRoadmapStatus(place(), progress, message)).toEqual(skipped);
    expect(repo.read('specs/ROADMAP.md')).toBe(edited);
    expect(repo.head()).toBe(head);
    repo.git('add', 'specs/ROADMAP.md');
    expect(await updateRoadmapStatus(place(), progress, message)).toEqual(skipped);
    expect(repo.read('specs/ROADMAP.md')).toBe(edited);
    expect(repo.head()).toBe(head);
    expect(repo.status()).toBe('M  specs/ROADMAP.md\n');

    repo.git('commit', '-q', '-m', 'roadmap: P2');
    expect(await updateRoadmapStatus(place(), progress, message)).toEqual({
      ok: true,
      path: 'specs/ROADMAP.md',
      changed: true,
    });
    expect(repo.read('specs/ROADMAP.md').startsWith(edited)).toBe(true);
    expect(repo.subjects().slice(0, 2)).toEqual([message, 'roadmap: P2']);
    expect(repo.status()).toBe('');
  });

  it("an untracked ROADMAP.md is not committed under the runner's message", async () => {
    repo = await CycleRepo.create({ ...BASE_FILES });
    repo.write('specs/ROADMAP.md', '# Roadmap\n');
    expect(await updateRoadmapStatus(place(), progress, message)).toMatchObject({
      ok: false,
      reason: 'it is not tracked by git (commit it first)',
    });
    expect(repo.read('specs/ROADMAP.md')).toBe('# Roadmap\n');
    expect(repo.subjects()).not.toContain(message);
  });

  it('a ROADMAP.md that is a symlink, or a docs folder that is one, is never written through', async () => {
    repo = await CycleRepo.create({ ...BASE_FILES, ...SEED, 'notes/ROADMAP.md': '# Real roadmap\n' });
    rmSync(join(repo.root, 'specs/ROADMAP.md'));
    symlinkSync('../notes/ROADMAP.md', join(repo.root, 'specs/ROADMAP.md'));
    symlinkSync('notes', join(repo.root, 'linked-docs'));
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', 'links');
    expect(await updateRoadmapStatus(place(), progress, message)).toMatchObject({
      ok: false,
      reason: 'specs/ROADMAP.md is a symlink',
    });
    expect(await updateRoadmapStatus(place('linked-docs'), progress, message)).toMatchObject({
      ok: false,
      reason: 'linked-docs is a symlink',
    });
    expect(repo.read('notes/ROADMAP.md')).toBe('# Real roadmap\n');
    expect(repo.subjects()[0]).toBe('links');
    expect(repo.status()).toBe('');
  });
});
