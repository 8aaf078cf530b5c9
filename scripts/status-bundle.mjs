// `relais status` (and `ralphy status`) as one file of its own (issue 17: start-up within 2x
// `node -e 0`). Node 20 resolves, reads, compiles and links ES modules one file at a time: the split
// bundle had status read 31 files (main.js and 30 chunks: each module lands in the chunk of the
// exact set of commands that reach it), and each file costs about 0.6 ms of CPU on its own
// (measured: 30 one-line modules against one file holding the same lines, +19 ms).
//
// What the status command runs is bundled into its file: its own code, the reads behind it, the
// cycle's state reader (loaded when relais/cycle/STATE.json exists) and, for --preflight, the
// sandbox and the start conditions. Every other dynamic import in that graph (the front door's
// other commands, execa, conf) points at the split bundle's chunk for the same module: status never
// calls those, and if it ever did they would still work (loading their own copy of what they
// share). The build fails when a dynamic import has no chunk to point at.
//
// Three files, so that the command's bytecode can be cached (source/cli/code-cache.ts):
// - dist/cli/status-command.cjs: the command as CommonJS, whose `import()` calls go through the
//   loader (a script run by node:vm has no `import()` of its own in Node 20);
// - dist/cli/status-command.js: the loader, what main.js imports;
// - dist/cli/status-command.cjs.v8-cache: V8's bytecode after one status run in a scratch
//   repository, made here at build time and never at run time.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { build } from 'esbuild';

export const STATUS_ENTRY = 'source/cli/commands/status.ts';
const OUT_NAME = 'status-command';

/** Dynamic imports the status command itself runs: bundled into its file, evaluated when called. */
const RUN_BY_STATUS = new Set([
  'source/engine/status/project-status.ts',
  'source/engine/cycle/state.ts',
  'source/engine/cycle/codes.ts',
  'source/engine/sandbox/sandbox.ts',
  'source/engine/session/preflight.ts',
]);

/** For the split build: main.ts's `import('./commands/status.js')` loads the one-file command. */
export const statusCommandApart = {
  name: 'status-command-apart',
  setup(b) {
    b.onResolve({ filter: /^\.\/commands\/status\.js$/ }, (args) =>
      args.importer.endsWith(join('source', 'cli', 'main.ts'))
        ? { path: `./${OUT_NAME}.js`, external: true }
        : null,
    );
  },
};

/** Marks an `import()` the bundle keeps, for `throughLoader` to hand to the loader's importer. */
const DYNAMIC = 'relais-loader-import:';

/** Every other dynamic import points at the split build's chunk whose entry is that module. */
function otherImportsFromChunks(root, outDir, splitMetafile, external) {
  const chunkOf = new Map();
  for (const [output, meta] of Object.entries(splitMetafile.outputs))
    if (meta.entryPoint) chunkOf.set(meta.entryPoint, join(root, output));
  return {
    name: 'status-other-imports-from-chunks',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind !== 'dynamic-import' || args.pluginData?.inner) return null;
        if (args.path.startsWith('node:') || external.some((name) => args.path.startsWith(name)))
          return { path: `${DYNAMIC}${args.path}`, external: true };
        const found = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: { inner: true },
        });
        if (found.errors.length > 0) return { errors: found.errors };
        const source = relative(root, found.path);
        if (RUN_BY_STATUS.has(source)) return null;
        const chunk = chunkOf.get(source);
        if (!chunk)
          return { errors: [{ text: `status bundle: no chunk of the split build holds ${source}` }] };
        return { path: `${DYNAMIC}./${relative(outDir, chunk)}`, external: true };
      });
    },
  };
}

/**
 * The command's text with each kept `import("...")` calling the loader's importer instead. Any
 * other `import(` left in the text fails the build: run by node:vm, it would throw when reached.
 */
