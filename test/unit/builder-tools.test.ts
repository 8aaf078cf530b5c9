import { describe, expect, it } from 'vitest';
import { builderTools } from '../../source/engine/tick/build.js';
import { task } from '../support/project.js';

// Defect 3: Edit cannot create a file, so a task that may create files gets Claude Code's Write
// too (the scope hook fences it like Edit); any other task keeps the configured tools exactly.

const withNewFiles = (allow: boolean) =>
  task({
    scope: {
      allowed_globs: ['src/**'],
      forbidden_globs: [],
      allow_new_files: allow,
      allow_lockfile_changes: false,
    },
  }) as Parameters<typeof builderTools>[1];

describe('the builder tools', () => {
  it('adds Write when the task may create files', () => {
    expect(builderTools('Read,Edit,Glob,Grep,Bash', withNewFiles(true))).toEqual([
      'Read',
      'Edit',
      'Glob',
      'Grep',
      'Bash',
      'Write',
    ]);
  });

  it('keeps the configured set when it may not, or when Write is there already', () => {
    expect(builderTools('Read, Edit ,Bash', withNewFiles(false))).toEqual(['Read', 'Edit', 'Bash']);
    expect(builderTools('Read,Write', withNewFiles(true))).toEqual(['Read', 'Write']);
  });
});
