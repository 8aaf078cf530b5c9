import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Script } from 'node:vm';

/**
 * A CommonJS bundle run with V8's code cache (issue 17: `relais status` within 2x `node -e 0`, and
 * a tick's own start).
 * Node 20 compiles every module from its text at every start, and gives ES modules no code cache
 * (22's `module.enableCompileCache` is what this does by hand). The build writes the bundle's
 * bytecode beside it (`<file>.v8-cache`, made by running the command once), so a start
 * deserialises instead of parsing and compiling: about 15 ms of the status command's 125, about
 * 90 ms of CPU of a tick's (scripts/command-bundles.mjs makes the files and the caches).
 *
 * The cache can only make the start faster, never change what runs:
 * - it is used only when its first 32 bytes are the SHA-256 of the bundle's bytes (V8's own check
 *   compares the source's length, not its text, so a rebuilt bundle of the same length could
 *   otherwise run the old bytecode);
 * - V8 refuses it when its own version or flags differ (another Node), and then compiles the text;
 * - a missing, short or unreadable cache file is a normal compile.
 * It is read from the installed package, as the bundle is, and never written at run time: nothing
 * an agent in the sandbox could write is ever loaded as code.
 */
export interface CompiledBundle {
  /** What the bundle put on `module.exports`. */
  readonly exports: Record<string, unknown>;
  /** True when V8 took the cache; false when it compiled the text (no cache, stale or refused). */
  readonly cacheAccepted: boolean;
  /** The cache to write for this bundle now (header and V8's data): the build calls it after a run. */
  codeCache(): Buffer;
}

/** Dynamic `import()` for the bundle: a script run by node:vm has none of its own in Node 20. */
export type Importer = (specifier: string) => Promise<unknown>;

const HASH_BYTES = 32;

export function cacheFileOf(file: string): string {
  return `${file}.v8-cache`;
}

/**
 * Runs the CommonJS bundle at `file` (built with `import()` rewritten to `__relaisImport`, and
 * `import.meta.url` to `__relaisModuleUrl`) and returns its exports.
 */
export function loadCompiledBundle(file: string, importer: Importer): CompiledBundle {
  const bytes = readFileSync(file);
  const hash = createHash('sha256').update(bytes).digest();
  const cached = cacheMatching(cacheFileOf(file), hash);
  const script = new Script(wrapped(bytes.toString('utf8')), {
    filename: file,
    ...(cached ? { cachedData: cached } : {}),
  });
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  const module = { exports: {} as Record<string, unknown> };
  run.call(
    module.exports,
    module.exports,
    createRequire(file),
    module,
    file,
    dirname(file),
    importer,
    pathToFileURL(file).href,
  );
  return {
    exports: module.exports,
    cacheAccepted: cached !== null && script.cachedDataRejected === false,
    codeCache: () => Buffer.concat([hash, script.createCachedData()]),
  };
}

/** Node's own CommonJS wrapper, with the two names the build rewrites to. */
function wrapped(source: string): string {
  return `(function (exports, require, module, __filename, __dirname, __relaisImport, __relaisModuleUrl) {${source}\n})`;
}

/** V8's data from the cache file when it was made from exactly these bytes; null otherwise. */
function cacheMatching(path: string, hash: Buffer): Buffer | null {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch {
    return null;
  }
  if (data.length <= HASH_BYTES || !data.subarray(0, HASH_BYTES).equals(hash)) return null;
  return data.subarray(HASH_BYTES);
}
