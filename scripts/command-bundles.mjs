// `relais status` and `relais run` (also `ralphy ...`) as one file each, run from V8 bytecode
// (issue 17: status within 2x `node -e 0`; a tick's overhead). Node 20 resolves, reads, compiles
// and links ES modules one file at a time: the split bundle had status read 31 files and a tick 46
// (each module lands in the chunk of the exact set of commands that reach it), each about 0.6 ms
// of CPU on its own, and it compiles every file from its text at every start.
//
// What a command runs is bundled into its file: its own code, the reads behind it, and the dynamic
// imports it calls (RUN_BY). Every other dynamic import in its graph (the front door's other
// commands, the full-screen app) points at the split bundle's chunk for the same module: the
// command does not call those in a plain or --json run, and when it does (the app, at a terminal)
// they still work, loading their own copy of the pure helpers they share. The build fails when a
// dynamic import has no chunk to point at.
//
// Three files a command, so that its bytecode can be cached (source/cli/code-cache.ts):
// - dist/cli/<name>.cjs: the command as CommonJS, whose `import()` calls go through the loader (a
//   script run by node:vm has no `import()` of its own in Node 20);
// - dist/cli/<name>.js: the loader, what main.js imports for the command (the bin, main.cjs,
//   requires its CommonJS twin, <name>-loader.cjs: scripts/cjs-front-door.mjs);
// - dist/cli/<name>.cjs.v8-cache: V8's bytecode after one run of the command in a scratch
//   repository, made here at build time and never at run time.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
// tsc has written dist/ before this runs (`npm run build`): the cache's name is the reader's own.
import { cacheFileOf } from '../dist/cli/code-cache.js';
import { writeInstantAgent } from './instant-agent.mjs';

/** The commands built apart, each with the dynamic imports it runs and how the build warms it. */
export const COMMAND_BUNDLES = [
  {
    name: 'status-command',
    entry: 'source/cli/commands/status.ts',
    importedAs: './commands/status.js',
    exportName: 'statusCommand',
    // The status itself; the cycle's state reader (when relais/cycle/STATE.json exists); for
    // --preflight, the sandbox and the start conditions.
    runBy: new Set([
      'source/engine/status/project-status.ts',
      'source/engine/cycle/state.ts',
      'source/engine/cycle/codes.ts',
      'source/engine/sandbox/sandbox.ts',
      'source/engine/session/preflight.ts',
    ]),
    warm: { args: [undefined, { preflight: false, json: false }], tick: false, order: 2 },
  },
  {
    name: 'run-command',
    entry: 'source/cli/commands/run.ts',
    importedAs: './commands/run.js',
    exportName: 'runCommand',
    // The tick (through the usage-limit waits), the process port's execa, the user's settings.
    runBy: new Set([
      'source/engine/tick/limit-waits.ts',
      'node_modules/execa/index.js',
      'source/engine/workspace/user-settings.ts',
    ]),
    warm: { args: [undefined, { json: false }], tick: true, order: 1 },
  },
];

/** For the split build: main.ts's `import('./commands/<x>.js')` loads the command's own loader. */
export const commandsApart = {
  name: 'commands-apart',
  setup(b) {
    for (const command of COMMAND_BUNDLES)
      b.onResolve({ filter: new RegExp(`^${command.importedAs.replace(/[./]/g, '\\$&')}$`) }, (args) =>
        args.importer.endsWith(join('source', 'cli', 'main.ts'))
          ? { path: `./${command.name}.js`, external: true }
          : null,
      );
  },
};

/** Marks an `import()` the bundle keeps, for `throughLoader` to hand to the loader's importer. */
const DYNAMIC = 'relais-loader-import:';

/** The split build's chunk of each module a dynamic import made an entry of, by its source path. */
export function chunksOfSplitBuild(root, splitMetafile) {
  const chunkOf = new Map();
  for (const [output, meta] of Object.entries(splitMetafile.outputs))
    if (meta.entryPoint) chunkOf.set(meta.entryPoint, join(root, output));
  return chunkOf;
}

/** What esbuild itself resolves an import to, from inside a plugin's onResolve (marked, not to loop). */
export function resolveAsEsbuildWould(b, args) {
  return b.resolve(args.path, {
    kind: args.kind,
    importer: args.importer,
    resolveDir: args.resolveDir,
    pluginData: { inner: true },
  });
}

/**
 * A module as `runBy` names it: a dependency from its `node_modules/` folder on, wherever that
 * folder is (a symlinked or hoisted one resolves outside the package: `../node_modules/execa/...`).
 */
function runByKey(root, path) {
  const source = relative(root, path);
  const at = source.lastIndexOf('node_modules/');
  return at >= 0 ? source.slice(at) : source;
}

