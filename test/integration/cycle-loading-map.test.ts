import { afterEach, describe, expect, it } from 'vitest';
import {
  LIVING_DOCS,
  type MapperAnswer,
  renderLivingDocs,
} from '../../source/engine/cycle/mapper/living-docs.js';
import {
  BASE_FILES,
  CycleRepo,
  plan,
  SEED,
  scripted,
  spec,
  track,
  writes,
} from '../support/cycle-project.js';

// Seed 003 P12: "WORKFLOW.md contains smart loading map": the living docs it names for the track's
// type, or for the areas a task's files are in (the first format, still read), go into that
// task's packet (FILES_TO_LOAD) and so into the implementer's prompt.

let repo: CycleRepo;
afterEach(() => repo?.dispose());

/** The first format of the map (by paths only), as files written before the track types hold it. */
const BY_PATHS: MapperAnswer['loading_map'] = [
  { area: 'src', paths: ['src/'], docs: ['PATTERNS.md', 'PITFALLS.md'] },
  { area: 'docs', paths: ['docs/'], docs: ['GLOSSARY.md'] },
  { area: 'all', paths: ['*'], docs: ['TECH_STACK.md'] },
];

function livingDocs(map: MapperAnswer['loading_map'] = BY_PATHS): Record<string, string> {
  const answer: MapperAnswer = {
    docs: Object.fromEntries(
      LIVING_DOCS.map((d) => [d, `# ${d}\n- ${d.replace('.md', '').toLowerCase()} fact for the builder\n`]),
    ) as MapperAnswer['docs'],
    loading_map: map,
  };
  const files = renderLivingDocs(answer);
  return Object.fromEntries(Object.entries(files).map(([name, text]) => [`specs/p12/${name}`, text]));
}

describe('the loading map feeds the task packet', () => {
  it('the docs named for the task area are loaded after the planned files; others are not', async () => {
    repo = await CycleRepo.create({ ...BASE_FILES, ...SEED, ...livingDocs() });
    const { runners, calls } = scripted({
      planner: [track(), spec(), plan([{ id: 'T1' }])],
      implementer: [writes({ 'src/greet.js': "module.exports = (n) => 'Hello, ' + n + '!';\n" })],
    });
    await repo.cycles(runners, (o) => o.action === 'implement_task', 8);
    expect(repo.state().task.files_to_load.slice(0, 4)).toEqual([
      { path: 'src/greet.js', why: 'planned modify target' },
      { path: 'specs/p12/PATTERNS.md', why: 'living doc for src (WORKFLOW.md loading map)' },
      { path: 'specs/p12/PITFALLS.md', why: 'living doc for src (WORKFLOW.md loading map)' },
      { path: 'specs/p12/TECH_STACK.md', why: 'living doc for all (WORKFLOW.md loading map)' },
    ]);
    const packet = repo.read('specs/tracks/greet/tasks/TASK_001.md');
    expect(packet).toContain(
      '- path: specs/p12/PATTERNS.md | why: living doc for src (WORKFLOW.md loading map)',
    );
    expect(packet).not.toContain('GLOSSARY.md');
    const implementer = calls.find((c) => c.role === 'implementer');
    expect(implementer?.request.userPrompt).toContain('patterns fact for the builder');
    expect(implementer?.request.userPrompt).not.toContain('glossary fact for the builder');
  });

  // Seed 003 P12: "smart loading map (track type -> relevant docs subset)": the planner names the
  // track's type (TRACK_TYPE), and the docs for that type (and for every track) are loaded.
  it("the docs for the track's type are loaded, not those of other types", async () => {
    const map: MapperAnswer['loading_map'] = [
      { track: 'feature', docs: ['PRODUCT.md', 'GLOSSARY.md'] },
      { track: 'bugfix', docs: ['PITFALLS.md', 'RISKS.md'] },
      { track: '*', docs: ['TECH_STACK.md'] },
    ];
    repo = await CycleRepo.create({ ...BASE_FILES, ...SEED, ...livingDocs(map) });
    const { runners, calls } = scripted({
      planner: [track('greet', 'TRACK_TYPE=bugfix\n'), spec(), plan([{ id: 'T1' }])],
      implementer: [writes({ 'src/greet.js': "module.exports = (n) => 'Hello, ' + n + '!';\n" })],
    });
    await repo.cycles(runners, (o) => o.action === 'implement_task', 8);
    expect(repo.state().track.type).toBe('bugfix');
    expect(repo.state().task.files_to_load.slice(0, 4)).toEqual([
      { path: 'src/greet.js', why: 'planned modify target' },
      { path: 'specs/p12/PITFALLS.md', why: 'living doc for track type bugfix (WORKFLOW.md loading map)' },
      { path: 'specs/p12/RISKS.md', why: 'living doc for track type bugfix (WORKFLOW.md loading map)' },
      { path: 'specs/p12/TECH_STACK.md', why: 'living doc for every track (WORKFLOW.md loading map)' },
    ]);
    const implementer = calls.find((c) => c.role === 'implementer');
    expect(implementer?.request.userPrompt).toContain('risks fact for the builder');
    expect(implementer?.request.userPrompt).not.toContain('product fact for the builder');
  });

  it('without living docs (greenfield) the packet is as before', async () => {
    repo = await CycleRepo.create();
    const { runners } = scripted({ planner: [track(), spec(), plan([{ id: 'T1' }])] });
    await repo.cycles(runners, (o) => o.action === 'generate_task', 6);
    expect(repo.state().task.files_to_load.map((f) => f.path)).toEqual([
      'src/greet.js',
      'tests/greet.test.js',
    ]);
  });
});
