import { describe, expect, it } from 'vitest';
import { filesOutsideFence } from '../../source/engine/workflow/task-credit.js';

// A task whose Files the config's fence leaves out stops the workflow before any step is paid
// for (defect 3 of the newcomer's pass). The Files line is the spec-agent's prose as well: only
// words that can be nothing but paths may stop it.

describe('the files of a task outside the fence', () => {
  it('names the path outside, never a word of the sentence around it', () => {
    const paths = { files: ['src/a.ts', 'and', 'package.json', '(new)', 'tests'], scope: null };
    expect(filesOutsideFence(paths, ['src/**'])).toEqual(['package.json']);
  });

  it('a glob or a path inside the fence is not outside', () => {
    const paths = { files: ['src/**/*.ts', 'src/lib/x.ts'], scope: null };
    expect(filesOutsideFence(paths, ['src/**'])).toEqual([]);
  });
});
