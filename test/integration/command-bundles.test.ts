import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { builderWrites, CLI, TestProject, task } from '../support/project.js';

// Issue 17: `relais status` within 2x `node -e 0`, and a tick's own overhead. Node 20 pays for
// every ES module file it loads and compiles each at every start, so the build gives status and run
// one file each (scripts/command-bundles.mjs): a CommonJS bundle (<name>.cjs) run with its V8 code
// cache by a small loader. The bin, main.cjs, is CommonJS too (scripts/cjs-front-door.mjs): Node
// starts its ES module loader for the first ES module a process loads, and a tick or a status
// loads none. These tests run the built CLI and read which files Node really loaded (NODE_DEBUG=esm
// names each ES module it translates, NODE_DEBUG=module each CommonJS file it loads), so a change
// that splits a command again, pulls the agents' runners back into status, brings an ES module
// back into a tick or loses a cache fails here rather than only in the benchmark.

const CLI_DIR = dirname(CLI);
const STATUS_FILE = join(CLI_DIR, 'status-command.cjs');
/** The same front door as an ES module: the split build's entry. */
const ESM_CLI = join(CLI_DIR, 'main.js');

interface Loaded {
  /** ES modules Node translated. */
  readonly esm: string[];
  /** CommonJS files Node's module loader loaded (a command's bundle is read and run by node:vm). */
  readonly cjs: string[];
  /**
   * Whether the CLI's own process started the ES module loader at all: an `import()` of a Node
   * built-in translates no file, yet starts it (about 10 ms).
   */
  readonly esmLoader: boolean;
}

/** The dist files Node loaded for `args` through `cli`, relative to dist/cli/. */
function loadedFiles(project: TestProject, args: string[], cli = CLI): Loaded {
  const run = spawnSync(process.execPath, [cli, ...args], {
    cwd: project.root,
    env: { ...project.env, NODE_DEBUG: 'esm,module' },
    encoding: 'utf8',
  });
  expect(run.status, run.stderr).toBe(0);
  const esm = [...run.stderr.matchAll(/Translating StandardModule (file:\S+)/g)].map((m) =>
    fileURLToPath(m[1] ?? ''),
  );
  const cjs = [...run.stderr.matchAll(/^MODULE \d+: load "([^"]+)" for module/gm)].map((m) => m[1] ?? '');
  // Without any, Node's debug output changed and this test would prove nothing.
  expect(esm.length + cjs.length).toBeGreaterThan(0);
  // Only the CLI's own files: an agent the command starts may be a Node program too.
  const ours = (paths: string[]) =>
    paths
      .filter((path) => path.startsWith(`${CLI_DIR}/`))
      .map((path) => path.slice(CLI_DIR.length + 1))
      .sort();
  // The CLI's pid, from the line that loaded its entry: an agent it starts may debug-print too.
  const pid =
    cli === CLI
      ? run.stderr.match(/^MODULE (\d+): load "[^"]+main\.cjs" for module "\."/m)?.[1]
      : run.stderr.match(/^ESM (\d+): /m)?.[1];
  expect(pid).toBeDefined();
  return { esm: ours(esm), cjs: ours(cjs), esmLoader: new RegExp(`^ESM ${pid}: `, 'm').test(run.stderr) };
}

/** The chunks main.js imports statically (it loads them before any command). */
function chunksOfMain(): string[] {
  return staticChunksOf(ESM_CLI, './');
}

/** The chunks `file` imports statically, as paths relative to dist/cli/; `from` is how it names them. */
function staticChunksOf(file: string, from: './' | '../'): string[] {
  const text = readFileSync(file, 'utf8');
  // `import {...} from "./chunks/x.js"` or `import "./chunks/x.js"`; the commands' `import(...)` are not.
  const prefix = from === './' ? '\\.\\/chunks\\/' : '\\.\\/';
  return [...text.matchAll(new RegExp(`(?:from|import) "${prefix}([^"]+)";`, 'g'))].map(
    (m) => `chunks/${m[1] ?? ''}`,
  );
}

/**
 * Loads a command's loader in a new Node, the ES module one (`<name>.js`, main.js's) or the
 * CommonJS one (`<name>-loader.cjs`, the bin's): whether V8 took its cache, and its entry's type.
 */
