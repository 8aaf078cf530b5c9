import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { lazySchema } from '../../source/engine/protocol/lazy-schema.js';

// Issue 17: protocol/'s schemas are built on first use. The proxy must behave as the schema it
// builds, be built once, and refuse the kinds zod's JSON Schema step finds by object identity.

describe('lazySchema', () => {
  it('builds nothing until first used, then once', () => {
    let builds = 0;
    const schema = lazySchema(() => {
      builds++;
      return z.strictObject({ a: z.int().min(0) });
    });
    expect(builds).toBe(0);
    expect(schema.parse({ a: 1 })).toEqual({ a: 1 });
    expect(schema.safeParse({ a: -1 }).success).toBe(false);
    expect(schema.safeParse({ a: 1, b: 2 }).success).toBe(false);
    expect(builds).toBe(1);
  });

  it('rejects and accepts exactly what the schema built eagerly does, nested in others too', () => {
    const eager = z.strictObject({ n: z.int().min(0), s: z.enum(['x', 'y']) });
    const lazy = lazySchema(() => z.strictObject({ n: z.int().min(0), s: z.enum(['x', 'y']) }));
    const eagerOuter = z.strictObject({ inner: eager, list: z.array(eager).max(2) });
    const lazyOuter = z.strictObject({ inner: lazy, list: z.array(lazy).max(2) });
    const docs = [
      { inner: { n: 0, s: 'x' }, list: [] },
      { inner: { n: -1, s: 'x' }, list: [] },
      { inner: { n: 1, s: 'z' }, list: [] },
      { inner: { n: 1, s: 'y', extra: true }, list: [] },
      {
        inner: { n: 1, s: 'y' },
        list: [
          { n: 2, s: 'x' },
          { n: 3, s: 'y' },
          { n: 4, s: 'x' },
        ],
      },
      'not an object',
    ];
    for (const doc of docs) {
      const a = eagerOuter.safeParse(doc);
      const b = lazyOuter.safeParse(doc);
      expect(b.success).toBe(a.success);
      expect(b.error?.issues).toEqual(a.error?.issues);
    }
    expect(lazy instanceof z.ZodObject).toBe(true);
    expect(Object.keys(lazy.shape)).toEqual(['n', 's']);
    expect(z.toJSONSchema(lazyOuter)).toEqual(z.toJSONSchema(eagerOuter));
  });

  it('refuses a wrapper kind or a schema with metadata, when it is built', () => {
    const wrapped = lazySchema(() => z.strictObject({ a: z.string() }).prefault({ a: '' }));
    expect(() => wrapped.parse(undefined)).toThrow(/cannot hold a prefault schema/);
    const described = lazySchema(() => z.array(z.string()).meta({ uniqueItems: true }));
    expect(() => described.parse([])).toThrow(/metadata/);
  });
});
