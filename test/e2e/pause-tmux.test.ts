import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, type TestProject } from '../support/project.js';
import { TmuxSession } from '../support/tmux.js';
import { happyScenario, specStep, workflowFile, workflowProject } from '../support/workflow.js';

// Issue 16 item 11 in a real terminal: `p` while the spec agent works. The header says it pauses,
// the agent finishes (the test lets it), no next step runs, the workflow is interrupted before the
// spec gate, and the cost on the final screen is the one `ralphy status --json` reads (item 7).

let tmux: TmuxSession | null = null;
let project: TestProject | null = null;
afterEach(() => {
  tmux?.kill();
  tmux = null;
  project?.dispose();
  project = null;
});

describe('the pause key in a real terminal', () => {
  it('p during the spec agent: PAUSING, the agent finishes, the run stops interrupted before the gate', async () => {
    expect(TmuxSession.available(), 'tmux is required (apt-get install tmux)').toBe(true);
    const p = workflowProject();
    project = p;
    const release = join(p.base, 'release-spec');
    const scenario = happyScenario();
    scenario.spec = [specStep({ cost: 0.25, release_file: release })];
    p.scenario(scenario);
    tmux = new TmuxSession('pause', 120, 40);
    const env = {
      ...p.env,
      CI: undefined,
      CONTINUOUS_INTEGRATION: undefined,
      TERM: 'xterm-256color',
      IS_SANDBOX: '1',
    };
    // --yes would approve the spec gate: the pause must stop the run before it is even asked.
    tmux.start(
      `cd ${p.root} && node ${CLI} start --yes; echo "START_EXIT=$?"; read -r _`,
      env as Record<string, string | undefined>,
    );
    // The agent's own start line: the phase list names SPECIFICATION before any agent runs.
    await tmux.waitFor((s) => /── spec(-agent)? started/.test(s) && / p \s+pause/.test(s), 'the spec agent');
    tmux.keys('p');
    await tmux.waitFor((s) => s.includes('PAUSING after this agent'), 'the header saying it pauses');
    writeFileSync(release, '');
    const final = await tmux.waitFor((s) => s.includes('q  quit'), 'the final screen', 120_000);
    expect(final).not.toContain('FAILED');
    expect(final).not.toContain('PAUSING');
    const w = workflowFile(p);
    expect(w).toMatchObject({ state: 'AWAITING_SPEC_VALIDATION', status: 'interrupted', cost_usd: 0.25 });
    expect(w.gate_decisions ?? []).toEqual([]);
    expect(p.calls().map((c) => c.role)).toEqual(['spec']);
    // The header (first line) shows the recorded spend and the workflow's cap; status reads the same.
    const cap = w.max_cost_usd as number;
    expect(cap).toBeGreaterThan(0);
    expect(final.split('\n')[0]).toContain(`$0.2500 / $${cap.toFixed(2)}`);
    tmux.keys('q');
    const after = await tmux.waitFor((s) => s.includes('START_EXIT='), 'the end of ralphy start');
    expect(after).toMatch(/START_EXIT=[1-9]/);
    const status = p.cliSync(['status', '--json'], { IS_SANDBOX: '1' });
    const json = JSON.parse(status.stdout);
    expect(json.workflow).toMatchObject({ status: 'interrupted', cost_usd: 0.25, max_cost_usd: cap });
    expect(json.workflow.next.join(' ')).toContain('ralphy start');
  }, 240_000);
});
