import { afterEach, describe, expect, it } from 'vitest';
import type { TestProject } from '../support/project.js';
import {
  happyScenario,
  NO,
  runInProcess,
  scriptedGates,
  specStep,
  workflowProject,
  YES,
} from '../support/workflow.js';

// Issue 16 item 12: on a project with no committed config, `ralphy start` runs `relais init` and
// commits the config on the feature branch. After `n` at the spec gate, a second `ralphy start`
// used to start from the base without that config: every tick was BLOCKED_MISSING_CONFIG.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
});

describe('a second start after a rejected spec', () => {
  it('keeps the config the first start set up, and the new workflow completes', async () => {
    project = workflowProject();
    const scenario = happyScenario();
    scenario.spec = [specStep(), specStep()];
    project.scenario(scenario);
    // As `relais init` leaves it in a project that had no config: untracked.
    project.git('rm', '-q', '--cached', 'relais.config.json');
    project.git('commit', '-qm', 'untrack the config');
    const config = project.read('relais.config.json');

    const first = await runInProcess(project, { gates: scriptedGates({ spec: NO }) });
    expect(first.outcome.state).toBe('REJECTED');
    const rejectedBranch = project.git('branch', '--show-current').trim();
    expect(project.git('log', '--format=%s', `main..${rejectedBranch}`)).toContain(
      'ralphy: add relais config',
    );

    const second = await runInProcess(project, { gates: scriptedGates({ spec: YES, qa: YES }) });
    const codes = second.events.flatMap((e) => (e.type === 'tick.finished' ? [e.code] : []));
    expect(codes).not.toContain('BLOCKED_MISSING_CONFIG');
    expect(second.outcome.state, JSON.stringify(second.outcome)).toBe('COMPLETED');
    const branch = project.git('branch', '--show-current').trim();
    expect(branch).not.toBe(rejectedBranch);
    // The same config, committed first on the new branch; the rejected branch is left as it was.
    expect(project.read('relais.config.json')).toBe(config);
    expect(project.git('log', '--format=%s', `main..${branch}`)).toContain('ralphy: add relais config');
    expect(project.git('log', '--format=%s', `main..${branch}`)).not.toContain('untrack the config');
  }, 300_000);
});