/**
 * Every dynamic import not in `runBy` points at the split build's chunk whose entry is that module.
 * `matched` collects the `runBy` entries met, for the build to check that each one was.
 */
function otherImportsFromChunks(root, outDir, splitMetafile, external, runBy, matched) {
  const chunkOf = chunksOfSplitBuild(root, splitMetafile);
  return {
    name: 'command-other-imports-from-chunks',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind !== 'dynamic-import' || args.pluginData?.inner) return null;
        if (args.path.startsWith('node:') || external.some((name) => args.path.startsWith(name)))
          return { path: `${DYNAMIC}${args.path}`, external: true };
        const found = await resolveAsEsbuildWould(b, args);
        if (found.errors.length > 0) return { errors: found.errors };
        if (runBy.has(runByKey(root, found.path))) {
          matched.add(runByKey(root, found.path));
          return null;
        }
        const source = relative(root, found.path);
        const chunk = chunkOf.get(source);
        if (!chunk)
          return { errors: [{ text: `command bundle: no chunk of the split build holds ${source}` }] };
        return { path: `${DYNAMIC}./${relative(outDir, chunk)}`, external: true };
      });
    },
  };
}

/**
 * The command's text with each kept `import("...")` calling the loader's importer instead. Any
 * other `import(` or `import.meta` left in the text fails the build: run by node:vm it would throw
 * when reached (CommonJS has no `import.meta`; its url is defined for the build).
 */
