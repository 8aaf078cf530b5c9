import { describe, expect, it } from 'vitest';
import { paragraphs } from '../../source/engine/workflow/qa-phase.js';

// The newcomer's pass, defect 25: the QA gate kept the report's own line breaks, then wrapped each
// line again, so a paragraph read "...cover the rules of" / "the spec." as two short rows.

describe("the QA summary's paragraphs", () => {
  it("joins a paragraph's soft line breaks, keeps list items and headings apart, drops blank lines", () => {
    const report = [
      'slugify is a pure function with no I/O: no OWASP Top 10 exposure.',
      'Three tests cover the rules of',
      'the spec. No blocking issue; one minor note below.',
      '',
      '- Minor: the regex could be',
      '  compiled once.',
      '- Tests: 3 pass.',
      '1. first',
      '| a | b |',
      '| 1 | 2 |',
    ];
    expect(paragraphs(report)).toEqual([
      'slugify is a pure function with no I/O: no OWASP Top 10 exposure. Three tests cover the rules of the spec. No blocking issue; one minor note below.',
      '- Minor: the regex could be compiled once.',
      '- Tests: 3 pass.',
      '1. first',
      '| a | b |',
      '| 1 | 2 |',
    ]);
  });

  it('two paragraphs stay two', () => {
    expect(paragraphs(['One', 'line.', '', 'Two.'])).toEqual(['One line.', 'Two.']);
  });
});
