import { describe, expect, test } from 'vitest';
import { LineBuffer } from '../../source/ui/store/line-buffer.js';

describe('LineBuffer', () => {
  test('keeps every line while under the cap, addressed by seq', () => {
    const buffer = new LineBuffer<string>(4);
    for (const line of ['a', 'b', 'c']) buffer.push(line);
    expect([buffer.size, buffer.total, buffer.dropped]).toEqual([3, 3, 0]);
    expect([buffer.firstSeq, buffer.lastSeq]).toEqual([0, 2]);
    expect(buffer.range(0, 10)).toEqual(['a', 'b', 'c']);
    expect(buffer.at(1)).toBe('b');
  });

  test('drops the oldest lines past the cap and counts them', () => {
    const buffer = new LineBuffer<number>(3);
    for (let i = 0; i < 10; i++) buffer.push(i);
    expect([buffer.size, buffer.total, buffer.dropped]).toEqual([3, 10, 7]);
    expect([buffer.firstSeq, buffer.lastSeq]).toEqual([7, 9]);
    expect(buffer.range(0, 100)).toEqual([7, 8, 9]);
    expect(buffer.at(6)).toBeUndefined();
    expect(buffer.at(8)).toBe(8);
    expect(buffer.range(8, 8)).toEqual([8]);
  });

  test('an empty buffer has no lines and lastSeq -1', () => {
    const buffer = new LineBuffer<string>(2);
    expect([buffer.firstSeq, buffer.lastSeq, buffer.size]).toEqual([0, -1, 0]);
    expect(buffer.range(0, 5)).toEqual([]);
  });

  test('refuses a capacity below one', () => {
    expect(() => new LineBuffer(0)).toThrow(/capacity/);
  });
});
