import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { demoPlanner } from './demo-planner.js';
import { type RelaisModelPlan, userText } from './relais-script.js';
import type { ModelReply } from './scripted-model-server.js';

/**
 * What the scripted model answers in `npm run demo` (`ralphy start` on examples/demo-project):
 * the planner asks one question (demo-planner.ts); the spec-agent writes SPEC.md and TASKS.md with Claude Code's Write tool; task 1's first tick
 * tries to "make the tests pass" by rewriting the test and claims success anyway: the fence refuses
 * the write before it happens (Claude Code's scope hook), the runner's own test run fails, and the
 * tick stops and rolls back; the next tick fixes the code; task 2 adds punctuation handling and its test; the
 * qa-agent writes its report. Every tool call is executed by the real Claude Code binary.
 */

const SPEC = `# Specification: slugify titles

## Principles
- Small, readable functions; no dependencies.
- Behaviour is fixed by tests in tests/; the tests are the contract.

## User stories
- As a blogger, I get a clean URL slug from any title.

## Business rules
1. Leading and trailing spaces are ignored.
2. Runs of whitespace become one dash.
3. Punctuation is dropped; letters and digits (any script) are kept.

## Architecture
One ES module, src/slugify.js, exporting slugify(title). Tests run with node --test.
`;

const TASKS = `# Tasks

## Task 1: Trim and collapse spaces
- **Status**: pending
- **Description**: slugify trims the title and turns runs of whitespace into one dash.
- **Files**: src/slugify.js

## Task 2: Drop punctuation
- **Status**: pending
- **Description**: slugify removes punctuation, so "Hello, World!" becomes "hello-world"; add a test.
- **Files**: src/slugify.js, tests/slugify.test.js
`;

const QA = `# QA report

## Summary
slugify is a pure function with no I/O: no OWASP Top 10 exposure. Three tests cover the rules of
the spec. No blocking issue; one minor note below.

## Findings
- Minor: very long titles are not truncated; URL length limits are left to the caller.
`;

const scope = (allowed: string[]) => ({
  allowed_globs: allowed,
  forbidden_globs: ['relais/**', '.git/**'],
  allow_new_files: false,
  allow_lockfile_changes: false,
});

function task(id: string, intent: string, allowed: string[], instructions: string): string {
  return JSON.stringify({
    task_id: id,
    milestone_id: 'M1-slugs',
    task_kind: 'execute',
    intent,
    scope: scope(allowed),
    diff_limits: { max_files_touched: 2, max_lines_changed: 20 },
    verification: { fast: ['test'], slow: [] },
    builder: { mode: 'claude_code', max_turns: 6, instructions },
  });
}

function builderResult(summary: string, files: string[]): ModelReply {
  return { text: JSON.stringify({ summary, files_intended: files, commands_ran: [], notes: [] }) };
}

/**
 * `resume`: the run goes on from wherever an abort left it (`npm run demo -- --resume <folder>`),
 * so the orchestrator answers from the code on disk (task 1 not done yet: its honest fix; done:
 * task 2) and the builder from the task id it is given, instead of in call order.
 */
export function demoPlan(repo: string, options: { resume?: boolean } = {}): RelaisModelPlan {
  const plan = firstRunPlan(repo);
  if (!options.resume) return plan;
  const [cheat, fix, punctuation] = plan.orchestrator as readonly string[];
  const builders = plan.builder as ReadonlyArray<readonly ModelReply[]>;
  return {
    ...plan,
    orchestrator: () => {
      const trimmed = readFileSync(join(repo, 'src/slugify.js'), 'utf8').includes('.trim()');
      return (trimmed ? punctuation : fix) ?? '';
    },
    builder: (request) => {
      const ids = [cheat, fix, punctuation].map((t) => JSON.parse(t ?? '{}').task_id as string);
      const text = userText(request);
      // The longest id first: "T1-trim-again" also contains "T1-trim".
      const index = [1, 2, 0].find((i) => text.includes(`"${ids[i]}"`)) ?? 1;
      return builders[index] ?? [];
    },
  };
}

