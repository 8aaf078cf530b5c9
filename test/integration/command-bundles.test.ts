import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { builderWrites, CLI, TestProject, task } from '../support/project.js';

// Issue 17: `relais status` within 2x `node -e 0`, and a tick's own overhead. Node 20 pays for
// every ES module file it loads and compiles each at every start, so the build gives status and run
// one file each (scripts/command-bundles.mjs): a CommonJS bundle (<name>.cjs) run with its V8 code
// cache by a small loader (<name>.js). These tests run the built CLI and read which files Node
// really loaded (NODE_DEBUG=esm names each module it translates), so a change that splits a command
// again, pulls the agents' runners back into status, or loses a cache fails here rather than only
// in the benchmark.

const CLI_DIR = dirname(CLI);
const STATUS_FILE = join(CLI_DIR, 'status-command.cjs');

/** The dist files Node loaded for `args`, relative to dist/cli/. */
function loadedFiles(project: TestProject, args: string[]): string[] {
  const run = project.cliSync(args, { NODE_DEBUG: 'esm' });
  expect(run.code, run.stderr).toBe(0);
  const urls = [...run.stderr.matchAll(/Translating StandardModule (file:\S+)/g)].map((m) => m[1] ?? '');
  // Without any, Node's debug output changed and this test would prove nothing.
  expect(urls.length).toBeGreaterThan(0);
  // Only the CLI's own files: an agent the command starts may be a Node program too.
  return urls
    .map((url) => fileURLToPath(url))
    .filter((path) => path.startsWith(`${CLI_DIR}/`))
    .map((path) => path.slice(CLI_DIR.length + 1))
    .sort();
}

/** The chunks main.js imports statically (it loads them before any command). */
function chunksOfMain(): string[] {
  const text = readFileSync(CLI, 'utf8');
  // `import {...} from "./chunks/x.js"` or `import "./chunks/x.js"`; the commands' `import(...)` are not.
  return [...text.matchAll(/(?:from|import) "\.\/(chunks\/[^"]+)";/g)].map((m) => m[1] ?? '');
}

/** Loads a command's loader in a new Node: whether V8 took its cache, and its entry's type. */
function cacheTaken(name: string, entry: string): string {
  const loader = pathToFileURL(join(CLI_DIR, `${name}.js`)).href;
  const run = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(loader)}); console.log(m.codeCacheAccepted, typeof m.${entry});`,
    ],
    { encoding: 'utf8' },
  );
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim();
}

let project: TestProject;
afterEach(() => project?.dispose());

describe('relais status loads one file of its own', () => {
  it('reads main.js, the chunks main.js imports and status-command.js, nothing else', () => {
    project = TestProject.create();
    expect(loadedFiles(project, ['status'])).toEqual(
      ['main.js', 'status-command.js', ...chunksOfMain()].sort(),
    );
    // --preflight runs the sandbox probe and the start conditions from the same file; the probe's
    // spawn loads execa (the process port imports it on its first spawn), from its own chunk.
    const preflight = loadedFiles(project, ['status', '--preflight']);
    expect(preflight.filter((file) => !/^chunks\/execa-\w+\.js$/.test(file))).toEqual(
      ['main.js', 'status-command.js', ...chunksOfMain()].sort(),
    );
  });

  it('takes the code cache the build wrote, in a Node like the one that built it', () => {
    expect(cacheTaken('status-command', 'statusCommand')).toBe('true function');
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
  it('reads main.js, the chunks main.js imports and run-command.js for a whole tick, nothing else', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'b\n' })],
    });
    expect(loadedFiles(project, ['run'])).toEqual(['main.js', 'run-command.js', ...chunksOfMain()].sort());
    // The tick really ran, through the bundled tick, execa and the judge.
    expect(project.report().code).toBe('SUCCESS');
  });

  it('takes the code cache the build wrote, made by a whole tick', () => {
    expect(cacheTaken('run-command', 'runCommand')).toBe('true function');
    // A tick's bytecode (the judge, the process port) is far more than the top level's alone.
    expect(statSync(join(CLI_DIR, 'run-command.cjs.v8-cache')).size).toBeGreaterThan(
      statSync(join(CLI_DIR, 'run-command.cjs')).size / 2,
    );
  });
});
