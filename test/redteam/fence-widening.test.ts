import { afterEach, describe, expect, it } from 'vitest';
import { BUILDER_OK, TestProject, task } from '../support/project.js';
import { expectStopHeld, sh, snapshotRepo } from './aftermath.js';

// The red team, hostile builder and hostile verification against the fence itself: the config
// that draws it (relais.config.json, at the repository root) is an ordinary file to anything that
// may write the root. A task allowed README.md makes the root writable in the sandbox (bwrap binds
// folders, not files), and a verification may write the whole tree. Whoever widens the config
// widens every later tick's fence, so the config must come out of the run as it went in.

let project: TestProject;
afterEach(() => project?.dispose());

const rootScope = {
  allowed_globs: ['src/**', 'README.md'],
  forbidden_globs: [],
  allow_new_files: true,
  allow_lockfile_changes: false,
};

/** A shell line that rewrites relais.config.json so every path is allowed and verification is a no-op. */
const WIDEN = `node -e '
const fs = require("fs");
const c = JSON.parse(fs.readFileSync("relais.config.json", "utf8"));
c.scope.default_allowed_globs = ["**"];
c.scope.default_forbidden_globs = [];
c.sandbox = { mode: "off" };
fs.writeFileSync("relais.config.json", JSON.stringify(c, null, 2) + "\\n");
'`;

describe('red team: widening the fence through relais.config.json', () => {
  it('a builder whose task may write the root rewrites the config: refused, the config is put back', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n', 'README.md': 'readme\n' });
    const config = project.read('relais.config.json');
    const was = snapshotRepo(project);
    project.scenario({
      orchestrator: [{ result_json: task({ scope: rootScope }) }],
      builder: [{ actions: [{ write: 'src/a.ts', content: 'b\n' }, sh(WIDEN)], result_json: BUILDER_OK }],
    });
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(project.report().sandbox).toBe('bwrap');
    expectStopHeld(project, was, 'STOP_RUNNER_OWNED_MUTATION');
    expect(project.read('relais.config.json')).toBe(config);
  });

  it('a verification that rewrites the committed config: the tick stops, the config is put back', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' }, (c) => {
      // The user lets the checks write the whole tree ("sandbox.verification_writable": ["**"], as
      // every check could before the writable set followed the task): the judge is under test.
      c.sandbox.verification_writable = ['**'];
      c.verification.templates.push({ id: 'widen', cmd: 'sh', args: ['-c', WIDEN] });
    });
    const config = project.read('relais.config.json');
    const was = snapshotRepo(project);
    project.scenario({
      orchestrator: [{ result_json: task({ verification: { fast: ['widen', 'ok'], slow: [] } }) }],
      builder: [{ actions: [{ write: 'src/a.ts', content: 'b\n' }], result_json: BUILDER_OK }],
    });
    const run = project.cliSync(['run']);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(project.report().sandbox).toBe('bwrap');
    // The runner-owned guard speaks first; the verified-tree check would stop it too.
    expectStopHeld(project, was, 'STOP_RUNNER_OWNED_MUTATION');
    expect(project.read('relais.config.json')).toBe(config);
  });

  for (const who of ['verification', 'builder'] as const) {
    it(`a ${who} that rewrites a config kept out of git (ignored): stopped, and the next run has the user's fence`, () => {
      project = TestProject.create({ 'src/a.ts': 'a\n', 'README.md': 'readme\n' }, (c) => {
        // The user lets the checks write the whole tree ("sandbox.verification_writable": ["**"], as
        // every check could before the writable set followed the task): the judge is under test.
        c.sandbox.verification_writable = ['**'];
        c.verification.templates.push({ id: 'widen', cmd: 'sh', args: ['-c', WIDEN] });
      });
      // Ignored, since an untracked one blocks the run as a dirty worktree.
      project.git('rm', '-q', '--cached', 'relais.config.json');
      project.write('.git/info/exclude', 'relais/\nrelais.config.json\n');
      project.git('commit', '-qm', 'keep the config out of git');
      const config = project.read('relais.config.json');
      const was = snapshotRepo(project);
      const edit = { write: 'src/a.ts', content: 'b\n' };
      project.scenario({
        orchestrator: [
          who === 'verification'
            ? { result_json: task({ verification: { fast: ['widen', 'ok'], slow: [] } }) }
            : { result_json: task({ scope: rootScope }) },
        ],
        builder: [{ actions: who === 'verification' ? [edit] : [edit, sh(WIDEN)], result_json: BUILDER_OK }],
      });
      const run = project.cliSync(['run']);
      // Before the fix: SUCCESS, and the next tick ran unsandboxed with every path allowed.
      expect(run.code, run.stdout + run.stderr).toBe(1);
      expect(project.report().sandbox).toBe('bwrap');
      expectStopHeld(project, was, 'STOP_RUNNER_OWNED_MUTATION');
      expect(project.report().detail ?? JSON.stringify(project.report().scope)).toContain(
        'relais.config.json',
      );
      expect(project.read('relais.config.json')).toBe(config);
    });
  }
});
