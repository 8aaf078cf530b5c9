// The CLI's bin, dist/cli/main.cjs: the front door (source/cli/main.ts) as one CommonJS file
// (issue 17). Node 20 starts its ES module loader for the first ES module a process loads, about
// 10 ms of every start (an empty .mjs against an empty .cjs: 100 against 87 ms here). `relais run`
// and `relais status` run their own code as CommonJS already (scripts/command-bundles.mjs), so with
// a CommonJS front door and the built-ins those bundles import lazily taken by `require`, a tick and
// a plain `relais status` load no ES module at all.
//
// - `run` and `status` come through `dist/cli/<name>-loader.cjs` (below), required;
// - every other command is the split build's chunk for it, loaded with a real `import()`: those
//   commands (the app, the workflow, the fleet) are ES modules and start the loader themselves.
// dist/cli/main.js, the same front door as an ES module, stays the split build's entry.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { build } from 'esbuild';
import { chunksOfSplitBuild, resolveAsEsbuildWould } from './command-bundles.mjs';

/** The CommonJS loader of each one-file command: what main.cjs requires for it. */
export const loaderFileOf = (name) => `${name}-loader.cjs`;

export async function bundleFrontDoor({ root, outDir, splitMetafile, options, commands }) {
  for (const command of commands) await bundleLoader(command, { root, outDir, options });
  const chunkOf = chunksOfSplitBuild(root, splitMetafile);
  const outfile = join(outDir, 'main.cjs');
  await build({
    ...options,
    format: 'cjs',
    // What `import.meta.url` is in an ES module (main.ts reads package.json beside it).
    // Strict, as the ES module it is built from; the directive must come first to count.
    banner: {
      js: '"use strict";\nvar __relaisModuleUrl = require("node:url").pathToFileURL(__filename).href;',
    },
    define: { 'import.meta.url': '__relaisModuleUrl' },
    logOverride: { 'empty-import-meta': 'error' },
    entryPoints: [join(root, 'source/cli/main.ts')],
    outfile,
    splitting: false,
    plugins: [...options.plugins, commandsThroughLoaders(root, outDir, chunkOf, commands)],
  });
  const [, second] = readFileSync(outfile, 'utf8').split('\n', 2);
  if (second !== '"use strict";') throw new Error(`front door: main.cjs does not start strict: ${second}`);
}

function commandsThroughLoaders(root, outDir, chunkOf, commands) {
  const byImport = new Map(commands.map((c) => [c.importedAs, c]));
  return {
    name: 'front-door-commands',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.namespace === 'relais-front-door') return { path: args.path, external: true };
        if (args.kind !== 'dynamic-import' || args.pluginData?.inner) return null;
        const command = byImport.get(args.path);
        if (command) return { path: command.name, namespace: 'relais-front-door' };
        const found = await resolveAsEsbuildWould(b, args);
        if (found.errors.length > 0) return { errors: found.errors };
        const chunk = chunkOf.get(relative(root, found.path));
        if (!chunk)
          return { errors: [{ text: `front door: no chunk of the split build holds ${args.path}` }] };
        return { path: `./${relative(outDir, chunk)}`, external: true };
      });
      // `(await import('./commands/run.js')).runCommand` becomes a require of the loader.
      b.onLoad({ filter: /.*/, namespace: 'relais-front-door' }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(`./${loaderFileOf(args.path)}`)});`,
        loader: 'js',
      }));
    },
  };
}

/**
 * dist/cli/<name>-loader.cjs: the command's bundle with its code cache (source/cli/code-cache.ts),
 * as the ES module loader `<name>.js` runs it, except that a Node built-in the bundle imports lazily
 * (`node:crypto` for the lock's and the atomic writes' names) is required: an `import()` would start
 * the ES module loader in a process that runs no ES module.
 */
async function bundleLoader(command, { root, outDir, options }) {
  await build({
    ...options,
    format: 'cjs',
    banner: { js: '"use strict";' },
    stdin: {
      contents: `const { join } = require('node:path');
const { loadCompiledBundle } = require('./source/cli/code-cache.ts');
const bundle = loadCompiledBundle(join(__dirname, ${JSON.stringify(`${command.name}.cjs`)}), (specifier) =>
  specifier.startsWith('node:') ? Promise.resolve(require(specifier)) : import(specifier),
);
exports.${command.exportName} = bundle.exports.${command.exportName};
/** For the build and the tests: whether V8 took the cache. */
exports.codeCacheAccepted = bundle.cacheAccepted;
`,
      resolveDir: root,
      sourcefile: `${command.name}-loader.cjs`,
      loader: 'js',
    },
    outfile: join(outDir, loaderFileOf(command.name)),
    splitting: false,
  });
}