function firstRunPlan(repo: string): RelaisModelPlan {
  const source = join(repo, 'src/slugify.js');
  const test = join(repo, 'tests/slugify.test.js');
  return {
    planner: demoPlanner,
    spec: [
      [
        {
          text: 'Reading the PRD, then writing the specification.',
          toolUses: [{ name: 'Write', input: { file_path: join(repo, 'specs/SPEC.md'), content: SPEC } }],
        },
        { toolUses: [{ name: 'Write', input: { file_path: join(repo, 'specs/TASKS.md'), content: TASKS } }] },
        { text: 'specs/SPEC.md and specs/TASKS.md (2 tasks) are written.\n\nEXIT_SIGNAL: true' },
      ],
    ],
    orchestrator: [
      task(
        'T1-trim',
        'Trim titles and collapse spaces in slugify',
        ['src/**'],
        'In src/slugify.js, trim the title and replace runs of whitespace with one dash.',
      ),
      task(
        'T1-trim-again',
        'Fix slugify itself: trim and collapse spaces',
        ['src/**'],
        'The test is right; change src/slugify.js only: title.trim() and /\\s+/g.',
      ),
      task(
        'T2-punctuation',
        'Drop punctuation in slugify, with a test',
        ['src/**', 'tests/**'],
        'In src/slugify.js, remove punctuation before joining words; add a test for "Hello, World!".',
      ),
    ],
    builder: [
      [
        { text: 'Let me look at the test first.', toolUses: [{ name: 'Read', input: { file_path: test } }] },
        {
          text: 'Adjusting the expectation so the suite passes.',
          toolUses: [
            {
              name: 'Edit',
              input: {
                file_path: test,
                old_string: "'many-spaces-here'",
                new_string: "slugify('  Many   spaces here ')",
              },
            },
          ],
        },
        builderResult('Implemented trimming; all tests pass', ['src/slugify.js']),
      ],
      [
        { text: 'Reading src/slugify.js.', toolUses: [{ name: 'Read', input: { file_path: source } }] },
        {
          text: 'Trimming and collapsing whitespace.',
          toolUses: [
            {
              name: 'Edit',
              input: {
                file_path: source,
                old_string: "title.toLowerCase().replace(/ /g, '-')",
                new_string: "title.trim().toLowerCase().replace(/\\s+/g, '-')",
              },
            },
          ],
        },
        builderResult('slugify trims and collapses whitespace', ['src/slugify.js']),
      ],
      [
        {
          text: 'Reading the code and its tests.',
          toolUses: [
            { name: 'Read', input: { file_path: source } },
            { name: 'Read', input: { file_path: test } },
          ],
        },
        {
          text: 'Dropping punctuation, and a test for it.',
          toolUses: [
            {
              name: 'Edit',
              input: {
                file_path: source,
                old_string: ".toLowerCase().replace(/\\s+/g, '-')",
                new_string: ".toLowerCase().replace(/[^\\p{L}\\p{N}\\s-]/gu, '').replace(/\\s+/g, '-')",
              },
            },
            {
              name: 'Edit',
              input: {
                file_path: test,
                old_string: "test('trims and collapses repeated spaces'",
                new_string:
                  "test('drops punctuation', () => {\n  assert.equal(slugify('  Hello,   World! '), 'hello-world');\n});\n\ntest('trims and collapses repeated spaces'",
              },
            },
          ],
        },
        builderResult('slugify drops punctuation; test added', ['src/slugify.js', 'tests/slugify.test.js']),
      ],
    ],
    qa: [
      [
        { text: 'Reviewing the implementation.', toolUses: [{ name: 'Read', input: { file_path: source } }] },
        {
          toolUses: [{ name: 'Write', input: { file_path: join(repo, 'specs/QA_REPORT.md'), content: QA } }],
        },
        { text: 'The report is in specs/QA_REPORT.md: no blocking issue.\n\nEXIT_SIGNAL: true' },
      ],
    ],
  };
}
