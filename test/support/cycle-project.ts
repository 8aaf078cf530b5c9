import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { AgentOutcome, AgentRequest, AgentRunner } from '../../source/engine/agents/agent-run.js';
import type { CycleOptions, CycleRunners } from '../../source/engine/cycle/context.js';
import { type CycleOutcome, runCycle } from '../../source/engine/cycle/run-cycle.js';
import type { CycleState } from '../../source/engine/cycle/state.js';
import { EngineBus, type StampedEvent } from '../../source/engine/events.js';
import { approveAll, type GatePort } from '../../source/engine/gates.js';
import { configSchema, type RelaisConfig } from '../../source/engine/protocol/config.js';
import { type CyclePolicy, defaultAgents, defaultPolicy } from '../../source/engine/protocol/cycle-policy.js';
import { initWorkspace } from '../../source/engine/workspace/init-workspace.js';
import { endedProcess } from './agent-fakes.js';

/**
 * A real git repository in a temp folder for cycle tests, initialised by the real `relais init`
 * code, with seed docs, a tiny test runner (`tests/run.js` prints "N passed") and a lint script
 * (`lint.js` refuses `var ` and `TODO`). The agents are scripted in-process runners (no model can
 * run in an integration test); git, the checks and every file are real.
 */

export const SEED = {
  'specs/VISION.md': '# Vision\nA greeting library.\n',
  'specs/PROJECT.md': '# Project\nNode, CommonJS, no dependencies.\n',
  'specs/REQUIREMENTS.md': '# Requirements\n- R1: greet(name)\n- R2: farewell(name)\n',
  'specs/ROADMAP.md': '# Roadmap\n## P1: basics\nR1, R2\n',
  'specs/P2_DONE': '',
};

const TEST_RUNNER = `const fs = require('fs');
const path = require('path');
const dir = __dirname;
let passed = 0;
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.test.js')).sort()) {
  require(path.join(dir, f));
  passed++;
}
if (fs.existsSync('MAKE_TEST_LITTER')) fs.writeFileSync('test-output.log', 'litter');
console.log(passed + ' passed');
`;

const LINT = `const fs = require('fs');
const bad = (fs.existsSync('src') ? fs.readdirSync('src') : []).filter((f) => /\\bvar |TODO/.test(fs.readFileSync('src/' + f, 'utf8')));
if (bad.length) { console.error('lint: ' + bad.join(', ')); process.exit(1); }
`;

export const BASE_FILES = {
  'src/greet.js': "module.exports = (name) => 'Hello, ' + name;\n",
  'tests/run.js': TEST_RUNNER,
  'tests/greet.test.js':
    "const assert = require('assert');\nassert.strictEqual(require('../src/greet.js')('A'), 'Hello, A');\n",
  'lint.js': LINT,
  'OPS.md': '# OPS\n- test: `node tests/run.js`\n- lint: `node lint.js`\n',
};

export class CycleRepo {
  readonly root: string;
  readonly events: StampedEvent[] = [];
  config!: RelaisConfig;
  policy: CyclePolicy;
  gates: GatePort = approveAll;
  now: () => Date = () => new Date();

  private constructor(readonly base: string) {
    this.root = join(base, 'repo');
    this.policy = defaultPolicy();
    this.policy.verify.tests = ['test'];
    this.policy.verify.lint = ['lint'];
  }

  static async create(files: Record<string, string> = { ...BASE_FILES, ...SEED }): Promise<CycleRepo> {
    const repo = new CycleRepo(mkdtempSync(join(tmpdir(), 'relais-cycle-')));
    mkdirSync(repo.root, { recursive: true });
    repo.git('init', '-q', '-b', 'main');
    for (const [path, content] of Object.entries(files)) repo.write(path, content);
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', 'initial');
    const init = await initWorkspace(repo.root, { force: false, env: process.env, now: new Date() });
    if (!init.ok) throw new Error(`init failed: ${JSON.stringify(init.steps)}`);
    const raw = JSON.parse(repo.read('relais.config.json'));
    raw.verification.templates = [
      { id: 'test', cmd: 'node', args: ['tests/run.js'] },
      { id: 'lint', cmd: 'node', args: ['lint.js'] },
    ];
    repo.write('relais.config.json', `${JSON.stringify(raw, null, 2)}\n`);
    repo.config = configSchema.parse(raw);
    repo.git('add', 'relais.config.json');
    repo.git('commit', '-q', '-m', 'relais config');
    return repo;
  }

