import { describe, expect, it } from 'vitest';
import { LineSplitter, TailBuffer } from '../../source/engine/supervise/line-splitter.js';

describe('LineSplitter', () => {
  it('joins lines split across chunks, multi-byte characters included', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter(1000, (l) => lines.push(l));
    const bytes = Buffer.from('héllo wörld\nsecond line\nlast');
    for (let i = 0; i < bytes.length; i += 3) splitter.push(bytes.subarray(i, i + 3));
    splitter.end();
    expect(lines).toEqual(['héllo wörld', 'second line', 'last']);
  });

  it('a line over the cap is cut, flagged, and the next line is intact', () => {
    const out: Array<[string, boolean]> = [];
    const splitter = new LineSplitter(4, (l, t) => out.push([l, t]));
    splitter.push(Buffer.from('abcdefgh'));
    splitter.push(Buffer.from('ij\nok\n'));
    expect(out).toEqual([
      ['abcd', true],
      ['ok', false],
    ]);
  });
});

describe('TailBuffer', () => {
  it('keeps the last bytes and counts all of them', () => {
    const tail = new TailBuffer(5);
    tail.push(Buffer.from('hello '));
    tail.push(Buffer.from('world'));
    expect(tail.text()).toBe('world');
    expect(tail.total).toBe(11);
  });
});