function throughLoader(text) {
  const marked = new RegExp(`\\bimport\\("${DYNAMIC}([^"]+)"\\)`, 'g');
  const out = text.replace(marked, (_all, specifier) => `__relaisImport(${JSON.stringify(specifier)})`);
  // Also `import.meta`, other than its url (defined for the build): CommonJS has none.
  const left = out.match(/\bimport\s*\(|\bimport\.meta\b/);
  if (left)
    throw new Error(
      `status bundle: ${left[0]} is left in ${OUT_NAME}.cjs (at ${out.indexOf(left[0])}): CommonJS run by the loader has none`,
    );
  return out;
}

/** Builds the status command's three files after the split build, from that build's metafile. */
export async function bundleStatusCommand({ root, outDir, splitMetafile, options }) {
  const commandFile = join(outDir, `${OUT_NAME}.cjs`);
  rmSync(cacheFileOf(commandFile), { force: true });
  const { outputFiles } = await build({
    ...options,
    format: 'cjs',
    // The code as an ES module would run it; `require` is the loader's (no banner making one).
    banner: { js: '"use strict";' },
    define: { 'import.meta.url': '__relaisModuleUrl' },
    entryPoints: [STATUS_ENTRY],
    outfile: commandFile,
    splitting: false,
    write: false,
    plugins: [...options.plugins, otherImportsFromChunks(root, outDir, splitMetafile, options.external)],
  });
  for (const file of outputFiles)
    writeFileSync(file.path, file.path === commandFile ? throughLoader(file.text) : file.contents);
  if (!outputFiles.some((file) => file.path === commandFile))
    throw new Error(`status bundle: dist/cli/${OUT_NAME}.cjs was not written`);

  await build({
    ...options,
    stdin: {
      contents: LOADER,
      resolveDir: root,
      sourcefile: `${OUT_NAME}-loader.js`,
      loader: 'js',
    },
    outfile: join(outDir, `${OUT_NAME}.js`),
    splitting: false,
  });
  writeCodeCache(root, outDir);
}

/** dist/cli/status-command.js: loads the CommonJS command with its cache; main.js imports it. */
const LOADER = `import { fileURLToPath } from 'node:url';
import { loadCompiledBundle } from './source/cli/code-cache.ts';
const bundle = loadCompiledBundle(fileURLToPath(new URL('./${OUT_NAME}.cjs', import.meta.url)), (specifier) => import(specifier));
export const statusCommand = bundle.exports.statusCommand;
/** For the build and the tests: whether V8 took the cache, and the cache to write. */
export const codeCacheAccepted = bundle.cacheAccepted;
export const codeCache = () => bundle.codeCache();
`;

/**
 * Runs \`relais status\` once in a scratch repository with a config, in a child Node, and writes
 * the bytecode it compiled. A failure leaves no cache (status then compiles as it did before) and
 * fails the build: the suite's status tests expect the cache to be taken.
 */
function writeCodeCache(root, outDir) {
  const repo = mkdtempSync(join(tmpdir(), 'relais-build-cache-'));
  try {
    const git = (...args) => {
      const run = spawnSync('git', ['-c', 'user.name=build', '-c', 'user.email=build@relais', ...args], {
        cwd: repo,
        encoding: 'utf8',
      });
      if (run.status !== 0) throw new Error(`status bundle: git ${args[0]} failed: ${run.stderr}`);
    };
    git('init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'README.md'), 'cache\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'initial');
    writeFileSync(join(repo, 'relais.config.json'), readFileSync(join(root, 'relais.config.json')));
    const loader = join(outDir, `${OUT_NAME}.js`);
    const script = `
      import { writeFileSync } from 'node:fs';
      const { statusCommand, codeCache } = await import(${JSON.stringify(loader)});
      const quiet = { write: () => true };
      await statusCommand({ cwd: ${JSON.stringify(repo)}, env: process.env, stdout: quiet, stderr: quiet }, undefined, { preflight: false, json: false });
      writeFileSync(${JSON.stringify(cacheFileOf(join(outDir, `${OUT_NAME}.cjs`)))}, codeCache());
    `;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: repo,
      encoding: 'utf8',
    });
    if (run.status !== 0)
      throw new Error(`status bundle: the run that makes the code cache failed: ${run.stderr}`);
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

/** The cache's name beside the bundle (as source/cli/code-cache.ts reads it). */
function cacheFileOf(file) {
  return `${file}.v8-cache`;
}
