import * as z from 'zod';

/**
 * Schema kinds whose JSON Schema step looks itself up by identity (zod's `toJSONSchema` keys what
 * it has seen by the schema object, and these find themselves through their own closure, which
 * holds the built schema, not this proxy): wrapping one makes `relais init`'s schema files fail.
 */
const SELF_LOOKUP_KINDS = new Set([
  'optional',
  'nullable',
  'nonoptional',
  'default',
  'prefault',
  'catch',
  'pipe',
  'readonly',
  'promise',
  'lazy',
]);

/**
 * A zod schema built on its first use instead of when its module loads (issue 17: building every
 * schema of protocol/ at import was a large part of `relais status`'s own time, though it parses
 * three or four files). Typed as the schema itself, so callers, `z.infer` and other schemas use it
 * as they did; every property read, method call and `instanceof` goes to the built schema.
 *
 * The same schema either way: `build` runs once and its result is kept, so a schema nested in
 * several others is still one object, and parsing is exactly what zod does with the built one
 * (test/unit/schema-files.test.ts checks the generated JSON Schemas against the committed ones).
 * Only for object, union, array, enum and plain value schemas: a wrapper kind (above) or a schema
 * with metadata (kept in zod's registry by object identity) is refused when it is built.
 */
export function lazySchema<T extends z.ZodType>(build: () => T): T {
  let built: T | undefined;
  const schema = (): T => {
    if (built === undefined) built = checkedLazy(build());
    return built;
  };
  return new Proxy({} as T, {
    get: (_target, key) => Reflect.get(schema(), key),
    set: (_target, key, value) => Reflect.set(schema(), key, value),
    has: (_target, key) => Reflect.has(schema(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(schema()),
    ownKeys: () => Reflect.ownKeys(schema()),
    // Reported as configurable: a proxy may not report a non-configurable property its (empty)
    // target lacks. Nothing in zod or Relais redefines a schema's properties.
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(schema(), key);
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
  });
}

/**
 * Builds lazily made schemas now (reading any property builds one): for a caller with time to
 * spare (the tick, while its orchestrator thinks) before those schemas are needed on a path that
 * is waited for. Parsing is unchanged; only when the building happens moves.
 */
export function buildSchemasNow(schemas: readonly z.ZodType[]): void {
  for (const schema of schemas) void schema._zod;
}

function checkedLazy<T extends z.ZodType>(built: T): T {
  const kind = built._zod.def.type;
  if (SELF_LOOKUP_KINDS.has(kind) || z.globalRegistry.has(built))
    throw new Error(`lazySchema cannot hold a ${kind} schema or one with metadata: build it at import`);
  return built;
}
