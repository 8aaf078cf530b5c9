import { describe, expect, it } from 'vitest';
import {
  type EffectiveScope,
  effectiveScope,
  type JudgeInput,
  judgeScope,
} from '../../source/engine/judge/scope-rules.js';
import type { TouchedFile } from '../../source/engine/judge/touched-set.js';

// Seed 000 Appendix A4 as a pure function: every row, and the first match wins.

const scope: EffectiveScope = {
  taskAllowed: ['src/**', 'pnpm-lock.yaml', 'packages/*/package-lock.json'],
  configAllowed: ['src/**', 'pnpm-lock.yaml', 'packages/**'],
  forbidden: ['.git/**', 'relais/**', '**/.env*', '**/*secret*'],
  allowNewFiles: false,
  allowLockfileChanges: false,
  lockfiles: ['pnpm-lock.yaml', 'package-lock.json'],
  limits: { max_files_touched: 3, max_lines_changed: 10 },
};

const file = (path: string, extra: Partial<TouchedFile> = {}): TouchedFile => ({
  path,
  status: 'modified',
  source: 'git',
  added: 1,
  deleted: 0,
  binary: false,
  ...extra,
});

const input = (files: TouchedFile[], extra: Partial<JudgeInput> = {}): JudgeInput => ({
  files,
  taskKind: 'execute',
  scope,
  runnerOwnedGlobs: ['relais.config.json', 'relais', 'relais/**'],
  escapingSymlinks: [],
  hiddenChanges: [],
  headMoved: null,
  ...extra,
});

describe('judgeScope (A4)', () => {
  it('passes an in-scope change', () => {
    expect(judgeScope(input([file('src/a.ts')]))).toEqual({ code: null, violations: [], linesChanged: 1 });
  });

  it.each([
    [
      'row 1 runner-owned (workspace, via the protected guard)',
      [file('relais/STATE.json', { source: 'protected', protectedKind: 'runner_owned' })],
      'STOP_RUNNER_OWNED_MUTATION',
    ],
    [
      'row 1 runner-owned (the config file in the worktree)',
      [file('relais.config.json')],
      'STOP_RUNNER_OWNED_MUTATION',
    ],
    ['row 2 forbidden glob', [file('src/.env.local')], 'STOP_SCOPE_VIOLATION_FORBIDDEN'],
    [
      'row 2 git control file',
      [file('.git/config', { source: 'protected', protectedKind: 'git_internal' })],
      'STOP_SCOPE_VIOLATION_FORBIDDEN',
    ],
    [
      'row 2 global git config',
      [file('/home/u/.gitconfig', { source: 'protected', protectedKind: 'git_config_outside' })],
      'STOP_SCOPE_VIOLATION_FORBIDDEN',
    ],
    ['row 3 outside the task globs', [file('docs/x.md')], 'STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED'],
    [
      'row 3 inside the task globs but outside the config fence',
      [file('lib/x.ts')],
      'STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED',
    ],
    ['row 4 new file', [file('src/new.ts', { status: 'added' })], 'STOP_SCOPE_VIOLATION_NEW_FILE'],
    ['row 5 lockfile', [file('pnpm-lock.yaml')], 'STOP_LOCKFILE_CHANGE_FORBIDDEN'],
    [
      'row 5 lockfile in a sub-package',
      [file('packages/a/package-lock.json')],
      'STOP_LOCKFILE_CHANGE_FORBIDDEN',
    ],
    [
      'row 6 too many files',
      [file('src/a'), file('src/b'), file('src/c'), file('src/d')],
      'STOP_DIFF_TOO_LARGE',
    ],
    ['row 6 too many lines', [file('src/a', { added: 6, deleted: 5 })], 'STOP_DIFF_TOO_LARGE'],
  ])('%s', (_name, files, code) => {
    expect(judgeScope(input(files)).code).toBe(code);
  });

  it('rows 7-8: question and verify_only tasks may not change anything', () => {
    expect(judgeScope(input([file('src/a.ts')], { taskKind: 'question' })).code).toBe(
      'STOP_QUESTION_SIDE_EFFECTS',
    );
    expect(judgeScope(input([file('src/a.ts')], { taskKind: 'verify_only' })).code).toBe(
      'STOP_VERIFY_ONLY_SIDE_EFFECTS',
    );
    expect(judgeScope(input([], { taskKind: 'question' })).code).toBeNull();
  });

  it('row 9: HEAD moved', () => {
    expect(judgeScope(input([], { headMoved: 'HEAD moved from refs/heads/main to refs/heads/x' })).code).toBe(
      'STOP_HEAD_MOVED',
    );
  });

  it('edits hidden from git diff and nested repositories are forbidden (row 2)', () => {
    expect(
      judgeScope(
        input([], { hiddenChanges: ['index flag (assume-unchanged or skip-worktree) set on src/a.ts'] }),
      ).code,
    ).toBe('STOP_SCOPE_VIOLATION_FORBIDDEN');
    expect(judgeScope(input([file('src/sub', { status: 'added', gitlink: true })])).violations).toContain(
      'nested repository recorded as a submodule: src/sub',
    );
  });

  it('a symlink leaving the repository is forbidden (row 2)', () => {
    expect(
      judgeScope(input([file('src/l', { status: 'added' })], { escapingSymlinks: ['src/l -> /etc'] })).code,
    ).toBe('STOP_SCOPE_VIOLATION_FORBIDDEN');
  });

  it('first match wins, but every violation is listed', () => {
    const verdict = judgeScope(
      input([
        file('relais.config.json'),
        file('src/.env'),
        file('docs/x'),
        file('src/n', { status: 'added' }),
      ]),
    );
    expect(verdict.code).toBe('STOP_RUNNER_OWNED_MUTATION');
    expect(verdict.violations).toEqual([
      'runner-owned path modified: relais.config.json',
      'forbidden path: src/.env',
      "outside the config's scope.default_allowed_globs: relais.config.json",
      "outside the config's scope.default_allowed_globs: docs/x",
      'new file: src/n',
      '4 files touched > max_files_touched 3',
    ]);
  });

  it('globs match dotfiles', () => {
    expect(judgeScope(input([file('src/.hidden/x.ts')])).code).toBeNull();
  });
});

describe('effectiveScope', () => {
  it('takes the smaller diff limits and the union of forbidden globs', () => {
    const s = effectiveScope(
      {
        scope: {
          allowed_globs: ['src/**'],
          forbidden_globs: ['a'],
          allow_new_files: true,
          allow_lockfile_changes: false,
        },
        diff_limits: { max_files_touched: 50, max_lines_changed: 5 },
      },
      { allowed: ['src/**'], forbidden: ['b', 'a'], lockfiles: [], maxFiles: 12, maxLines: 400 },
      ['.git/**'],
    );
    expect(s.limits).toEqual({ max_files_touched: 12, max_lines_changed: 5 });
    expect(s.forbidden).toEqual(['a', 'b', '.git/**']);
    expect(s.allowNewFiles).toBe(true);
  });
});
