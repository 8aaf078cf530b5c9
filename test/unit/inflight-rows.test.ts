import { describe, expect, it } from 'vitest';
import {
  type FingerprintRow,
  fingerprintRowsFromNul,
  fingerprintRowsToNul,
  inflightSchema,
} from '../../source/engine/protocol/inflight.js';

// INFLIGHT.json keeps the ignored files' fingerprints as rows of one NUL-separated string
// (issue 17): the schema checks it with one pattern, and an older file's arrays still read.

const row = (path: string, over: Partial<FingerprintRow> = {}): FingerprintRow => ({
  path,
  size: 10_000,
  mtime_ms: 1_764_448_123_456.789,
  ino: 9_007_199_254_740_000,
  dir: false,
  ...over,
});

function inflight(rows: string, arrays: { ignored?: unknown[]; ignored_inside?: unknown[] } = {}) {
  return {
    run_id: '20261129T000000Z-abcdef',
    base_commit: 'a'.repeat(40),
    branch_ref: 'refs/heads/main',
    started_at: '2026-11-29T00:00:00.000Z',
    git_dir_identities: {},
    git_roots: [],
    git_files: [],
    outside_config_file: null,
    committed: null,
    flagged: {},
    replace_refs: [],
    ignored: arrays.ignored ?? [],
    ignored_inside: arrays.ignored_inside ?? [],
    ignored_rows_nul: rows,
    ignored_unwatched: [],
    unresolved: [],
  };
}

describe('fingerprint rows in INFLIGHT.json', () => {
  it('give back every row as written: odd paths, folders, files inside folders, fractional and huge numbers', () => {
    const ignored = [
      row('src/a b.o'),
      row('build/', { dir: true, size: 4096 }),
      row('weird\nname\twith tabs é.o', { size: 0, mtime_ms: -5.5 }),
    ];
    const inside = [row('node_modules/x/index.js', { size: 21, mtime_ms: 1e21, ino: 3 })];
    const text = fingerprintRowsToNul(ignored, inside);
    const parsed = inflightSchema.parse(inflight(text));
    expect(fingerprintRowsFromNul(parsed.ignored_rows_nul)).toEqual({ ignored, inside });
    expect(fingerprintRowsFromNul('')).toEqual({ ignored: [], inside: [] });
  });

  it('are refused when a row is cut short, has no path, an unknown kind or a field that is no number', () => {
    const good = fingerprintRowsToNul([row('a.o'), row('b.o')], []);
    expect(inflightSchema.safeParse(inflight(good)).success).toBe(true);
    const bad = [
      good.split('\0').slice(0, -1).join('\0'),
      `${good}\0`,
      ['e', '', '1', '2', '3'].join('\0'),
      ['x', 'a.o', '1', '2', '3'].join('\0'),
      ['e', 'a.o', 'big', '2', '3'].join('\0'),
      ['e', 'a.o', '-1', '2', '3'].join('\0'),
      ['e', 'a.o', '1', '2', '3.5'].join('\0'),
      ['e', 'a.o', '1', 'NaN', '3'].join('\0'),
    ];
    for (const text of bad)
      expect(inflightSchema.safeParse(inflight(text)).success, JSON.stringify(text)).toBe(false);
  });

  it('a million rows are checked without a throw (one regular expression over them overflowed V8)', () => {
    const one = fingerprintRowsToNul([row('a')], []);
    const many = Array.from({ length: 1_000_000 }, () => one).join('\0');
    expect(inflightSchema.safeParse(inflight(many)).success).toBe(true);
    expect(inflightSchema.safeParse(inflight(`${many}\0e`)).success).toBe(false);
  });

  it('an INFLIGHT.json of an older version, with arrays and no rows, still reads', () => {
    const old = inflight('', { ignored: [row('a.o')], ignored_inside: [row('nm/x.js')] }) as Record<
      string,
      unknown
    >;
    delete old.ignored_rows_nul;
    const parsed = inflightSchema.parse(old);
    expect(parsed.ignored_rows_nul).toBe('');
    expect(parsed.ignored).toEqual([row('a.o')]);
  });
});
