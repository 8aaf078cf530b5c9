import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builderWrites, TestProject, task, unsandboxed } from '../support/project.js';

let project: TestProject;
afterEach(() => project?.dispose());

const files = {
  'src/a.ts': 'export const a = 1;\n',
  'package.json': '{ "name": "demo" }\n',
  'pnpm-lock.yaml': 'lockfileVersion: 9\n',
};

/**
 * The builders of F005/F006 write where the sandbox does not let them: with `"sandbox": "off"`
 * the judge (the second fence) is what these fixtures prove; each also has a sandboxed twin where
 * the write never reaches the disk and the tick says so (STOP_SANDBOX_WRITE_REFUSED).
 */
const judgeOnly = (config: any) => {
  unsandboxed('the F005/F006 builders write where the sandbox refuses: the judge is the fence under test')(
    config,
  );
};

describe('seed 000 fixtures F005-F009', () => {
  it('F005 scope_violation_outside_allowed: editing package.json with allowed src/** stops and rolls back', () => {
    project = TestProject.create(files, judgeOnly);
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'package.json': '{ "name": "evil" }\n' })],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(1);
    const report = project.report();
    expect(report.code).toBe('STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED');
    // The config allows package.json, so the fix is the task's scope (issue 21: name the fence).
    expect(report.scope.violations).toContain("outside the task's allowed_globs: package.json");
    expect(report.detail).toContain('effective fence: task [src/**] ∩ config [');
    expect(report.scope.touched_paths).toEqual(['package.json']);
    expect(project.read('package.json')).toBe('{ "name": "demo" }\n');
    expect(project.status()).toBe('');
  });

  it('F005 sandboxed: the write to package.json is refused before it reaches the disk, and the tick says so', () => {
    project = TestProject.create(files);
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'in scope\n', 'package.json': '{ "name": "evil" }\n' })],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(1);
    const report = project.report();
    expect(report.code).toBe('STOP_SANDBOX_WRITE_REFUSED');
    expect(report.sandbox).toBe('bwrap');
    expect(report.detail).toMatch(/the sandbox refused a write: .*EROFS.*package\.json/);
    // The in-scope half of the work was rolled back with the tick: nothing is claimed done.
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
    expect(project.read('package.json')).toBe('{ "name": "demo" }\n');
    expect(project.status()).toBe('');
  });

  it('F005 the config is the outer fence: a task cannot widen allowed_globs beyond it', () => {
    project = TestProject.create({ ...files, 'lib/b.ts': 'b\n' });
    project.scenario({
      orchestrator: [
        {
          result_json: task({
            scope: {
              allowed_globs: ['**'],
              forbidden_globs: [],
              allow_new_files: false,
              allow_lockfile_changes: false,
            },
          }),
        },
      ],
      builder: [builderWrites({ 'lib/b.ts': 'changed\n' })],
    });
    project.cliSync(['run']);
    expect(project.report().code).toBe('STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED');
    expect(project.report().scope.violations).toContain(
      "outside the config's scope.default_allowed_globs (the task allowed it): lib/b.ts",
    );
    expect(project.read('lib/b.ts')).toBe('b\n');
  });

  it('F006 forbidden_path_violation: a builder editing relais/STATE.json is caught although git cannot see it', () => {
    project = TestProject.create(files, judgeOnly);
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'ok\n', 'relais/STATE.json': '{"hacked": true}' })],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(1);
    const report = project.report();
    expect(report.code).toBe('STOP_RUNNER_OWNED_MUTATION');
    expect(report.scope.touched_paths).toContain('relais/STATE.json');
    // Restored from the runner's copy, then updated by the runner itself: valid, counters kept.
    expect(project.state()).toMatchObject({ schema_version: 1, budgets: { builder_calls: 1 } });
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
    expect(project.status()).toBe('');
  });

  it('F006 sandboxed: relais/ is read-only to the builder, so STATE.json never changes', () => {
    project = TestProject.create(files);
    const state = project.read('relais/STATE.json');
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'ok\n', 'relais/STATE.json': '{"hacked": true}' })],
    });
    expect(project.cliSync(['run']).code).toBe(1);
    expect(project.report().code).toBe('STOP_SANDBOX_WRITE_REFUSED');
    expect(project.report().detail).toContain('relais/STATE.json');
    expect(project.read('relais/STATE.json')).not.toContain('hacked');
    // Updated by the runner alone: the builder call is counted, nothing else moved.
    expect(JSON.parse(state)).toMatchObject({ schema_version: 1 });
    expect(project.state()).toMatchObject({ schema_version: 1, budgets: { builder_calls: 1 } });
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
    expect(project.status()).toBe('');
  });

  it('F006 forbidden_path_violation: planted .git/config fsmonitor and hook are restored before they can run', () => {
    project = TestProject.create(files, judgeOnly);
    const marker = join(project.base, 'pwned');
    const payload = `#!/bin/sh\ntouch ${marker}\n`;
    const config = project.read('.git/config');
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [
        {
          actions: [
            { write: 'evil.sh', content: payload },
            { exec: ['chmod', '+x', 'evil.sh'] },
            { append: '.git/config', content: `[core]\n\tfsmonitor = ${join(project.root, 'evil.sh')}\n` },
            { write: '.git/hooks/post-checkout', content: payload },
            { exec: ['chmod', '+x', '.git/hooks/post-checkout'] },
            { write: 'src/a.ts', content: 'x\n' },
          ],
          result_json: { summary: 'x', files_intended: [], commands_ran: [], notes: [] },
        },
      ],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(1);
    const report = project.report();
    expect(report.code).toBe('STOP_SCOPE_VIOLATION_FORBIDDEN');
    expect(report.scope.violations).toEqual(
      expect.arrayContaining([
        'git control file modified: .git/config',
        'git control file added: .git/hooks/post-checkout',
      ]),
    );
    expect(project.read('.git/config')).toBe(config);
    expect(project.exists('.git/hooks/post-checkout')).toBe(false);
    expect(project.exists('evil.sh')).toBe(false);
    expect(existsSync(marker)).toBe(false);
    expect(project.status()).toBe('');
  });

  it('F006 sandboxed: .git/ stays read-only even when the task may write the whole tree', () => {
    project = TestProject.create(files, (config) => {
      config.scope.default_allowed_globs = ['**'];
    });
    const marker = join(project.base, 'pwned');
    const config = project.read('.git/config');
    project.scenario({
      orchestrator: [
        {
          result_json: task({
            scope: {
              allowed_globs: ['**'],
              forbidden_globs: [],
              allow_new_files: true,
              allow_lockfile_changes: false,
            },
          }),
        },
      ],
      builder: [
        {
          actions: [
            { write: 'src/a.ts', content: 'x\n' },
            { write: '.git/hooks/post-checkout', content: `#!/bin/sh\ntouch ${marker}\n` },
          ],
          result_json: { summary: 'x', files_intended: [], commands_ran: [], notes: [] },
        },
      ],
    });
    expect(project.cliSync(['run']).code).toBe(1);
    expect(project.report().code).toBe('STOP_SANDBOX_WRITE_REFUSED');
    expect(project.report().detail).toContain('.git/hooks/post-checkout');
    expect(project.exists('.git/hooks/post-checkout')).toBe(false);
    expect(project.read('.git/config')).toBe(config);
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
    expect(existsSync(marker)).toBe(false);
    expect(project.status()).toBe('');
  });

  it('F006 a planted global git config (outside the repository) is caught and removed before git runs', () => {
    project = TestProject.create(files, judgeOnly);
    const marker = join(project.base, 'pwned-global');
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [
        {
          actions: [
            { write: join(project.home, 'fsmon.sh'), content: `#!/bin/sh\ntouch ${marker}\n` },
            { exec: ['chmod', '+x', join(project.home, 'fsmon.sh')] },
            {
              write: join(project.home, '.gitconfig'),
              content: `[core]\n\tfsmonitor = ${join(project.home, 'fsmon.sh')}\n`,
            },
          ],
          result_json: { summary: 'x', files_intended: [], commands_ran: [], notes: [] },
        },
      ],
    });
    project.cliSync(['run']);
    expect(project.report().code).toBe('STOP_SCOPE_VIOLATION_FORBIDDEN');
    expect(project.report().scope.violations.join('\n')).toContain('git config outside the repository added');
    expect(existsSync(join(project.home, '.gitconfig'))).toBe(false);
    expect(existsSync(marker)).toBe(false);
  });

  it('F006 sandboxed: a global git config outside the repository cannot be written at all', () => {
    project = TestProject.create(files);
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [
        {
          actions: [
            { write: join(project.home, '.gitconfig'), content: '[core]\n\tfsmonitor = /bin/false\n' },
          ],
          result_json: { summary: 'x', files_intended: [], commands_ran: [], notes: [] },
        },
      ],
    });
    expect(project.cliSync(['run']).code).toBe(1);
    expect(project.report().code).toBe('STOP_SANDBOX_WRITE_REFUSED');
    expect(existsSync(join(project.home, '.gitconfig'))).toBe(false);
    expect(project.status()).toBe('');
  });

  it('F007 new_file_rejected: creating src/new.ts with allow_new_files=false stops and removes it', () => {
    project = TestProject.create(files);
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/new.ts': 'new\n' })],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(1);
    expect(project.report().code).toBe('STOP_SCOPE_VIOLATION_NEW_FILE');
    expect(project.report().blast_radius).toEqual({
      files_touched: 1,
      lines_added: 1,
      lines_deleted: 0,
      new_files: 1,
    });
    expect(project.exists('src/new.ts')).toBe(false);
    expect(project.status()).toBe('');
  });

  it('F008 lockfile_change_rejected: pnpm-lock.yaml changes with allow_lockfile_changes=false stop', () => {
    project = TestProject.create(files);
    const scope = {
      allowed_globs: ['src/**', 'pnpm-lock.yaml'],
      forbidden_globs: [],
      allow_new_files: false,
      allow_lockfile_changes: false,
    };
    project.scenario({
      orchestrator: [{ result_json: task({ scope }) }],
      builder: [builderWrites({ 'pnpm-lock.yaml': 'lockfileVersion: 10\n' })],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(1);
    expect(project.report().code).toBe('STOP_LOCKFILE_CHANGE_FORBIDDEN');
    expect(project.read('pnpm-lock.yaml')).toBe('lockfileVersion: 9\n');
  });

  it('F009 diff_too_large: 200 changed lines against max_lines_changed=20 stop', () => {
    project = TestProject.create(files);
    const big = Array.from({ length: 200 }, (_, i) => `export const v${i} = ${i};`).join('\n');
    project.scenario({
      orchestrator: [{ result_json: task({ diff_limits: { max_files_touched: 5, max_lines_changed: 20 } }) }],
      builder: [builderWrites({ 'src/a.ts': `${big}\n` })],
    });
    const run = project.cliSync(['run']);
    expect(run.code).toBe(1);
    const report = project.report();
    expect(report.code).toBe('STOP_DIFF_TOO_LARGE');
    expect(report.blast_radius).toMatchObject({ lines_added: 200, lines_deleted: 1 });
    expect(report.scope.violations).toContain('201 lines changed > max_lines_changed 20');
    expect(project.read('src/a.ts')).toBe('export const a = 1;\n');
  });
});
