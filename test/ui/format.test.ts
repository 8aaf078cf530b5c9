import { describe, expect, test } from 'vitest';
import { spendOfBudget, usd } from '../../source/ui/format/money.js';
import {
  displayLine,
  displayLines,
  fitTo,
  flatten,
  MAX_LINE_CHARS,
  padStartTo,
  truncate,
  widthOf,
  wrapText,
} from '../../source/ui/format/text.js';
import { ago, duration, stopwatch } from '../../source/ui/format/time.js';

describe('display lines from untrusted text', () => {
  test('colour and cursor escape sequences are removed, and every other control', () => {
    expect(displayLine('\u001b[31mred\u001b[0m and \u001b]0;title\u0007plain')).toBe('red and plain');
    expect(displayLine('bell\u0007here')).toBe('bellhere');
  });

  test('hostile text: clipboard writes, screen clears, C1 controls and resets leave nothing behind', () => {
    expect(displayLine('copy \u001b]52;c;cm0gLXJmIH4=\u0007me')).toBe('copy me');
    expect(displayLine('copy \u001b]52;c;cm0gLXJmIH4=\u001b\\me')).toBe('copy me');
    expect(displayLine('\u001b[2J\u001b[Hclean\u001bc\u001b(B')).toBe('clean');
    expect(displayLine('8-bit \u009b2J\u009d0;title\u009cCSI')).toBe('8-bit CSI');
    expect(displayLine('unterminated \u001b]52;c;AAAA')).toBe('unterminated ');
    expect(flatten('two\nlines\u0007')).toBe('two ⏎ lines');
  });

  test('a carriage return keeps what the terminal would show; tabs become spaces', () => {
    expect(displayLine('10%\r50%\r100% done')).toBe('100% done');
    expect(displayLine('windows line\r')).toBe('windows line');
    expect(displayLine('a\tb')).toBe('a  b');
  });

  test('a huge line is cut to the cap', () => {
    const line = displayLine('x'.repeat(5_000_000));
    expect(line.length).toBe(MAX_LINE_CHARS);
    expect(line.endsWith('…')).toBe(true);
  });

  test('a block splits on newlines', () => {
    expect(displayLines('one\ntwo\r\nthree')).toEqual(['one', 'two', 'three']);
  });
});

describe('terminal widths', () => {
  test('wide characters count two columns', () => {
    expect(widthOf('日本')).toBe(4);
    expect(truncate('日本語のテキスト', 7)).toBe('日本語…');
    expect(widthOf(truncate('日本語のテキスト', 7))).toBeLessThanOrEqual(7);
  });

  test('fitTo pads or cuts to an exact width; padStartTo right-aligns', () => {
    expect(fitTo('abc', 5)).toBe('abc  ');
    expect(fitTo('abcdefgh', 5)).toBe('abcd…');
    expect(padStartTo('12s', 6)).toBe('   12s');
    expect(truncate('anything', 0)).toBe('');
  });

  test('wrapText wraps on words and marks what it cuts', () => {
    expect(wrapText('the quick brown fox jumps', 10, 5)).toEqual(['the quick', 'brown fox', 'jumps']);
    const cut = wrapText('the quick brown fox jumps over the lazy dog', 10, 2);
    expect(cut).toHaveLength(2);
    expect(cut[1]?.endsWith('…')).toBe(true);
  });
});

describe('times and money', () => {
  test('durations are short and stable', () => {
    expect(duration(950)).toBe('0.9s');
    expect(duration(12_300)).toBe('12s');
    expect(duration(184_000)).toBe('3m04s');
    expect(duration(3_720_000)).toBe('1h02m');
    expect(duration(-5)).toBe('0.0s');
  });

  test('stopwatch and ago', () => {
    expect(stopwatch(192_000)).toBe('03:12');
    expect(stopwatch(3_723_000)).toBe('1:02:03');
    expect(ago(1_000, 5_000)).toBe('4s ago');
    expect(ago(0, 125_000)).toBe('2m05s ago');
  });

  test('spend against a budget', () => {
    expect(usd(0.0421)).toBe('$0.0421');
    expect(usd(12.5)).toBe('$12.50');
    expect(spendOfBudget(0.42, 5)).toBe('$0.4200 / $5.00 (8%)');
    expect(spendOfBudget(0.42, null)).toBe('$0.4200');
  });
});
