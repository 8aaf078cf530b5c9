import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { copiesPrompt, readExitSignal } from '../../source/engine/workflow/exit-signal.js';
import { fill } from '../../source/engine/workflow/phase-helpers.js';
import { REPO_ROOT } from '../support/project.js';

// Issue 4: completion is EXIT_SIGNAL in the agent's own final answer, never "a copy of the
// prompt". The shipped prompts carry no bare status line an echo could hand back, and the runner
// refuses a status block that is the prompt's own text (projects keep older prompt copies).

const VALUES = {
  SPEC_FILE: 'specs/SPEC.md',
  TASKS_FILE: 'specs/TASKS.md',
  QA_FILE: 'specs/QA_REPORT.md',
  PRD_FILE: 'PRD.md',
  PRD: '# Greeting service\n\n## Objective\nGreet people by name, politely.',
  PLANNING: '',
  STACK: 'typescript; tests: npm test',
  SPEC: '# Spec\n\nTwo functions: greet and bye.',
  TASKS: '## Task 1: Greet by name\n- **Status**: pending\n- **Files**: src/a.ts',
  TEST_COMMAND: 'npm test',
  CHANGES: 'src/a.ts | 2 +-',
  NOTE: '',
};

const ROLES = ['spec', 'dev', 'qa'] as const;
const shipped = (role: string) =>
  fill(readFileSync(join(REPO_ROOT, 'prompts', `${role}.txt`), 'utf8'), VALUES);

/** A project's copy of a prompt from before this change: the instruction, then the bare line. */
const OLD_ENDINGS: Record<(typeof ROLES)[number], string> = {
  spec: 'When you have finished your task, end your answer with a line of its own:\nEXIT_SIGNAL: true\n',
  dev: 'When every task is completed, end your answer with a line of its own:\nEXIT_SIGNAL: true\n',
  qa: 'When the report is written, end your answer with a line of its own:\nEXIT_SIGNAL: true\n',
};
const oldStyle = (role: (typeof ROLES)[number]) => {
  const text = shipped(role);
  const instruction = text.lastIndexOf('\nWhen ');
  return `${text.slice(0, instruction + 1)}${OLD_ENDINGS[role]}`;
};

describe('the shipped prompts hold no status line of their own', () => {
  it.each(ROLES)('%s.txt rendered and handed back whole is not done', (role) => {
    const prompt = shipped(role);
    expect(prompt).toContain('"EXIT_SIGNAL: true"');
    expect(readExitSignal(prompt)).toBe('absent');
    expect(readExitSignal(`Here is my answer.\n\n${prompt}`)).toBe('absent');
  });
});

describe('a status block copied from the prompt', () => {
  it.each(ROLES)('an echo of an old-style %s prompt (bare status line) is a copy', (role) => {
    const prompt = oldStyle(role);
    // Without the copy rule this echo would count: its last line is a status line of its own.
    expect(readExitSignal(prompt)).toBe('true');
    expect(copiesPrompt(prompt, prompt)).toBe(true);
    expect(copiesPrompt(`Sure, here it is:\n\n${prompt}`, prompt)).toBe(true);
    // Only the closing instruction, copied with its status line.
    expect(copiesPrompt(OLD_ENDINGS[role], prompt)).toBe(true);
  });

  it('whitespace does not hide a copy', () => {
    const prompt = oldStyle('spec');
    const reflowed = prompt.replace(/\n/g, '\n\n').replace(/ /g, '  ');
    expect(copiesPrompt(reflowed, prompt)).toBe(true);
  });

  it.each(ROLES)('a genuine %s answer is not a copy, even of an old-style prompt', (role) => {
    const prompt = oldStyle(role);
    const answers = [
      'I wrote specs/SPEC.md and specs/TASKS.md: two tasks, greet and bye, each with its tests.\n\nEXIT_SIGNAL: true',
      'EXIT_SIGNAL: true',
      'Done.\nEXIT_SIGNAL: true',
      // It quotes the instruction, then reports in its own words.
      `The prompt said: "${OLD_ENDINGS[role].split('\n')[0]}"\nSo here is my report: both tasks are completed and the tests pass.\n\n**EXIT_SIGNAL: true**`,
    ];
    for (const answer of answers) {
      expect(readExitSignal(answer)).toBe('true');
      expect(copiesPrompt(answer, prompt)).toBe(false);
    }
  });

  it('an answer without a status line is never called a copy', () => {
    const prompt = oldStyle('qa');
    expect(copiesPrompt('I could not finish: the tests do not run.', prompt)).toBe(false);
  });
});
