import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/project.js';

// React's development build keeps a performance measure per render forever: the app's heap grew
// with the agent's output (issue 17). The UI module makes React load its production build unless
// NODE_ENV says otherwise. Checked in a fresh node (dist/, as the CLI runs it).
const UI = join(REPO_ROOT, 'dist/ui/index.js');

function nodeEnvAfterImport(env: NodeJS.ProcessEnv): string {
  const script = `await import(${JSON.stringify(UI)}); const React = (await import('react')).default;
process.stdout.write(String(process.env.NODE_ENV) + ' ' + String(typeof React.act))`;
  const { NODE_ENV: _drop, ...rest } = process.env;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: REPO_ROOT,
    env: { ...rest, ...env },
    encoding: 'utf8',
  });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout;
}

describe('React build of the app', () => {
  it('is the production one when NODE_ENV is unset (no act(), no per-render measures)', () => {
    expect(nodeEnvAfterImport({})).toBe('production undefined');
  });

  it('keeps a NODE_ENV the user set', () => {
    expect(nodeEnvAfterImport({ NODE_ENV: 'development' })).toBe('development function');
  });
});