  options(runners: CycleRunners, extra: Partial<CycleOptions> = {}): CycleOptions {
    const bus = new EngineBus();
    bus.subscribe((e) => this.events.push(e));
    return {
      root: this.root,
      config: this.config,
      policy: this.policy,
      agents: defaultAgents(),
      runners,
      bus,
      signal: new AbortController().signal,
      env: process.env,
      gates: this.gates,
      now: () => this.now(),
      ...extra,
    };
  }

  cycle(runners: CycleRunners, extra: Partial<CycleOptions> = {}): Promise<CycleOutcome> {
    return runCycle(this.options(runners, extra));
  }

  /** Runs cycles until `stop` says so (or `max`), returning every outcome. */
  async cycles(runners: CycleRunners, stop: (o: CycleOutcome) => boolean, max = 40): Promise<CycleOutcome[]> {
    const out: CycleOutcome[] = [];
    for (let i = 0; i < max; i++) {
      const o = await this.cycle(runners);
      out.push(o);
      if (stop(o)) return out;
    }
    throw new Error(`no stop after ${max} cycles: ${out.map((o) => `${o.action}:${o.reply}`).join(' ')}`);
  }

  state(): CycleState {
    return JSON.parse(this.read('relais/cycle/STATE.json'));
  }

  setState(edit: (s: CycleState) => void): void {
    const s = this.state();
    edit(s);
    this.write('relais/cycle/STATE.json', `${JSON.stringify(s, null, 2)}\n`);
  }

  notifications(): string[] {
    const dir = join(this.root, 'relais/notifications');
    return existsSync(dir) ? readdirSync(dir).sort() : [];
  }

