import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cycleCommand } from '../../source/cli/commands/cycle.js';
import type { CommandIo } from '../../source/cli/io.js';
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
import { CycleRepo } from '../support/cycle-project.js';
import { REPO_ROOT } from '../support/project.js';

// Seed 003 end to end, offline: the REAL codex binary plans and implements (scripted Responses API
// on 127.0.0.1), the REAL claude binary verifies (scripted Messages API on 127.0.0.1). Git, the
// checks, the commits and the notification files are all real.

const CODEX = join(REPO_ROOT, 'node_modules/.bin/codex');
const CLAUDE = join(REPO_ROOT, 'node_modules/.bin/claude');

let repo: CycleRepo;
let codexModel: ScriptedResponses | undefined;
let claudeModel: ScriptedModel | undefined;
afterEach(async () => {
  await codexModel?.close();
  await claudeModel?.close();
  repo?.dispose();
});

const nonceIn = (text: string) => /This cycle's nonce is ([0-9A-F]{6})/.exec(text)?.[1] ?? 'MISSING';

/** A heredoc for Codex's shell tool: the file content reaches the disk byte for byte. */
const writeFile = (path: string, content: string) =>
  `mkdir -p "$(dirname ${path})" && cat > ${path} <<'RELAIS_EOF'\n${content}RELAIS_EOF`;

const PLAN_TASKS = [
  [
    'TASK:',
    'TASK_ID=greet-01',
    'TITLE="Exclaim the greeting"',
    'SUMMARY=',
    '  Make greet(name) end with an exclamation mark, and update its test.',
    'FILES:',
    '- path=src/greet.js action=modify rationale="the greeting"',
    '- path=tests/greet.test.js action=modify rationale="its test"',
    'ACCEPTANCE:',
    '- id=AC1 text="DET: All tests pass"',
    '- id=AC2 text="LLM: greet(name) returns Hello, <name>!"',
    'ESTIMATED_DIFF=6',
    'DEPENDS_ON=none',
  ],
  [
    'TASK:',
    'TASK_ID=greet-02',
    'TITLE="Add farewell"',
    'SUMMARY=',
    '  Add src/farewell.js exporting farewell(name), with a test.',
    'FILES:',
    '- path=src/farewell.js action=add rationale="new module"',
    '- path=tests/farewell.test.js action=add rationale="its test"',
    'ACCEPTANCE:',
    '- id=AC1 text="DET: All tests pass"',
    '- id=AC2 text="LLM: src/farewell.js exports farewell(name) returning Goodbye, <name>"',
    'ESTIMATED_DIFF=6',
    'DEPENDS_ON=greet-01',
  ],
].flat();

function codexScript(r: ResponsesRequest): { text?: string; commands?: string[] } {
  const p = r.prompt;
  const n = nonceIn(p);
  if (p.includes('P3 PICK TRACK')) {
    if (p.includes('Tracks completed: none'))
      return {
        text: `<<<TRACK:V1:NONCE=${n}>>>\nTRACK_ID=greet\nTRACK_NAME="Greetings"\nPHASE=P1\nREQUIREMENTS=R1,R2\nGOAL="Greet and say goodbye"\nESTIMATED_TASKS=2\n<<<END_TRACK:NONCE=${n}>>>`,
      };
    return {
      text: `All of P1 is built.\n<<<TRACK:V1:NONCE=${n}>>>\nPHASE_COMPLETE=true\nNEXT_PHASE=none\n<<<END_TRACK:NONCE=${n}>>>`,
    };
  }
  if (p.includes('P4 CREATE SPEC'))
    return {
      text: `<<<SPEC:V1:NONCE=${n}>>>\nTRACK_ID=greet\nTITLE="Greetings"\nOVERVIEW=\n  greet() and farewell().\nREQUIREMENTS:\n- id=R1 text="greet(name) says hello"\n- id=R2 text="farewell(name) says goodbye"\n<<<END_SPEC:NONCE=${n}>>>`,
    };
  if (p.includes('P5 CREATE PLAN'))
    return {
      text: `<<<PLAN:V1:NONCE=${n}>>>\nTRACK_ID=greet\nTASK_COUNT=2\n${PLAN_TASKS.join('\n')}\n<<<END_PLAN:NONCE=${n}>>>`,
    };
  if (p.includes('TASK greet-01:')) {
    if (r.toolOutputs.length > 0) return { text: 'greet() now exclaims; its test says so.' };
    return {
      text: 'Editing the greeting and its test.',
      commands: [
        // Where it runs: Relais's sandbox gives every process a private scratch HOME.
        'echo "home=$HOME"',
        writeFile('src/greet.js', "module.exports = (name) => 'Hello, ' + name + '!';\n"),
        writeFile(
          'tests/greet.test.js',
          "const assert = require('assert');\nassert.strictEqual(require('../src/greet.js')('A'), 'Hello, A!');\n",
        ),
      ],
    };
  }
  if (p.includes('TASK greet-02:')) {
    if (r.toolOutputs.length > 0) return { text: 'farewell() added with a test.' };
    return {
      commands: [
        writeFile('src/farewell.js', "module.exports = (name) => 'Goodbye, ' + name;\n"),
        writeFile(
          'tests/farewell.test.js',
          "const assert = require('assert');\nassert.strictEqual(require('../src/farewell.js')('A'), 'Goodbye, A');\n",
        ),
      ],
    };
  }
  throw new Error(`unscripted codex prompt: ${p.slice(0, 200)}`);
}

