import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { userText } from '../../source/demo/relais-script.js';
import {
  type ModelRequest,
  type ScriptedModel,
  startScriptedModel,
} from '../../source/demo/scripted-model-server.js';
import { LIVING_DOCS } from '../../source/engine/cycle/mapper/living-docs.js';
import { TestProject } from '../support/project.js';
import { CLAUDE, claudeEnv } from '../support/real-claude.js';

// Issue 18, seed 003 P12: `relais cycle init` through the built CLI with the REAL Claude Code
// binary as the codebase mapper (only the model behind it is scripted, on 127.0.0.1). Claude Code
// runs it read-only in plan mode; its real Read tool reads the repository and the result goes back
// to the model; the runner validates the JSON answer, writes the seven living docs with the
// loading map, shows them whole before the brainstorm, and commits them with the seed docs.

let project: TestProject | null = null;
let model: ScriptedModel | null = null;
afterEach(async () => {
  await model?.close();
  model = null;
  project?.dispose();
  project = null;
});

const BROWNFIELD = {
  'package.json': `${JSON.stringify({ name: 'greeter', type: 'module', scripts: { test: 'node --test tests/' } }, null, 2)}\n`,
  'README.md': '# greeter\n\nGreets people by name.\n',
  'src/greet.js': "export const greet = (n) => 'Hello, ' + n;\n",
  'src/farewell.js': "export const farewell = (n) => 'Bye, ' + n;\n",
  'tests/greet.test.js': "import { greet } from '../src/greet.js';\n",
};

const ANSWERS = {
  vision: 'A tiny greeting library that people enjoy.',
  users: 'Developers who need greetings in their CLI tools.',
  success: ['greet("A") returns "Hello, A"'],
  stack: 'Node 20, plain JavaScript, no dependencies.',
  requirements: [{ id: 'R1', text: 'greet(name) says hello' }],
  phases: [{ id: 'P1', name: 'basics', goal: 'Greet', requirements: ['R1'], success: ['greet works'] }],
};

const isMapper = (request: ModelRequest) => request.system.includes('You are the Relais codebase mapper');

/** What the scripted model answers once it has read package.json: one JSON object. */
function mapperAnswer(scripts: string): string {
  const doc = (title: string, line: string) => `# ${title}\n- ${line}\n`;
  return JSON.stringify({
    docs: {
      'TECH_STACK.md': doc('Tech stack', `Node ESM; scripts from package.json: ${scripts}`),
      'PATTERNS.md': doc('Patterns', 'one function per file under src/'),
      'PITFALLS.md': doc('Pitfalls', 'ESM only: imports need the .js extension'),
      'RISKS.md': doc('Risks', 'farewell() has no test'),
      'WORKFLOW.md': doc('Workflow', 'npm test runs node --test tests/'),
      'PRODUCT.md': doc('Product', 'greets people by name'),
      'GLOSSARY.md': doc('Glossary', 'greeting: the text greet() returns'),
    },
    loading_map: [
      { track: 'feature', docs: ['PRODUCT.md', 'PATTERNS.md'] },
      { track: 'bugfix', docs: ['PITFALLS.md', 'RISKS.md'] },
      { track: '*', docs: ['TECH_STACK.md', 'WORKFLOW.md'] },
      { area: 'src', paths: ['src/'], docs: ['PATTERNS.md'] },
    ],
  });
}

describe('e2e: relais cycle init with the real claude binary as the mapper', () => {
  it('maps a brownfield repository read-only, writes the living docs, shows them, then the brainstorm', async () => {
    const p = TestProject.create(BROWNFIELD, (config) => {
      config.claude_code_cli.command = CLAUDE;
    });
    project = p;
    model = await startScriptedModel((request) => {
      if (!isMapper(request)) return { text: 'OK' };
      const turn = request.messages.filter((m) => m.role === 'assistant').length;
      if (turn === 0)
        return {
          text: 'Reading the manifest first.',
          toolUses: [{ name: 'Read', input: { file_path: join(p.root, 'package.json') } }],
        };
      // The real Read tool's result is in the conversation: the answer quotes what it read.
      const read = /"test": "([^"]+)"/.exec(JSON.stringify(request.messages).replaceAll('\\"', '"'));
      return { text: mapperAnswer(read?.[1] ?? 'not read') };
    });
    const answers = join(p.base, 'answers.json');
    writeFileSync(answers, JSON.stringify(ANSWERS));
    const run = await p.cli(['cycle', 'init', '--answers', answers, '--confirm'], {
      env: claudeEnv(model.url),
    }).done;
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('Codebase: brownfield');
    expect(run.stdout).toMatch(
      /Living docs: 7 files in specs\/p12\/, \d+ tokens, written by the mapper \(1 call\(s\)\)/,
    );

    const mapper = model.requests.filter(isMapper);
    expect(mapper.length).toBe(2); // the Read turn, then the answer
    // Read-only: Claude Code offered the model the mapper's three tools and none that writes.
    const tools = mapper[0]?.toolNames ?? [];
    expect(tools).toEqual(expect.arrayContaining(['Glob', 'Grep', 'Read']));
    for (const writer of ['Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'Bash'])
      expect(tools).not.toContain(writer);
    // The runner's facts are in the prompt; the real Read tool's result came back to the model.
    expect(userText(mapper[0] as ModelRequest)).toContain('--- FACTS (from the runner) ---');
    expect(JSON.stringify(mapper[1]?.messages)).toContain('tool_result');
    expect(p.read('specs/p12/TECH_STACK.md')).toContain('scripts from package.json: node --test tests/');

    for (const d of LIVING_DOCS) expect(p.read(`specs/p12/${d}`)).toMatch(/^# /);
    const workflow = p.read('specs/p12/WORKFLOW.md');
    expect(workflow).toContain('- track=bugfix | docs=PITFALLS.md, RISKS.md');
    expect(workflow).toContain('- area=src | paths=src/ | docs=PATTERNS.md');
    expect(p.json('specs/p12/P12_DONE')).toMatchObject({ kind: 'brownfield', degraded: null });
    // Shown whole before the brainstorm's documents.
    expect(run.stdout).toContain(`----- specs/p12/RISKS.md -----\n${p.read('specs/p12/RISKS.md')}`);
    expect(run.stdout.indexOf('----- end of the living docs -----')).toBeLessThan(
      run.stdout.indexOf('----- specs/VISION.md -----'),
    );
    expect(p.read('specs/PROJECT.md')).toContain('specs/p12/TECH_STACK.md');
    // One commit with the living docs and the seed docs: the cycle starts from a clean tree.
    expect(p.status()).toBe('');
    expect(p.git('show', '--name-only', '--format=', 'HEAD')).toContain('specs/p12/GLOSSARY.md');
  }, 180_000); // one real claude process on a loaded machine: slow, not a wait
});
