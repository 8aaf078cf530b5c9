import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { relaisScript, roleOf } from '../../source/demo/relais-script.js';
import {
  type ModelRequest,
  type ScriptedModel,
  startScriptedModel,
} from '../../source/demo/scripted-model-server.js';
import {
  fakeProviderOverrides,
  type ResponsesRequest,
  type ScriptedResponses,
  startScriptedResponses,
} from '../../source/demo/scripted-responses-server.js';
import { REPO_ROOT, type TestProject } from '../support/project.js';
import { CLAUDE, claudeEnv } from '../support/real-claude.js';
import { QA_MD, TASKS_MD, workflowFile, workflowProject } from '../support/workflow.js';

// `ralphy start --engine cycle` end to end through the built CLI, offline, with the REAL binaries:
// claude writes the spec and the QA report and judges each LLM: criterion (scripted Messages API
// on 127.0.0.1), codex implements each TASKS.md task with its shell tool (scripted Responses API).
// Git, the six checks, the judge, the commits and the pull request (a local remote, a gh
// stand-in) are real. The config says `ticks`: the flag is what picks the cycle.

const CODEX = join(REPO_ROOT, 'node_modules/.bin/codex');

let project: (TestProject & { ghLog: string; remote: string }) | null = null;
let codexModel: ScriptedResponses | undefined;
let claudeModel: ScriptedModel | undefined;
afterEach(async () => {
  await codexModel?.close();
  await claudeModel?.close();
  project?.dispose();
  project = null;
});

const A = "export const greet = (n: string) => 'Hello, ' + n;\n";
const B = "export const bye = (n: string) => 'Bye, ' + n;\n";

/** A heredoc for Codex's shell tool: the file content reaches the disk byte for byte. */
const heredoc = (path: string, content: string) => `cat > ${path} <<'RELAIS_EOF'\n${content}RELAIS_EOF`;

function codexScript(r: ResponsesRequest): { text?: string; commands?: string[] } {
  const task = /TASK (T\d+):/.exec(r.prompt)?.[1];
  if (!task) throw new Error(`unscripted codex prompt: ${r.prompt.slice(0, 200)}`);
  if (r.toolOutputs.length > 0) return { text: `${task} is implemented.` };
  return {
    text: `Implementing ${task}.`,
    // Where it runs: Relais's sandbox gives every process a private scratch HOME.
    commands: [task === 'T1' ? heredoc('src/a.ts', A) : heredoc('src/b.ts', B), 'echo "home=$HOME"'],
  };
}

function promptText(request: ModelRequest): string {
  return request.messages
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n')
    .replace(/\\n/g, '\n');
}

/** The spec and QA agents through relaisScript; the cycle's verifier answers each criterion. */
function claudeScript(root: string) {
  const agents = relaisScript({
    orchestrator: [],
    builder: [],
    spec: [
      [
        {
          toolUses: [
            {
              name: 'Write',
              input: { file_path: join(root, 'specs/SPEC.md'), content: '# Spec\n\nGreet and bye.\n' },
            },
            { name: 'Write', input: { file_path: join(root, 'specs/TASKS.md'), content: TASKS_MD } },
          ],
        },
        { text: 'SPEC.md and TASKS.md are written.\n\nEXIT_SIGNAL: true' },
      ],
    ],
    qa: [
      [
        {
          toolUses: [
            { name: 'Write', input: { file_path: join(root, 'specs/QA_REPORT.md'), content: QA_MD } },
          ],
        },
        { text: 'The report is in specs/QA_REPORT.md.\nEXIT_SIGNAL: true' },
      ],
    ],
  });
  return (request: ModelRequest) => {
    const text = promptText(request);
    const criterion = /Criterion (AC\d+):/.exec(text)?.[1];
    if (!criterion || roleOf(request) !== 'other') return agents(request);
    const n = /This cycle's nonce is ([0-9A-F]{6})/.exec(text)?.[1] ?? 'MISSING';
    const seen = text.includes("'Hello, ' + n") || text.includes("'Bye, ' + n");
    return {
      text: `<<<VERDICT:V1:${criterion}:NONCE=${n}>>>\nANSWER=${seen ? 'YES' : 'NO'}\nREASON="${seen ? 'the diff implements it' : 'insufficient evidence'}"\n<<<END_VERDICT:${criterion}:NONCE=${n}>>>`,
    };
  };
}

