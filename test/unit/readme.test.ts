import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../source/cli/exit-codes.js';
import { ALL_CODES, remediationOf, verdictOf } from '../../source/engine/protocol/codes.js';
import { FAILURE_REASONS, remediationOfFailure } from '../../source/engine/protocol/workflow.js';
import { REPO_ROOT } from '../support/project.js';

const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
// The code tables live in docs/codes.md; the README links it.
const codes = readFileSync(join(REPO_ROOT, 'docs/codes.md'), 'utf8');

describe('docs/codes.md and the code enum stay in step', () => {
  it.each(ALL_CODES)('%s is documented with its remediation', (code) => {
    expect(codes).toMatch(new RegExp(`\\| \`${code}\` +\\| \\S`));
  });

  it.each(FAILURE_REASONS)('workflow failure reason %s is documented with its remediation', (reason) => {
    expect(codes).toMatch(new RegExp(`\\| \`${reason}\` +\\| \\S`));
    expect(remediationOfFailure(reason).length).toBeGreaterThan(20);
  });

  it.each(Object.entries(EXIT))('exit code %s (%i) is documented', (_name, value) => {
    expect(codes).toMatch(new RegExp(`\\| ${value} +\\| \\S`));
  });

  it('every code has a verdict matching its prefix and a non-empty remediation', () => {
    for (const code of ALL_CODES) {
      const expected = code === 'SUCCESS' ? 'success' : code.startsWith('STOP_') ? 'stop' : 'blocked';
      expect(verdictOf(code)).toBe(expected);
      expect(remediationOf(code).length).toBeGreaterThan(20);
    }
  });
});

describe('the README, for a newcomer', () => {
  it('gives the two commands a newcomer pastes', () => {
    expect(readme).toContain('npm ci && npm run demo');
    expect(readme).toContain('npm test ');
  });

  it.each(['docs/commands.md', 'docs/configuration.md', 'docs/codes.md', 'docs/workflow.md'])(
    'links the reference page %s, which exists',
    (page) => {
      expect(readme).toContain(`](${page})`);
      expect(readFileSync(join(REPO_ROOT, page), 'utf8').length).toBeGreaterThan(500);
    },
  );

  it('points at nothing outside the repository', () => {
    const pages = ['commands', 'configuration', 'codes', 'workflow'].map((p) =>
      readFileSync(join(REPO_ROOT, `docs/${p}.md`), 'utf8'),
    );
    for (const text of [readme, ...pages]) expect(text).not.toMatch(/\.\.\/shared|shared\/seeds|DESIGN\.md/);
  });
});
