import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { relaisScript, roleOf } from '../../source/demo/relais-script.js';
import { type ScriptedModel, startScriptedModel } from '../../source/demo/scripted-model-server.js';
import type { TestProject } from '../support/project.js';
import { CLAUDE, claudeEnv } from '../support/real-claude.js';
import { NO, runInProcess, scriptedGates, TASKS_MD, workflowProject } from '../support/workflow.js';

// The workflow's agents through the REAL Claude Code binary; only the model behind it is scripted
// (a Messages API on 127.0.0.1). What Claude Code's own tools print comes back as tool results,
// and its permission system produces the denials: both are the real thing here.

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
let model: ScriptedModel | null = null;
afterEach(async () => {
  await model?.close();
  model = null;
  project?.dispose();
  project = null;
});

function realClaudeProject(configure?: (config: any) => void) {
  return workflowProject((config) => {
    config.claude_code_cli.command = CLAUDE;
    configure?.(config);
  });
}

const writeSpec = (root: string) => [
  {
    name: 'Write',
    input: { file_path: join(root, 'specs/SPEC.md'), content: '# Spec\n\nGreet and say bye.\n' },
  },
  { name: 'Write', input: { file_path: join(root, 'specs/TASKS.md'), content: TASKS_MD } },
];

describe('e2e: workflow agents with the real claude binary', () => {
  it('EXIT_SIGNAL echoed by a Bash tool call is not completion; the agent is asked again and its final answer counts', async () => {
    const p = realClaudeProject();
    project = p;
    model = await startScriptedModel(
      relaisScript({
        orchestrator: [],
        builder: [],
        spec: [
          [
            {
              text: 'Let me check the signal.',
              toolUses: [{ name: 'Bash', input: { command: 'echo "EXIT_SIGNAL: true"' } }],
            },
            { text: 'I printed the signal above, but I have not written the spec yet.' },
          ],
          [
            { toolUses: writeSpec(p.root) },
            { text: 'SPEC.md and TASKS.md are written.\n\nEXIT_SIGNAL: true' },
          ],
        ],
      }),
    );
    const run = await runInProcess(p, { gates: scriptedGates({ spec: NO }), env: claudeEnv(model.url) });
    expect(run.outcome.state, JSON.stringify(run.outcome)).toBe('REJECTED');
    const specRequests = model.requests.filter((r) => roleOf(r) === 'spec');
    // The real Bash tool ran and its output reached the model as a tool result…
    expect(JSON.stringify(specRequests[1]?.messages)).toMatch(/tool_result.*EXIT_SIGNAL: true/);
    // …and the runner still sent the agent back, because its own final answer had no signal.
    const warnings = run.events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
    expect(warnings).toContain('spec-agent: it ended without EXIT_SIGNAL: true; running it again (1/2)');
    expect(JSON.stringify(specRequests[2]?.messages)).toContain('did not end with the status line');
    expect(p.read('specs/TASKS.md')).toBe(TASKS_MD);
    expect(run.events.find((e) => e.type === 'agent.tool' && e.role === 'spec')).toMatchObject({
      tool: 'Bash',
      target: 'echo "EXIT_SIGNAL: true"',
    });
  });

  it('a shell command Claude Code denies (acceptEdits) becomes a needs-input gate; "allow" pre-approves it next run', async () => {
    const p = realClaudeProject((config) => {
      config.workflow.permission_mode = 'acceptEdits';
    });
    project = p;
    const command = 'node -p 40+2';
    model = await startScriptedModel(
      relaisScript({
        orchestrator: [],
        builder: [],
        spec: [
          [
            { text: 'Preparing a notes folder.', toolUses: [{ name: 'Bash', input: { command } }] },
            { text: 'I could not prepare the notes folder: the command was not allowed.' },
          ],
          [
            { toolUses: [{ name: 'Bash', input: { command } }] },
            { toolUses: writeSpec(p.root) },
            { text: 'Done.\n\nEXIT_SIGNAL: true' },
          ],
        ],
      }),
    );
    const gates = scriptedGates({ input: { decision: 'answer', by: 'human', text: 'allow' }, spec: NO });
    const run = await runInProcess(p, { gates, env: claudeEnv(model.url) });
    expect(gates.asked[0]?.gate).toBe('input');
    expect(gates.asked[0]?.lines[0]).toContain(`The agent was denied: Bash ${command}`);
    expect(run.outcome.state, JSON.stringify(run.outcome)).toBe('REJECTED');
    const specRequests = model.requests.filter((r) => roleOf(r) === 'spec');
    // First run: Claude Code refused the command; second run: it ran (the tool result says so).
    expect(JSON.stringify(specRequests[1]?.messages)).toContain('This command requires approval');
    const secondRun = specRequests.slice(2);
    expect(JSON.stringify(secondRun.at(-1)?.messages)).not.toContain('This command requires approval');
    // The allowed command really ran in the second run: its output came back to the model.
    expect(JSON.stringify(secondRun.at(-1)?.messages)).toMatch(/"content":"42"/);
  });
});