function promptText(request: ModelRequest): string {
  return request.messages
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n');
}

function claudeScript(request: ModelRequest): { text: string } {
  const text = promptText(request).replace(/\\n/g, '\n');
  const criterion = /Criterion (AC\d+):/.exec(text)?.[1] ?? 'AC0';
  const n = nonceIn(text);
  const seen = text.includes("'Hello, ' + name + '!'") || text.includes("'Goodbye, ' + name");
  return {
    text: `The diff shows it.\n<<<VERDICT:V1:${criterion}:NONCE=${n}>>>\nANSWER=${seen ? 'YES' : 'NO'}\nREASON="${seen ? 'the diff implements it' : 'insufficient evidence'}"\n<<<END_VERDICT:${criterion}:NONCE=${n}>>>`,
  };
}

describe('e2e: relais cycle --loop with the real codex and claude binaries', () => {
  it('one track, two tasks: codex plans and implements, claude verifies, DONE with a summary', async () => {
    repo = await CycleRepo.create();
    // In the sandbox (the product's default): every Codex, Claude and check process runs in
    // bubblewrap, and Codex's CODEX_HOME (given below with the codex_cli section) is its private
    // overlay there. That CODEX_HOME once stayed read-only, because the sandbox read it from the
    // config file rather than from the section the cycle really uses: every Codex call then died
    // at start (CYCLE_AGENT_FAILED).
    expect(JSON.parse(repo.read('relais.config.json')).sandbox ?? 'bwrap').toBe('bwrap');
    const home = join(repo.base, 'home');
    mkdirSync(home, { recursive: true });
    codexModel = await startScriptedResponses(codexScript);
    claudeModel = await startScriptedModel(claudeScript);
    repo.write(
      'relais.config.json',
      `${JSON.stringify(
        {
          ...JSON.parse(repo.read('relais.config.json')),
          claude_code_cli: {
            command: CLAUDE,
            extra_env: {
              ANTHROPIC_BASE_URL: claudeModel.url,
              ANTHROPIC_API_KEY: 'sk-test-offline',
              CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
              IS_SANDBOX: '1',
            },
          },
        },
        null,
        2,
      )}\n`,
    );
    repo.git('commit', '-q', '-am', 'agents for the e2e');
    repo.policy.timeouts = { planner_seconds: 120, implementer_seconds: 120, verifier_seconds: 120 };
    const out: string[] = [];
    const io: CommandIo = {
      cwd: repo.root,
      env: {
        ...process.env,
        HOME: home,
        XDG_CONFIG_HOME: join(home, '.config'),
        CI: 'true',
      },
      stdout: { write: (t: string) => out.push(t) },
      stderr: { write: (t: string) => out.push(t) },
    };
    const code = await cycleCommand(
      io,
      undefined,
      { json: false, loop: true, resume: false, yes: true },
      {
        policy: repo.policy,
        // The seed's split is the default: codex plans and implements, claude verifies.
        codexCli: {
          command: CODEX,
          config_overrides: fakeProviderOverrides(codexModel.url),
          extra_env: { OPENAI_API_KEY: 'sk-test-offline', CODEX_HOME: home },
        },
      },
    );
    const log = out.join('');
    expect(code, log).toBe(0);
    const lines = log.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('DONE');
    expect(log).toContain('Cycle loop ended after 14 cycle(s): DONE');
    // Codex ran its shell tool for real: the files are on disk and were committed by the runner.
    expect(log).toContain('builder tool exec_command');
    expect(repo.read('src/farewell.js')).toBe("module.exports = (name) => 'Goodbye, ' + name;\n");
    expect(repo.subjects().slice(0, 5)).toEqual([
      'relais(roadmap): P1 complete',
      'relais(greet-02): Add farewell',
      'relais(greet-02): task packet',
      'relais(greet-01): Exclaim the greeting',
      'relais(greet-01): task packet',
    ]);
    expect(repo.status()).toBe('');
    // Codex's commands ran inside Relais's sandbox (its private scratch HOME).
    expect(codexModel.requests.flatMap((r) => r.toolOutputs).join('\n')).toMatch(
      /home=\S*relais-sandbox-[\w.-]+\/home\b/,
    );
    // Claude judged each LLM: criterion once (DET: ones are stage 1's), through the real CLI.
    expect(claudeModel.requests).toHaveLength(2);
    expect(log).toMatch(
      /Verdict greet-01: PASS \(checks: tests ok, lint ok, diff ok, paths ok, secrets ok, git_clean ok\)/,
    );
    expect(log).toContain('AC2 LLM: YES (the diff implements it)');
    expect(log).toMatch(/qa answered in/);
    // Codex: 4 planner calls (pick, spec, plan, pick) and 2 implementations of two turns each.
    expect(codexModel.requests.filter((r) => r.prompt.includes('P3 PICK TRACK'))).toHaveLength(2);
    expect(codexModel.requests.filter((r) => r.prompt.includes('TASK greet-0'))).toHaveLength(4);
    const state = JSON.parse(repo.read('relais/cycle/STATE.json'));
    expect(state).toMatchObject({ phase: 'complete', tracks_completed: [{ id: 'greet', tasks: 2 }] });
    expect(repo.notifications()).toContain('complete.md');
    expect(repo.read('relais/notifications/complete.md')).toContain('1 track(s) complete: greet (2 task(s))');
  }, 240_000);
});
