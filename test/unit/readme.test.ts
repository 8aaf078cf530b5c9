import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../source/cli/exit-codes.js';
import { ALL_CODES, remediationOf, verdictOf } from '../../source/engine/protocol/codes.js';
import { FAILURE_REASONS, remediationOfFailure } from '../../source/engine/protocol/workflow.js';
import { REPO_ROOT } from '../support/project.js';

const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

describe('README and the code enum stay in step', () => {
  it.each(ALL_CODES)('%s is documented with its remediation', (code) => {
    expect(readme).toMatch(new RegExp(`\\| \`${code}\` +\\| \\S`));
  });

  it.each(FAILURE_REASONS)('workflow failure reason %s is documented with its remediation', (reason) => {
    expect(readme).toMatch(new RegExp(`\\| \`${reason}\` +\\| \\S`));
    expect(remediationOfFailure(reason).length).toBeGreaterThan(20);
  });

  it.each(Object.entries(EXIT))('exit code %s (%i) is documented', (_name, value) => {
    expect(readme).toMatch(new RegExp(`\\| ${value} +\\| \\S`));
  });

  it('every code has a verdict matching its prefix and a non-empty remediation', () => {
    for (const code of ALL_CODES) {
      const expected = code === 'SUCCESS' ? 'success' : code.startsWith('STOP_') ? 'stop' : 'blocked';
      expect(verdictOf(code)).toBe(expected);
      expect(remediationOf(code).length).toBeGreaterThan(20);
    }
  });

  it('gives the two commands a newcomer pastes', () => {
    expect(readme).toContain('npm ci && npm run demo');
    expect(readme).toContain('npm test ');
  });
});
