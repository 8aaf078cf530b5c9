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
 * The cache is used only when it is exactly what the build wrote for exactly this bundle:
 * - its first 32 bytes are the SHA-256 of the text V8 compiles (the bundle in its wrapper): V8's own
 *   check compares the source's length, not its text, so a rebuilt bundle of the same length could
 *   otherwise run the old bytecode;
 * - the next 32 are the SHA-256 of V8's data after them: Node 20's V8 does not check its own
 *   checksum, and a damaged cache can run other code or crash V8 outright;
 * - V8 refuses a cache from another V8 version or other flags (another Node, or `NODE_OPTIONS`
 *   such as --max-old-space-size), and the text is compiled as before; a short, missing or
 *   damaged cache is a normal compile.
 * It is read from the installed package, as the bundle is, and never written at run time: nothing
 * an agent in the sandbox could write is ever loaded as code. Whoever can write the package's
 * files can change the bundle itself; the hashes are against damage and staleness, not them.
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
const HEADER_BYTES = 2 * HASH_BYTES;
/** Node's own CommonJS wrapper, with the two names the build rewrites `import()` and `import.meta.url` to. */
const WRAPPER_HEAD =
  '(function (exports, require, module, __filename, __dirname, __relaisImport, __relaisModuleUrl) {';
const WRAPPER_TAIL = '\n})';

export function cacheFileOf(file: string): string {
  return `${file}.v8-cache`;
}

/**
 * Runs the CommonJS bundle at `file` (built with `import()` rewritten to `__relaisImport`, and
 * `import.meta.url` to `__relaisModuleUrl`) and returns its exports.
 */
export function loadCompiledBundle(file: string, importer: Importer): CompiledBundle {
  const bytes = readFileSync(file);
  // Hashed as bytes (a 1 MB string would be encoded to UTF-8 for the hash first: 5 ms more).
  const hash = createHash('sha256').update(WRAPPER_HEAD).update(bytes).update(WRAPPER_TAIL).digest();
  const source = `${WRAPPER_HEAD}${bytes.toString('utf8')}${WRAPPER_TAIL}`;
  const cached = cacheMatching(cacheFileOf(file), hash);
  const script = new Script(source, {
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
    codeCache: () => {
      const data = script.createCachedData();
      return Buffer.concat([hash, sha256(data), data]);
    },
  };
}

function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

/** V8's data from the cache file when it was made from exactly this text and is whole; else null. */
function cacheMatching(path: string, sourceHash: Buffer): Buffer | null {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch {
    return null;
  }
  if (file.length <= HEADER_BYTES || !file.subarray(0, HASH_BYTES).equals(sourceHash)) return null;
  const data = file.subarray(HEADER_BYTES);
  return file.subarray(HASH_BYTES, HEADER_BYTES).equals(sha256(data)) ? data : null;
}
