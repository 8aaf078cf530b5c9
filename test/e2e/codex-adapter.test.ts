import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  fakeProviderOverrides,
  type ScriptedResponses,
  startScriptedResponses,
} from '../../source/demo/scripted-responses-server.js';
import type { AgentRequest } from '../../source/engine/agents/agent-run.js';
import { codexRunner } from '../../source/engine/agents/codex/run-codex.js';
import { EngineBus, type StampedEvent } from '../../source/engine/events.js';
import type { RelaisConfig } from '../../source/engine/protocol/config.js';
import { resolveSandbox, type Sandbox } from '../../source/engine/sandbox/sandbox.js';
import { REPO_ROOT } from '../support/project.js';

// The REAL codex binary (@openai/codex 0.169.0) against a scripted Responses API on 127.0.0.1.

const CODEX = join(REPO_ROOT, 'node_modules/.bin/codex');

let base: string;
let server: ScriptedResponses | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(base, { recursive: true, force: true });
});

function repo(): string {
  base = mkdtempSync(join(tmpdir(), 'relais-codex-'));
  const root = join(base, 'repo');
  mkdirSync(join(base, 'home'), { recursive: true });
  mkdirSync(root);
  spawnSync('git', ['init', '-q', '-b', 'main'], { cwd: root });
  spawnSync('git', ['commit', '-q', '--allow-empty', '-m', 'init'], { cwd: root });
  return root;
}

/**
 * The adapter as the runner builds it: the process environment as is (the adapter itself puts
 * Codex's `codex-linux-sandbox` helper on the child's PATH), Relais's sandbox off or on.
 */
function runner(url: string, sandbox: Sandbox = { kind: 'off' }) {
  const home = join(base, 'home');
  return codexRunner({
    command: CODEX,
    configOverrides: fakeProviderOverrides(url),
    // In Relais's sandbox Codex keeps its state in the sandbox's scratch HOME (the real one is
    // read-only there); outside it, in the test's own HOME.
    extraEnv:
      sandbox.kind === 'bwrap'
        ? { OPENAI_API_KEY: 'sk-test-offline' }
        : { OPENAI_API_KEY: 'sk-test-offline', CODEX_HOME: home, HOME: home },
    env: process.env,
    sandbox,
  });
}

function request(cwd: string, overrides: Partial<AgentRequest> = {}): AgentRequest {
  return {
    role: 'builder',
    attempt: 1,
    systemPrompt: 'You implement tasks.',
    userPrompt: 'Create hello.txt',
    model: 'gpt-5.2-codex',
    fallbackModel: null,
    maxTurns: 10,
    maxBudgetUsd: 1,
    tools: [],
    permissionMode: 'bypassPermissions',
    streaming: true,
    cwd,
    timeoutMs: 60_000,
    signal: new AbortController().signal,
    ...overrides,
  };
}

function collect(bus: EngineBus): StampedEvent[] {
  const events: StampedEvent[] = [];
  bus.subscribe((e) => events.push(e));
  return events;
}

describe('e2e: the Codex adapter drives the real codex exec --json', () => {
  it('runs shell commands in the workspace-write sandbox and reports them as bus events', async () => {
    const root = repo();
    server = await startScriptedResponses((r) => {
      if (r.toolOutputs.length === 0)
        return { text: 'Writing the file.', commands: ["printf 'hello\\n' > hello.txt"] };
      if (r.toolOutputs.length === 1)
        return { commands: ['git add hello.txt && git commit -q -m hi', 'cat missing.txt'] };
      return { text: 'Done: hello.txt exists.' };
    });
    const bus = new EngineBus();
    const events = collect(bus);
    const outcome = await runner(server.url).run(request(root), bus);
    expect(outcome.failure).toBeNull();
    expect(outcome.text).toBe('Done: hello.txt exists.');
    expect(outcome.costReported).toBe(true);
    expect(readFileSync(join(root, 'hello.txt'), 'utf8')).toBe('hello\n');
    // The prompt arrived through stdin, system part first.
    expect(server.requests[0]?.prompt).toContain('You implement tasks.\n\nCreate hello.txt');
    expect(server.requests[0]?.toolNames).toContain('exec_command');
    // Reality: workspace-write keeps .git read-only, so the agent cannot commit.
    expect(server.requests[2]?.toolOutputs.join('\n')).toMatch(/Read-only file system/);
    expect(
      spawnSync('git', ['rev-list', '--count', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim(),
    ).toBe('1');
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('agent.started');
    expect(types.at(-1)).toBe('agent.finished');
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'agent.tool',
        tool: 'exec_command',
        target: expect.stringContaining('hello.txt'),
      }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'agent.output', kind: 'text', text: 'Writing the file.' }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'agent.output',
        kind: 'error',
        text: expect.stringContaining('missing.txt'),
      }),
    );
    expect(events.at(-1)).toMatchObject({ type: 'agent.finished', ok: true, exit_code: 0, cost_usd: 0 });
  });

  it("inside Relais's bwrap sandbox: Codex's commands run (danger-full-access inside the outer fence), which alone decides what is writable", async () => {
    const root = repo();
    mkdirSync(join(root, 'src'));
    const sandbox = await resolveSandbox(
      { sandbox: 'bwrap', workspace_dir: 'relais' } as RelaisConfig,
      root,
      process.env,
    );
    expect(sandbox.kind).toBe('bwrap');
    server = await startScriptedResponses((r) => {
      if (r.toolOutputs.length === 0) return { commands: ["printf 'in\\n' > src/in.txt"] };
      if (r.toolOutputs.length === 1)
        return { commands: ["printf 'out\\n' > out.txt", 'touch .git/planted'] };
      return { text: 'done' };
    });
    const outcome = await runner(server.url, sandbox).run(
      request(root, { writableGlobs: ['src/**'] }),
      new EngineBus(),
    );
    expect(outcome.failure).toBeNull();
    expect(outcome.text).toBe('done');
    expect(readFileSync(join(root, 'src/in.txt'), 'utf8')).toBe('in\n');
    expect(existsSync(join(root, 'out.txt'))).toBe(false);
    expect(existsSync(join(root, '.git/planted'))).toBe(false);
    expect(server.requests[2]?.toolOutputs.join('\n')).toMatch(/Read-only file system/);
  });

  it('a planning request runs read-only: a write is refused by the sandbox', async () => {
    const root = repo();
    server = await startScriptedResponses((r) =>
      r.toolOutputs.length === 0 ? { commands: ['echo x > plan.txt'] } : { text: 'planned' },
    );
    const outcome = await runner(server.url).run(
      request(root, { permissionMode: 'plan', role: 'orchestrator' }),
      new EngineBus(),
    );
    expect(outcome.text).toBe('planned');
    expect(existsSync(join(root, 'plan.txt'))).toBe(false);
  });

  it('an unreachable model never ends on its own: the timeout kills it and says so', async () => {
    const root = repo();
    server = await startScriptedResponses(() => ({ text: 'unused' }));
    const url = server.url;
    await server.close();
    server = undefined;
    const outcome = await runner(url).run(request(root, { timeoutMs: 4000 }), new EngineBus());
    expect(outcome.failure).toMatch(/^codex timed out after \d+ ms and was killed$/);
    expect(outcome.text).toBeNull();
  });

  it('a missing binary is a failure value, not a throw', async () => {
    const root = repo();
    const outcome = await codexRunner({
      command: 'codex-not-installed-here',
      configOverrides: [],
      extraEnv: {},
      env: process.env,
      sandbox: { kind: 'off' },
    }).run(request(root), new EngineBus());
    expect(outcome.failure).toContain('codex command was not found');
  });
});