  write(path: string, content: string): void {
    const full = join(this.root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }

  read(path: string): string {
    return readFileSync(join(this.root, path), 'utf8');
  }

  exists(path: string): boolean {
    return existsSync(join(this.root, path));
  }

  git(...args: string[]): string {
    const r = spawnSync('git', args, { cwd: this.root, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  }

  head(): string {
    return this.git('rev-parse', 'HEAD').trim();
  }

  status(): string {
    return this.git('status', '--porcelain', '--untracked-files=all');
  }

  subjects(): string[] {
    return this.git('log', '--format=%s').trim().split('\n');
  }

  dispose(): void {
    rmSync(this.base, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------------------------------------
// Scripted agents

export type Answer = string | { failure: string };
export type Handler = (request: AgentRequest, cwd: string) => Answer | Promise<Answer>;

export interface Script {
  planner?: Handler[];
  implementer?: Handler[];
  /** Called once per verifier call, with the criterion id it is asked about (it may wait). */
  verifier?: (criterion: string, request: AgentRequest) => Answer | Promise<Answer>;
}

export interface Recorded {
  readonly role: 'planner' | 'implementer' | 'verifier';
  readonly request: AgentRequest;
}

export function scripted(script: Script): { runners: CycleRunners; calls: Recorded[] } {
  const calls: Recorded[] = [];
  const queue = (role: 'planner' | 'implementer', handlers: Handler[] = []): AgentRunner => {
    const pending = [...handlers];
    return {
      run: async (request) => {
        calls.push({ role, request });
        const next = pending.shift();
        return outcome(next ? await next(request, request.cwd) : { failure: `${role} script exhausted` });
      },
    };
  };
  const verifier: AgentRunner = {
    run: async (request) => {
      calls.push({ role: 'verifier', request });
      const id = /Criterion (AC\d+):/.exec(request.userPrompt)?.[1] ?? '?';
      return outcome(
        script.verifier ? await script.verifier(id, request) : { failure: 'no verifier scripted' },
      );
    },
  };
  return {
    runners: {
      planner: queue('planner', script.planner),
      implementer: queue('implementer', script.implementer),
      verifier,
    },
    calls,
  };
}

function outcome(answer: Answer): AgentOutcome {
  const failure = typeof answer === 'string' ? null : answer.failure;
  return {
    text: typeof answer === 'string' ? answer : null,
    failure,
    costUsd: 0,
    costReported: true,
    errorText: failure,
    apiErrorStatus: null,
    permissionDenials: [],
    numTurns: 1,
    process: endedProcess(failure ? 1 : 0),
  };
}

/** The nonce a prompt names ("This cycle's nonce is AB12CD"). */
export function nonceOf(request: AgentRequest): string {
  const m = /This cycle's nonce is ([0-9A-F]{6})/.exec(request.userPrompt);
  if (!m?.[1]) throw new Error('no nonce in the prompt');
  return m[1];
}

export const track =
  (id = 'greet', extra = '') =>
  (r: AgentRequest) =>
    `Picking.\n<<<TRACK:V1:NONCE=${nonceOf(r)}>>>\nTRACK_ID=${id}\nTRACK_NAME="Greetings"\nPHASE=P1\nREQUIREMENTS=R1,R2\nGOAL="Greet and say goodbye"\nESTIMATED_TASKS=2\n${extra}<<<END_TRACK:NONCE=${nonceOf(r)}>>>`;

export const phaseComplete = (r: AgentRequest) =>
  `<<<TRACK:V1:NONCE=${nonceOf(r)}>>>\nPHASE_COMPLETE=true\nNEXT_PHASE=none\n<<<END_TRACK:NONCE=${nonceOf(r)}>>>`;

export const spec =
  (id = 'greet') =>
  (r: AgentRequest) =>
    `<<<SPEC:V1:NONCE=${nonceOf(r)}>>>\nTRACK_ID=${id}\nTITLE="Greetings"\nOVERVIEW=\n  greet() and farewell().\nREQUIREMENTS:\n- id=R1 text="greet(name) says hello"\n- id=R2 text="farewell(name) says goodbye"\n<<<END_SPEC:NONCE=${nonceOf(r)}>>>`;

export interface TaskSpec {
  id: string;
  title?: string;
  files?: string;
  acceptance?: string;
  diff?: number;
}

export function taskFields(t: TaskSpec): string {
  return [
    'TASK:',
    `TASK_ID=${t.id}`,
    `TITLE="${t.title ?? `Task ${t.id}`}"`,
    'SUMMARY=',
    `  Do ${t.id}.`,
    'FILES:',
    t.files ?? '- path=src/greet.js action=modify rationale="the greeting"',
    'ACCEPTANCE:',
    t.acceptance ??
      '- id=AC1 text="DET: All tests pass"\n- id=AC2 text="LLM: The change does what the title says"',
    `ESTIMATED_DIFF=${t.diff ?? 20}`,
    'DEPENDS_ON=none',
  ].join('\n');
}

export const plan =
  (tasks: TaskSpec[], id = 'greet') =>
  (r: AgentRequest) =>
    `<<<PLAN:V1:NONCE=${nonceOf(r)}>>>\nTRACK_ID=${id}\nTASK_COUNT=${tasks.length}\n${tasks.map(taskFields).join('\n')}\n<<<END_PLAN:NONCE=${nonceOf(r)}>>>`;

export const verdict =
  (answer: 'YES' | 'NO' | 'NEEDS_HUMAN', reason = 'checked the diff') =>
  (criterion: string, r: AgentRequest) =>
    `Reasoning...\n<<<VERDICT:V1:${criterion}:NONCE=${nonceOf(r)}>>>\nANSWER=${answer}\nREASON="${reason}"\n<<<END_VERDICT:${criterion}:NONCE=${nonceOf(r)}>>>`;

/** An implementer that writes files into the worktree (the runner commits them). */
export const writes =
  (files: Record<string, string>, said = 'Implemented.') =>
  (_r: AgentRequest, cwd: string) => {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(cwd, path)), { recursive: true });
      writeFileSync(join(cwd, path), content);
    }
    return said;
  };

export const nothing = () => 'I looked around and changed nothing.';