function throughLoader(text, name) {
  const marked = new RegExp(`\\bimport\\("${DYNAMIC}([^"]+)"\\)`, 'g');
  const out = text.replace(marked, (_all, specifier) => `__relaisImport(${JSON.stringify(specifier)})`);
  const left = out.match(/\bimport\s*\(|\bimport\.meta\b/);
  if (left)
    throw new Error(
      `command bundle: ${left[0]} is left in ${name}.cjs (at ${out.indexOf(left[0])}): CommonJS run by the loader has none`,
    );
  return out;
}

/**
 * Builds every command's three files after the split build, from that build's metafile. The
 * caches are made in one scratch project, in the warm-up order: the tick first, so that status
 * then reads a workspace with a ledger, a report and history, as in a project in use.
 */
export async function bundleCommands({ root, outDir, splitMetafile, options }) {
  for (const command of COMMAND_BUNDLES)
    await bundleCommand(command, { root, outDir, splitMetafile, options });
  const base = mkdtempSync(join(tmpdir(), 'relais-build-cache-'));
  try {
    const repo = scratchProject(outDir, base);
    for (const command of [...COMMAND_BUNDLES].sort((a, b) => a.warm.order - b.warm.order))
      writeCodeCache(command, outDir, repo);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

async function bundleCommand(command, { root, outDir, splitMetafile, options }) {
  const matched = new Set();
  const commandFile = join(outDir, `${command.name}.cjs`);
  rmSync(cacheFileOf(commandFile), { force: true });
  const { outputFiles } = await build({
    ...options,
    format: 'cjs',
    // The code as an ES module would run it; `require` is the loader's (no banner making one).
    banner: { js: '"use strict";' },
    define: { 'import.meta.url': '__relaisModuleUrl' },
    // esbuild makes any other `import.meta` an empty object in CommonJS, with only a warning.
    logOverride: { 'empty-import-meta': 'error' },
    entryPoints: [command.entry],
    outfile: commandFile,
    splitting: false,
    write: false,
    plugins: [
      ...options.plugins,
      otherImportsFromChunks(root, outDir, splitMetafile, options.external, command.runBy, matched),
    ],
  });
  // An entry met by no dynamic import is misnamed (or no longer imported so): the command would
  // load that module from the split build's chunks, as an ES module, without a word.
  const unmatched = [...command.runBy].filter((entry) => !matched.has(entry));
  if (unmatched.length > 0)
    throw new Error(
      `command bundle: ${command.name}'s runBy names ${unmatched.join(', ')}, which no dynamic import reaches`,
    );
  for (const file of outputFiles)
    writeFileSync(
      file.path,
      file.path === commandFile ? throughLoader(file.text, command.name) : file.contents,
    );
  if (!outputFiles.some((file) => file.path === commandFile))
    throw new Error(`command bundle: dist/cli/${command.name}.cjs was not written`);
  await build({
    ...options,
    stdin: {
      contents: loaderOf(command),
      resolveDir: root,
      sourcefile: `${command.name}-loader.js`,
      loader: 'js',
    },
    outfile: join(outDir, `${command.name}.js`),
    splitting: false,
  });
}

/** dist/cli/<name>.js: loads the CommonJS command with its cache; main.js imports it. */
function loaderOf(command) {
  return `import { fileURLToPath } from 'node:url';
import { loadCompiledBundle } from './source/cli/code-cache.ts';
const bundle = loadCompiledBundle(fileURLToPath(new URL('./${command.name}.cjs', import.meta.url)), (specifier) => import(specifier));
export const ${command.exportName} = bundle.exports.${command.exportName};
/** For the build and the tests: whether V8 took the cache, and the cache to write. */
export const codeCacheAccepted = bundle.cacheAccepted;
export const codeCache = () => bundle.codeCache();
`;
}

/**
 * Runs the command once in a scratch repository, in a child Node, and writes the bytecode it
 * compiled. `relais run` runs one tick there, with an agent that answers at once (sandboxed when
 * bwrap works on this machine, like any tick). A tick that does not succeed still leaves a cache,
 * of less of the code (a start then compiles the rest), and the build says so, unless the reason is
 * only that this machine has no working bwrap.
 *
 * The child runs without NODE_OPTIONS: V8 refuses a cache made under other flags, so one made
 * under a CI's `--max-old-space-size` would be refused by every plain `node`. The build then
 * checks that a plain `node` takes it, and fails if not: the suite's tests expect each cache to be
 * taken. A child that fails leaves no cache and fails the build too.
 */
function writeCodeCache(command, outDir, repo) {
  const { NODE_OPTIONS: _flags, ...plainEnv } = process.env;
  const loaderUrl = pathToFileURL(join(outDir, `${command.name}.js`)).href;
  const [project, flags] = command.warm.args;
  const script = `
    import { existsSync, readFileSync, writeFileSync } from 'node:fs';
    const loaded = await import(${JSON.stringify(loaderUrl)});
    const quiet = { write: () => true };
    await loaded.${command.exportName}({ cwd: ${JSON.stringify(repo)}, env: process.env, stdout: quiet, stderr: quiet }, ${JSON.stringify(project ?? null)} ?? undefined, ${JSON.stringify(flags)});
    writeFileSync(${JSON.stringify(cacheFileOf(join(outDir, `${command.name}.cjs`)))}, loaded.codeCache());
    const report = ${JSON.stringify(join(repo, 'relais', 'REPORT.json'))};
    if (existsSync(report)) console.log(JSON.parse(readFileSync(report, 'utf8')).code);
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: repo,
    encoding: 'utf8',
    env: { ...plainEnv, ...IDENTITY, CI: 'true' },
    timeout: 120_000,
  });
  if (run.status !== 0)
    throw new Error(`command bundle: the run that makes ${command.name}'s code cache failed: ${run.stderr}`);
  const code = run.stdout.trim();
  // Without a working bwrap (macOS, a container without user namespaces) the tick is blocked by
  // design; that is said nowhere, so `npm ci` stays quiet on such a machine.
  if (command.warm.tick && code !== 'SUCCESS' && code !== 'BLOCKED_SANDBOX_UNAVAILABLE')
    console.warn(
      `command bundle: the warm-up tick for ${command.name} ended ${code || 'without a report'}; its code cache holds less of the tick`,
    );
  const check = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `console.log((await import(${JSON.stringify(loaderUrl)})).codeCacheAccepted)`,
    ],
    { encoding: 'utf8', env: plainEnv },
  );
  if (check.stdout.trim() !== 'true')
    throw new Error(`command bundle: a plain node refuses ${command.name}'s code cache: ${check.stderr}`);
}

/** The scratch repository's git: a fixed identity, and none of this machine's config (signing, hooks). */
const IDENTITY = {
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'relais build',
  GIT_AUTHOR_EMAIL: 'build@relais.invalid',
  GIT_COMMITTER_NAME: 'relais build',
  GIT_COMMITTER_EMAIL: 'build@relais.invalid',
};

/** A committed repository with `relais init` done, whose agent is an instant script; returns it. */
function scratchProject(outDir, base) {
  const repo = join(base, 'repo');
  const git = (...args) => {
    const run = spawnSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, ...IDENTITY } });
    if (run.status !== 0) throw new Error(`command bundle: git ${args[0]} failed: ${run.stderr}`);
  };
  mkdirSync(join(repo, 'src'), { recursive: true });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'src', 'a.ts'), 'export const a = 1;\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  const init = spawnSync(process.execPath, [join(outDir, 'main.cjs'), 'init'], {
    cwd: repo,
    encoding: 'utf8',
    env: { ...process.env, ...IDENTITY, CI: 'true' },
  });
  if (init.status !== 0) throw new Error(`command bundle: relais init failed: ${init.stderr}`);
  const configPath = join(repo, 'relais.config.json');
  const config = JSON.parse(readFileSync(configPath, 'utf8'));
  config.claude_code_cli.command = writeInstantAgent(base, { edits: 'src/a.ts' });
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  git('add', 'relais.config.json');
  git('commit', '-q', '-m', 'config');
  return repo;
}