function cacheTaken(name: string, entry: string, kind: 'esm' | 'cjs'): string {
  const script =
    kind === 'esm'
      ? `const m = await import(${JSON.stringify(pathToFileURL(join(CLI_DIR, `${name}.js`)).href)}); console.log(m.codeCacheAccepted, typeof m.${entry});`
      : `const m = require(${JSON.stringify(join(CLI_DIR, `${name}-loader.cjs`))}); console.log(m.codeCacheAccepted, typeof m.${entry});`;
  const run = spawnSync(
    process.execPath,
    [...(kind === 'esm' ? ['--input-type=module'] : []), '-e', script],
    {
      encoding: 'utf8',
    },
  );
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim();
}

let project: TestProject;
afterEach(() => project?.dispose());

describe('relais status loads one file of its own', () => {
  it('runs from main.cjs and its loader, with no ES module at all', () => {
    project = TestProject.create();
    expect(loadedFiles(project, ['status'])).toEqual({
      esm: [],
      cjs: ['main.cjs', 'status-command-loader.cjs'],
      esmLoader: false,
    });
    // --preflight runs the sandbox probe and the start conditions from the same file; the probe's
    // spawn loads execa (the process port imports it on its first spawn), from its own chunk.
    const preflight = loadedFiles(project, ['status', '--preflight']);
    expect(preflight.cjs).toEqual(['main.cjs', 'status-command-loader.cjs']);
    const execa = preflight.esm.filter((file) => /^chunks\/execa-\w+\.js$/.test(file));
    expect(execa).toHaveLength(1);
    const its = staticChunksOf(join(CLI_DIR, execa[0] ?? ''), '../');
    expect(preflight.esm.filter((file) => !execa.includes(file) && !its.includes(file))).toEqual([]);
  });

  it('reads main.js, the chunks main.js imports and status-command.js through the ES module front door', () => {
    project = TestProject.create();
    expect(loadedFiles(project, ['status'], ESM_CLI)).toEqual({
      esm: ['main.js', 'status-command.js', ...chunksOfMain()].sort(),
      cjs: [],
      esmLoader: true,
    });
  });

  it('takes the code cache the build wrote, through either loader, in a Node like the one that built it', () => {
    expect(cacheTaken('status-command', 'statusCommand', 'cjs')).toBe('true function');
    expect(cacheTaken('status-command', 'statusCommand', 'esm')).toBe('true function');
  });

  it("holds none of the agents' runners, the tick, the workflow's phases or micromatch", () => {
    const sources = [
      ...readFileSync(STATUS_FILE, 'utf8').matchAll(/^\/\/ ((?:source|node_modules)\/\S+)$/gm),
    ].map((m) => m[1] ?? '');
    expect(sources).toContain('source/engine/status/project-status.ts');
    const unwanted = sources.filter((s) =>
      /^source\/engine\/(agents\/(claude-code|codex|external)|tick\/|workflow\/(?!workflow-store))|^node_modules\/micromatch\//.test(
        s,
      ),
    );
    expect(unwanted).toEqual([]);
  });
});

describe('relais run loads one file of its own', () => {
  it('runs a whole tick from main.cjs and its loader, with no ES module at all', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'b\n' })],
    });
    expect(loadedFiles(project, ['run'])).toEqual({
      esm: [],
      cjs: ['main.cjs', 'run-command-loader.cjs'],
      esmLoader: false,
    });
    // The tick really ran, through the bundled tick, execa and the judge.
    expect(project.report().code).toBe('SUCCESS');
  });

  it('takes the code cache the build wrote, made by a whole tick', () => {
    expect(cacheTaken('run-command', 'runCommand', 'cjs')).toBe('true function');
    expect(cacheTaken('run-command', 'runCommand', 'esm')).toBe('true function');
    // A tick's bytecode (the judge, the process port) is far more than the top level's alone.
    expect(statSync(join(CLI_DIR, 'run-command.cjs.v8-cache')).size).toBeGreaterThan(
      statSync(join(CLI_DIR, 'run-command.cjs')).size / 2,
    );
  });
});
