import { describe, expect, it } from 'vitest';
import { readCommandLine } from '../../source/cli/help/command-line.js';
import { COMMAND_HELP, COMMAND_NAMES } from '../../source/cli/help/commands.js';
import { renderCommandHelp, renderGeneralHelp } from '../../source/cli/help/render.js';

const RUNNABLE = COMMAND_NAMES.filter((name) => name !== 'help');

/** A pasted example as argv: words, "quoted words", and nothing from a shell redirect on. */
function argvOf(example: string): string[] {
  const words = [...example.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
  const redirect = words.findIndex((w) => w === '>' || w === '|');
  return (redirect === -1 ? words : words.slice(0, redirect)).slice(1);
}

describe('the help table', () => {
  it.each(RUNNABLE)(
    '%s has usage, summary, details, options and examples that are valid command lines',
    (name) => {
      const help = COMMAND_HELP[name];
      expect(help.summary.length).toBeGreaterThan(20);
      expect(help.details.length).toBeGreaterThan(0);
      for (const usage of help.usage) expect(usage.startsWith(name)).toBe(true);
      expect(help.examples.length).toBeGreaterThan(0);
      for (const example of help.examples) {
        expect(example).toMatch(new RegExp(`^(relais|ralphy) ${name}\\b`));
        const line = readCommandLine(argvOf(example));
        expect(line, example).toMatchObject({ kind: 'command', command: name });
      }
      // Every option a usage line names is one the command accepts, and the other way round.
      const usageFlags = new Set(help.usage.flatMap((u) => [...u.matchAll(/--([\w-]+)/g)].map((m) => m[1])));
      expect([...usageFlags].sort()).toEqual(help.options.map((o) => o.name).sort());
    },
  );

  it.each(RUNNABLE)('%s --help renders its usage, every option and an example', (name) => {
    const text = renderCommandHelp(name, COMMAND_HELP[name]);
    expect(text).toContain(`Usage\n  relais ${name}`);
    for (const option of COMMAND_HELP[name].options) expect(text).toContain(`--${option.name}`);
    expect(text).toContain('-h, --help');
    expect(text).toMatch(/Examples?\n {2}\$ (relais|ralphy) /);
  });

  it('the general help lists every command with its summary', () => {
    const text = renderGeneralHelp('9.9.9');
    expect(text).toContain('Relais 9.9.9');
    for (const name of COMMAND_NAMES) expect(text).toContain(`  ${name}`);
  });
});

describe('reading the command line', () => {
  it.each([
    [['--help'], null],
    [['-h'], null],
    [['help'], null],
    [['help', 'run'], 'run'],
    [['run', '--help'], 'run'],
    [['run', './dir', '-h'], 'run'],
    [['init', '--force', '--help'], 'init'],
    [['loop', '--mode', 'sideways', '--yolo', '--help'], 'loop'],
    [['cycle', '--resume', '-h'], 'cycle'],
  ])('%j asks for help on %s, whatever else is on the line', (argv, topic) => {
    expect(readCommandLine(argv)).toEqual({ kind: 'help', topic });
  });

  it('--version asks for the version', () => {
    expect(readCommandLine(['--version'])).toEqual({ kind: 'version' });
  });

  it('no command shows the general help as a usage error', () => {
    expect(readCommandLine([])).toMatchObject({ kind: 'usage', showGeneralHelp: true });
  });

  it.each([
    [['deploy'], 'Unknown command: deploy'],
    [['help', 'deploy'], 'Unknown command: deploy'],
    [['deploy', '--help'], 'Unknown command: deploy'],
    [['run', '--yolo'], 'relais run: unknown option --yolo\nSee `relais run --help`.'],
    // An option of another command is unknown to this one.
    [['run', '--yes'], 'relais run: unknown option --yes'],
    [['status', '--force'], 'relais status: unknown option --force'],
    [['loop', '--max-ticks', 'many'], 'relais loop: --max-ticks needs a number (got "many")'],
    [['loop', '--mode'], 'relais loop: --mode needs a value'],
    [['run', '--json=yes'], 'relais run: --json takes no value'],
  ])('%j is a usage error: %s', (argv, message) => {
    const line = readCommandLine(argv);
    expect(line.kind).toBe('usage');
    expect(line.kind === 'usage' && line.message).toContain(message);
  });

  it('gives a command its camelCased flags with defaults, and its positional words', () => {
    expect(readCommandLine(['loop', 'proj', '--max-ticks', '3', '--json'])).toEqual({
      kind: 'command',
      command: 'loop',
      input: ['loop', 'proj'],
      flags: expect.objectContaining({ json: true, maxTicks: 3, mode: 'milestone', yes: false }),
    });
    expect(
      readCommandLine(['cycle', '--resume', '--verdict', 'no', '--reason', 'flaky', '--cycle-id', 'c1']),
    ).toMatchObject({
      flags: { resume: true, verdict: 'no', reason: 'flaky', cycleId: 'c1', loop: false },
    });
  });
});
