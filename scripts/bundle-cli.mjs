// `npm run build`, after tsc: bundles the CLI into dist/cli/main.js and its chunks (issue 17), and
// the bin, dist/cli/main.cjs (scripts/cjs-front-door.mjs).
// Node 20 loads ES modules one file at a time (resolve, read, compile, link), and a command used to
// load 150-300 of them (zod alone is 95): a bundle is one entry file plus one chunk per command and
// the chunks they share, so `relais status` reads a handful of files instead of hundreds. Each
// command is still loaded only when it runs (dynamic imports become separate chunks).
// tsc's own output stays in dist/ beside it: tests and tools import single modules from there.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { bundleFrontDoor, loaderFileOf } from './cjs-front-door.mjs';
import { bundleCommands, COMMAND_BUNDLES, commandsApart } from './command-bundles.mjs';
import { inkBoundedCaches } from './ink-bounded-caches.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist/cli');

// Zod's namespace re-exports all 64 of its locales; Relais speaks English only (its default
// locale is loaded by zod itself), and parsing the others cost ~20 ms at every start.
const englishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${join('node_modules', 'zod')}`)
        ? { path: 'zod-locales', namespace: 'relais' }
        : null,
    );
    b.onLoad({ filter: /^zod-locales$/, namespace: 'relais' }, () => ({
      contents: "export { default as en } from 'zod/v4/locales/en.js';",
      resolveDir: ROOT,
      loader: 'js',
    }));
  },
};

rmSync(join(OUT, 'chunks'), { recursive: true, force: true });
/** What the split build and the one-file commands (scripts/command-bundles.mjs) share. */
const options = {
  absWorkingDir: ROOT,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  // Loaded only by the fleet commands (DBOS, PostgreSQL) or by Ink's devtools when asked for:
  // large, CommonJS with optional requires of their own, and never on a tick's path.
  external: ['@dbos-inc/dbos-sdk', 'pg', 'react-devtools-core'],
  // CommonJS dependencies (react, ink's) may call require() for Node's own modules. Made on first
  // use: createRequire costs a few ms, and most chunks never call it.
  banner: {
    js: "import { createRequire as __relaisCreateRequire } from 'node:module'; let __relaisRequire; const require = (id) => (__relaisRequire ??= __relaisCreateRequire(import.meta.url))(id);",
  },
  plugins: [englishOnly, inkBoundedCaches],
  logLevel: 'warning',
};
const { metafile } = await build({
  ...options,
  metafile: true,
  // app.js: the Ink app as the CLI loads it, for bench/tui-streaming.mjs to measure what users run.
  entryPoints: { main: 'source/cli/main.ts', app: 'source/ui/index.ts' },
  outdir: OUT,
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  plugins: [...options.plugins, commandsApart],
});
// The bin first: the command bundles' warm-up runs `relais init` through it.
await bundleFrontDoor({
  root: ROOT,
  outDir: OUT,
  splitMetafile: metafile,
  options,
  commands: COMMAND_BUNDLES,
});
await bundleCommands({ root: ROOT, outDir: OUT, splitMetafile: metafile, options });
// The bin takes the same caches through its CommonJS loaders: a plain node must accept them there too.
for (const { name } of COMMAND_BUNDLES) {
  const loader = join(OUT, loaderFileOf(name));
  const { NODE_OPTIONS: _flags, ...plainEnv } = process.env;
  const check = spawnSync(
    process.execPath,
    ['-e', `process.stdout.write(String(require(${JSON.stringify(loader)}).codeCacheAccepted))`],
    { encoding: 'utf8', env: plainEnv },
  );
  if (check.stdout !== 'true')
    throw new Error(
      `bundle: a plain node refuses ${name}'s code cache through ${loaderFileOf(name)}: ${check.stderr}`,
    );
}

// The app sets NODE_ENV before React loads (ui/react-mode.ts): React picks its build once, when
// first required, and its development build keeps a measure per render forever. In a bundle that
// holds only while react-mode's line runs before React's first require in the same chunk, so the
// build fails if chunking ever moves them apart.
const outputs = Object.entries(metafile.outputs);
const holding = (input) => outputs.filter(([, o]) => Object.keys(o.inputs).some((i) => i.endsWith(input)));
const [modeChunk] = holding('source/ui/react-mode.ts');
const reactChunks = holding('node_modules/react/index.js');
const text = modeChunk ? readFileSync(join(ROOT, modeChunk[0]), 'utf8') : '';
const modeAt = text.indexOf('process.env.NODE_ENV ??= "production"');
const firstRequire = text.search(/^var import_react\w* = __toESM\(require_react\(\)/m);
if (
  reactChunks.length !== 1 ||
  reactChunks[0][0] !== modeChunk?.[0] ||
  modeAt < 0 ||
  !(modeAt < firstRequire)
)
  throw new Error('bundle: ui/react-mode.ts no longer runs before React loads (see scripts/bundle-cli.mjs)');

// Zod is imported as a namespace (`import * as z from 'zod'`) so esbuild keeps only what Relais
// calls; one `import { z } from 'zod'` keeps all of it (the JSON Schema importer among it, about
// 180 KB more that every command compiles). The importer is never called, so its presence says so.
if (holding('node_modules/zod/v4/classic/from-json-schema.js').length > 0)
  throw new Error(
    "bundle: all of zod was kept; import it as `import * as z from 'zod'` (see scripts/bundle-cli.mjs)",
  );
