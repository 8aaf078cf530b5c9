import { describe, expect, it } from 'vitest';
import { isLoginFailure } from '../../source/engine/agents/claude-code/readiness.js';
import { nextStepsAt, PROJECT_ROOT_TOKEN } from '../../source/engine/protocol/workflow.js';
import { workflowView } from '../../source/engine/status/workflow-view.js';
import { freshWorkflow } from '../../source/engine/workflow/workflow-store.js';

describe('a login failure is told apart from a failure worth retrying (defect 26)', () => {
  const said = (failure: string | null, errorText: string | null, apiErrorStatus: number | null = null) => ({
    failure,
    errorText,
    apiErrorStatus,
  });

  it('names a missing, refused or expired login', () => {
    expect(isLoginFailure(said('claude exited with code 1', 'Not logged in · Please run /login'))).toBe(true);
    expect(isLoginFailure(said('Invalid API key · Fix external API key', null))).toBe(true);
    expect(isLoginFailure(said('boom', null, 401))).toBe(true);
  });

  it('leaves a crash, a timeout or a rate limit to the retries', () => {
    expect(isLoginFailure(said('claude exited with code 137 without a result object', null))).toBe(false);
    expect(isLoginFailure(said('timed out after 60s', null))).toBe(false);
    expect(isLoginFailure(said('overloaded', 'API Error: 529', 529))).toBe(false);
  });
});

describe('next steps name the project where it is now (defect 29)', () => {
  it('a stored step carries the token, filled in with the current folder when shown', () => {
    const stored = [`ralphy start ${PROJECT_ROOT_TOKEN} (it asks to resume at IMPLEMENTATION)`];
    expect(nextStepsAt(stored, '/tmp/copy')).toEqual([
      'ralphy start /tmp/copy (it asks to resume at IMPLEMENTATION)',
    ]);
    const now = new Date('2026-11-28T10:00:00Z');
    const workflow = {
      ...freshWorkflow({ prdTitle: 'P', now, maxAttempts: 3, engine: 'ticks', maxCostUsd: null }),
      status: 'interrupted' as const,
      next_steps: stored,
    };
    expect(workflowView(workflow, now, '/tmp/moved').next).toEqual([
      'ralphy start /tmp/moved (it asks to resume at IMPLEMENTATION)',
    ]);
  });
});
