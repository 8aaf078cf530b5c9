import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/project.js';

// cli/code-cache.ts runs a CommonJS bundle with V8's bytecode cache. Each load here is a fresh Node
// (V8 keeps compiled scripts in memory within one process, and its flags differ in vitest's
// workers), running the built module as the CLI does. The cache may only make a start faster: a
// stale or broken one must leave the bundle's current code running.

const CODE_CACHE = pathToFileURL(join(REPO_ROOT, 'dist/cli/code-cache.js')).href;

let dir: string;
let bundle: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'relais-code-cache-'));
  bundle = join(dir, 'bundle.cjs');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function writeBundle(answer: number): void {
  writeFileSync(
    bundle,
    `"use strict";\nexports.value = async () => ({ answer: ${answer}, url: __relaisModuleUrl, platform: (await __relaisImport('node:os')).platform(), file: __filename });\n`,
  );
}

/** Loads the bundle in a new Node; with `write`, writes the cache it would keep afterwards. */
function load(
  write = false,
  nodeArgs: string[] = [],
): {
  accepted: boolean;
  value: { answer: number; url: string; platform: string; file: string };
} {
  const script = `
    import { writeFileSync } from 'node:fs';
    const { loadCompiledBundle, cacheFileOf } = await import(${JSON.stringify(CODE_CACHE)});
    const loaded = loadCompiledBundle(${JSON.stringify(bundle)}, (specifier) => import(specifier));
    const value = await loaded.exports.value();
    if (${write}) writeFileSync(cacheFileOf(${JSON.stringify(bundle)}), loaded.codeCache());
    console.log(JSON.stringify({ accepted: loaded.cacheAccepted, value }));
  `;
  const run = spawnSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

describe('a CommonJS bundle with a code cache', () => {
  it('runs without a cache, then takes the cache it wrote, with the same result', () => {
    writeBundle(42);
    const first = load(true);
    expect(first.accepted).toBe(false);
    expect(first.value).toEqual({
      answer: 42,
      url: pathToFileURL(bundle).href,
      platform: process.platform,
      file: bundle,
    });
    const second = load();
    expect(second.accepted).toBe(true);
    expect(second.value).toEqual(first.value);
  });

  it('runs the new code when the bundle changed to text of the same length', () => {
    writeBundle(42);
    load(true);
    writeBundle(43);
    const after = load();
    // V8 alone would take this cache (it compares the length only) and answer 42.
    expect(after.accepted).toBe(false);
    expect(after.value.answer).toBe(43);
  });

  it('compiles the text when the cache is broken, short or refused by V8', () => {
    writeBundle(42);
    load(true);
    const cache = `${bundle}.v8-cache`;
    const good = readFileSync(cache);
    // One byte of V8's data changed, the header as written: Node 20's V8 would run what it says
    // (or crash), so the header's hash of the data refuses it first.
    const flipped = Buffer.from(good);
    const at = 64 + Math.floor((good.length - 64) / 2);
    flipped[at] = (flipped[at] ?? 0) ^ 0xff;
    writeFileSync(cache, flipped);
    expect(load()).toMatchObject({ accepted: false, value: { answer: 42 } });
    // Shorter than its header.
    writeFileSync(cache, good.subarray(0, 10));
    expect(load()).toMatchObject({ accepted: false, value: { answer: 42 } });
    // Whole and matching, but made under other V8 flags: V8 itself refuses it.
    writeFileSync(cache, good);
    expect(load(false, ['--max-old-space-size=3000'])).toMatchObject({
      accepted: false,
      value: { answer: 42 },
    });
    // Back to the good one: taken again.
    expect(load()).toMatchObject({ accepted: true, value: { answer: 42 } });
  });
});