describe('e2e: ralphy start --engine cycle with the real claude and codex binaries', () => {
  it('spec (claude) → cycle per task (codex implements, claude verifies) → QA (claude) → PR, every verdict the runner’s', async () => {
    codexModel = await startScriptedResponses(codexScript);
    // In the sandbox, the product's default: claude's and codex's every process and the checks.
    const p = workflowProject();
    project = p;
    claudeModel = await startScriptedModel(claudeScript(p.root));
    const home = join(p.base, 'codex-home');
    mkdirSync(home, { recursive: true });
    p.commitConfig((config) => {
      config.workflow.implementation_engine = 'ticks';
      config.claude_code_cli = { command: CLAUDE, extra_env: claudeEnv(claudeModel?.url ?? '') };
      config.codex_cli = {
        command: CODEX,
        config_overrides: fakeProviderOverrides(codexModel?.url ?? ''),
        extra_env: { OPENAI_API_KEY: 'sk-test-offline', CODEX_HOME: home },
      };
      config.cycle = {
        mode: 'yolo',
        verify: { tests: ['ok'], lint: [] },
        timeouts: { planner_seconds: 120, implementer_seconds: 120, verifier_seconds: 120 },
      };
    });
    const run = p.cli(['start', '--engine', 'cycle', '--yes'], {
      env: { CODEX_HOME: home },
    });
    const result = await run.done;
    const log = result.stdout + result.stderr;
    expect(result.code, log).toBe(0);

    const w = workflowFile(p);
    expect(w).toMatchObject({ state: 'COMPLETED', engine: 'cycle', tasks_completed: 2 });
    expect(w.tasks.map((t: any) => t.verdict)).toEqual(['verified', 'verified']);
    // Codex wrote the files for real, through its own shell tool; the runner committed them.
    expect(p.read('src/a.ts')).toBe(A);
    expect(p.read('src/b.ts')).toBe(B);
    const subjects = p.git('log', '--format=%s', 'main..HEAD').trim().split('\n').reverse();
    expect(subjects).toEqual(
      expect.arrayContaining(['relais(T1): Greet by name', 'relais(T2): Say goodbye']),
    );
    expect(p.status()).toBe('');
    // The cycle's calls are counted in the implementation phase's spend (two implementations of
    // two turns are two calls, plus one verdict per LLM: criterion).
    expect(w.phases.IMPLEMENTATION.calls).toBe(4);
    expect(codexModel.requests.filter((r) => /TASK T\d:/.test(r.prompt))).toHaveLength(4);
    // Codex's commands ran inside Relais's sandbox (its private scratch HOME).
    expect(codexModel.requests.flatMap((r) => r.toolOutputs).join('\n')).toMatch(
      /home=\S*relais-sandbox-[\w.-]+\/home\b/,
    );
    // Claude: the spec (2 turns), two verdicts, the QA report (2 turns), besides its own chores.
    const roles = claudeModel.requests.map((r) => roleOf(r));
    expect(roles.filter((r) => r === 'spec')).toHaveLength(2);
    expect(roles.filter((r) => r === 'qa')).toHaveLength(2);
    expect(log).toContain('AC2 LLM: YES (the diff implements it)');
    expect(log).toContain('Workflow "Greeting service"');
    expect(log).toContain('(cycle engine');
    expect(w.pr_url).toBe('https://github.com/example/greeting/pull/7');
  }, 300_000);
});
