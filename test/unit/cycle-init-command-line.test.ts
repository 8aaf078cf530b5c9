import { describe, expect, it } from 'vitest';
import { readCommandLine } from '../../source/cli/help/command-line.js';

// `relais cycle init` is a two-word command with its own options; `relais cycle` keeps its own.

describe('reading `relais cycle init`', () => {
  it('is its own command: the folder stays the second word of input, its flags are read', () => {
    const line = readCommandLine(['cycle', 'init', './app', '--answers', 'a.json', '--confirm']);
    expect(line).toMatchObject({
      kind: 'command',
      command: 'cycle init',
      input: ['cycle init', './app'],
      flags: { answers: 'a.json', confirm: true, remap: false },
    });
  });

  it("refuses the cycle's own options, and leaves `relais cycle` as it was", () => {
    expect(readCommandLine(['cycle', 'init', '--loop'])).toMatchObject({
      kind: 'usage',
      message: expect.stringContaining('relais cycle init: unknown option --loop'),
    });
    expect(readCommandLine(['cycle', './app', '--loop'])).toMatchObject({
      kind: 'command',
      command: 'cycle',
      input: ['cycle', './app'],
      flags: { loop: true },
    });
    expect(readCommandLine(['cycle', '--answers', 'a.json'])).toMatchObject({ kind: 'usage' });
  });
});
