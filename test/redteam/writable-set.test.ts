import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILDER_OK, TestProject as Project, type TestProject, task } from '../support/project.js';
import { happyScenario, PRD, workflowFile, workflowProject } from '../support/workflow.js';
import { fsck, sh } from './aftermath.js';

// Issue 14, the writable set of every role: a verification writes only the task's paths (plus
// `sandbox.verification_writable`), the `single` engine's dev-agent only the scopes of the tasks
// it works on, and each agent role gets its own network. Through the built CLI (`relais run`,
// `ralphy start`) with the sandbox on: each refused write meets EROFS inside the process, the file
// never changes, and the ordinary run still completes.

let project: TestProject | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

/** The lines a sandboxed process appended to `log` (one per attempt). */
const linesOf = (log: string) =>
  existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];

/** A node one-liner that tries to write `path` and logs "<name> ok" or "<name> <errno code>". */
const tryWrite = (log: string, name: string, path: string) =>
  `try { require("fs").writeFileSync(${JSON.stringify(path)}, "pwned\\n"); r = "ok" } catch (e) { r = e.code } require("fs").appendFileSync(${JSON.stringify(log)}, ${JSON.stringify(name)} + " " + r + "\\n");`;

describe("red team: a verification writes only the task's paths", () => {
  it('a check that writes outside the task (an existing file, a new one) gets EROFS; verification_writable lets it keep its cache; the tick commits', () => {
    const created = Project.create(
      { 'src/a.ts': 'export const a = 1;\n', 'README.md': 'readme\n', '.gitignore': '.cache/\n' },
      (c) => {
        c.sandbox.verification_writable = ['.cache/**'];
      },
    );
    project = created;
    mkdirSync(join(created.root, '.cache'));
    const log = join(created.harness, 'verify.log');
    const script = [
      tryWrite(log, 'readme', 'README.md'),
      tryWrite(log, 'new-root-file', 'NEW.md'),
      tryWrite(log, 'cache', '.cache/lint.json'),
    ].join(' ');
    created.commitConfig((c) => {
      c.verification.templates.push({ id: 'writer', cmd: 'node', args: ['-e', script] });
    });
    created.scenario({
      orchestrator: [{ result_json: task({ verification: { fast: ['writer'], slow: [] } }) }],
      builder: [
        { actions: [{ write: 'src/a.ts', content: 'export const a = 2;\n' }], result_json: BUILDER_OK },
      ],
    });
    const run = created.cliSync(['run']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(created.report()).toMatchObject({ code: 'SUCCESS', sandbox: 'bwrap' });
    // Refused inside the check, before the disk; its own cache folder was writable.
    expect(linesOf(log).sort()).toEqual(['cache ok', 'new-root-file EROFS', 'readme EROFS']);
    expect(created.read('README.md')).toBe('readme\n');
    expect(created.exists('NEW.md')).toBe(false);
    expect(created.read('src/a.ts')).toBe('export const a = 2;\n');
    expect(created.git('log', '-1', '--format=%s').trim()).toBe('relais(T1): Change a');
    expect(fsck(created).ok).toBe(true);
  });

  it('a check that dies of a refused write stops the tick with a detail that names the fix (verification_writable)', () => {
    const created = Project.create(undefined);
    project = created;
    created.commitConfig((c) => {
      c.verification.templates.push({
        id: 'report',
        cmd: 'node',
        args: ['-e', 'require("fs").writeFileSync("report.xml", "<ok/>")'],
      });
    });
    created.scenario({
      orchestrator: [{ result_json: task({ verification: { fast: ['report'], slow: [] } }) }],
      builder: [
        { actions: [{ write: 'src/a.ts', content: 'export const a = 2;\n' }], result_json: BUILDER_OK },
      ],
    });
    const run = created.cliSync(['run']);
    expect(run.code).toBe(1);
    const report = created.report();
    expect(report).toMatchObject({ code: 'STOP_VERIFY_FAILED_FAST', sandbox: 'bwrap' });
    expect(report.detail).toMatch(
      /^report exited 1; the sandbox refused one of its writes \(".*EROFS.*report\.xml.*"\)/,
    );
    expect(report.detail).toContain('add that folder to sandbox.verification_writable');
    expect(created.exists('report.xml')).toBe(false);
    expect(created.read('src/a.ts')).toBe('export const a = 1;\n');
  });

  it('a verification_writable path that climbs out of the repository is refused with the config error; nothing starts', () => {
    const created = Project.create(undefined);
    project = created;
    created.commitConfig((c) => {
      c.sandbox.verification_writable = ['../elsewhere/**'];
    });
    created.scenario({ orchestrator: [{ result_json: task() }] });
    const run = created.cliSync(['run']);
    expect(run.code).not.toBe(0);
    expect(run.stdout + run.stderr).toContain('sandbox.verification_writable');
    expect(created.calls()).toEqual([]);
  });
});

describe('red team: the single engine dev-agent writes only its tasks scopes', () => {
  const TASKS_WITH_SCOPES = [
    '# Tasks',
    '',
    '## Task 1: Greet by name',
    '- **Status**: pending',
    '- **Description**: greet(name) returns "Hello, <name>".',
    '- **Files**: src/a.ts',
    '- **Scope**: src/a.ts',
    '',
    '## Task 2: Say goodbye',
    '- **Status**: pending',
    '- **Description**: bye(name) returns "Bye, <name>".',
    '- **Files**: src/b.ts',
    '- **Scope**: src/b.ts',
    '',
  ].join('\n');

  it('ralphy start: a shell write the config fence allows but no task scope covers (README.md, tests/) gets EROFS; the workflow completes', async () => {
    const p = workflowProject((config) => {
      config.workflow.implementation_engine = 'single';
    });
    project = p;
    const gh = p.json('relais.config.json').pr.gh_command as string;
    const log = join(p.harness, 'dev.log');
    const attempt = (name: string, script: string) =>
      sh(
        `if ( ${script} ) 2>/dev/null; then echo "${name} ok" >> ${log}; else echo "${name} refused" >> ${log}; fi`,
      );
    const scenario = happyScenario();
    scenario.spec = [
      {
        actions: [
          { write: 'specs/SPEC.md', content: '# Spec\n\nTwo functions: greet and bye.\n' },
          { write: 'specs/TASKS.md', content: TASKS_WITH_SCOPES },
        ],
        result: 'SPEC.md and TASKS.md are written.\n\nEXIT_SIGNAL: true',
      },
    ];
    scenario.dev = [
      {
        actions: [
          // README.md and tests/** are inside scope.default_allowed_globs, outside both tasks.
          attempt('readme', 'echo pwned > README.md'),
          attempt('tests', 'mkdir -p tests && echo pwned > tests/x.test.ts'),
          attempt('prd', 'echo pwned >> PRD.md'),
          { write: 'src/a.ts', content: 'export const greet = (n: string) => "Hello, " + n;\n' },
          { write: 'src/b.ts', content: 'export const bye = (n: string) => "Bye, " + n;\n' },
          { write: 'specs/TASKS.md', content: TASKS_WITH_SCOPES.replaceAll('pending', 'completed') },
        ],
        result: 'Both tasks are done.\nEXIT_SIGNAL: true',
      },
    ];
    p.scenario(scenario);
    const env = { IS_SANDBOX: '1', PATH: `${dirname(gh)}${delimiter}${process.env.PATH}` };
    const run = await p.cli(['start', '--yes'], { env }).done;
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(workflowFile(p)).toMatchObject({ state: 'COMPLETED' });
    expect(linesOf(log)).toEqual(['readme refused', 'tests refused', 'prd refused']);
    expect(p.exists('README.md')).toBe(false);
    expect(p.exists('tests/x.test.ts')).toBe(false);
    expect(p.read('PRD.md')).toBe(PRD);
    expect(p.read('src/b.ts')).toBe('export const bye = (n: string) => "Bye, " + n;\n');
    expect(p.status()).toBe('');
  });
});

describe('red team: network per agent role', () => {
  it('relais run with sandbox.network.builder "none" (false): the builder sees only lo, the orchestrator keeps the host network', () => {
    const created = Project.create(undefined, (c) => {
      c.sandbox.network = { agents: true, builder: false };
    });
    project = created;
    const log = join(created.harness, 'net.log');
    // /proc is the sandbox's own: /proc/net/dev lists the interfaces of the process's namespace.
    const interfaces = (role: string) =>
      sh(
        `echo "${role} $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ',')" >> ${log}`,
      );
    created.scenario({
      orchestrator: [{ actions: [interfaces('orchestrator')], result_json: task() }],
      builder: [
        {
          actions: [interfaces('builder'), { write: 'src/a.ts', content: 'export const a = 2;\n' }],
          result_json: BUILDER_OK,
        },
      ],
    });
    const run = created.cliSync(['run']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const seen = Object.fromEntries(linesOf(log).map((l) => l.split(' ') as [string, string]));
    expect(seen.builder).toBe('lo,');
    // The host's interfaces: at least one besides lo (the test machine has a network).
    expect(seen.orchestrator?.split(',').filter((i) => i && i !== 'lo').length).toBeGreaterThan(0);
    expect(created.report()).toMatchObject({ code: 'SUCCESS', sandbox: 'bwrap' });
  });
});
