// An esbuild plugin for the bundled CLI (scripts/bundle-cli.mjs): Ink's two text caches, bounded.
//
// Ink 6 keeps two module-level caches that never drop an entry: measure-text.js (a Map from every
// text it measured to its size) and wrap-text.js (an object keyed by text, width and wrap mode).
// Every line of agent output that reaches the screen enters both, so the app's retained heap grew
// with the volume of output (issue 17: about 2 MB per 10 MB). They are private to Ink, so the
// bundle swaps each for a cache that starts over once it holds MAX_ENTRIES texts: what is on
// screen is measured again on the next frame, which is what Ink did before caching.
//
// node_modules is left untouched (no postinstall): the change exists only in dist/cli. The plugin
// checks the exact lines it replaces and fails the build if Ink's source changed, so an Ink
// update can never drop the bound silently.

import { readFile } from 'node:fs/promises';

/** Several screens' worth of distinct texts: a frame draws at most a few hundred. */
export const MAX_ENTRIES = 2000;

const BOUNDED_MAP = `new (class BoundedCache extends Map {
  set(key, value) {
    if (this.size >= ${MAX_ENTRIES}) this.clear();
    return super.set(key, value);
  }
})()`;

const PATCHES = [
  {
    file: /[\\/]ink[\\/]build[\\/]measure-text\.js$/,
    replace: [['const cache = new Map();', `const cache = ${BOUNDED_MAP};`]],
  },
  {
    file: /[\\/]ink[\\/]build[\\/]wrap-text\.js$/,
    replace: [
      ['const cache = {};', `const cache = ${BOUNDED_MAP};`],
      ['const cachedText = cache[cacheKey];', 'const cachedText = cache.get(cacheKey);'],
      ['cache[cacheKey] = wrappedText;', 'cache.set(cacheKey, wrappedText);'],
    ],
  },
];

export const inkBoundedCaches = {
  name: 'ink-bounded-caches',
  setup(build) {
    for (const patch of PATCHES) {
      build.onLoad({ filter: patch.file }, async (args) => {
        let contents = await readFile(args.path, 'utf8');
        for (const [from, to] of patch.replace) {
          if (contents.split(from).length !== 2)
            throw new Error(`ink-bounded-caches: "${from}" is not in ${args.path} exactly once; Ink changed`);
          contents = contents.replace(from, to);
        }
        return { contents, loader: 'js' };
      });
    }
  },
};
