// `relais status` (and `ralphy status`) as one file, dist/cli/status-command.js (issue 17: start-up
// within 2x `node -e 0`). Node 20 resolves, reads, compiles and links ES modules one file at a
// time: the split bundle had status read 31 files (main.js and 30 chunks: each module lands in the
// chunk of the exact set of commands that reach it), and each file costs about 0.6 ms of CPU on its
// own (measured: 30 one-line modules against one file holding the same lines, +19 ms). Now status
// reads four: main.js, the two small chunks main.js imports, and this file.
//
// What the status command runs is bundled into its file: its own code, the reads behind it, the
// cycle's state reader (loaded when relais/cycle/STATE.json exists) and, for --preflight, the
// sandbox and the start conditions. Every other dynamic import in that graph (the front door's
// other commands, execa, conf) points at the split bundle's chunk for the same module: status never
// calls those, and if it ever did they would still work (loading their own copy of what they
// share). The build fails when a dynamic import has no chunk to point at.
import { dirname, join, relative } from 'node:path';
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
        if (args.path.startsWith('node:') || external.some((name) => args.path.startsWith(name))) return null;
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
        return { path: `./${relative(outDir, chunk)}`, external: true };
      });
    },
  };
}

/** Builds dist/cli/status-command.js after the split build, from that build's metafile. */
export async function bundleStatusCommand({ root, outDir, splitMetafile, options }) {
  const { metafile } = await build({
    ...options,
    metafile: true,
    entryPoints: { [OUT_NAME]: STATUS_ENTRY },
    outdir: outDir,
    splitting: false,
    plugins: [...options.plugins, otherImportsFromChunks(root, outDir, splitMetafile, options.external)],
  });
  const [output] = Object.keys(metafile.outputs).filter((o) => o.endsWith(`${OUT_NAME}.js`));
  if (!output || dirname(join(root, output)) !== outDir)
    throw new Error('status bundle: dist/cli/status-command.js was not written');
}
