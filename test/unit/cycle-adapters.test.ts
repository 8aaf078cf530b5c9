import { describe, expect, it } from 'vitest';
import type { AgentRequest } from '../../source/engine/agents/agent-run.js';
import { codexArgs, codexPrompt } from '../../source/engine/agents/codex/args.js';
import { stderrGist } from '../../source/engine/agents/codex/run-codex.js';
import { readCodexLine } from '../../source/engine/agents/codex/stream.js';
import { countTests, findSecrets } from '../../source/engine/cycle/checks.js';

const request = (overrides: Partial<AgentRequest> = {}): AgentRequest => ({
  role: 'builder',
  attempt: 1,
  systemPrompt: 'SYS',
  userPrompt: 'USER',
  model: 'gpt-5.2-codex',
  fallbackModel: null,
  maxTurns: 5,
  maxBudgetUsd: 1,
  tools: [],
  permissionMode: 'bypassPermissions',
  streaming: true,
  cwd: '/tmp',
  timeoutMs: 1000,
  signal: new AbortController().signal,
  ...overrides,
});

describe('codex exec argv (codex-cli 0.169)', () => {
  it('implementing: workspace-write, high reasoning effort, overrides as single words, prompt on stdin', () => {
    expect(codexArgs(request(), { configOverrides: ['model_provider=fake'] })).toEqual([
      'exec',
      '--json',
      '--sandbox',
      'workspace-write',
      '--skip-git-repo-check',
      '--ephemeral',
      '--color',
      'never',
      '-m',
      'gpt-5.2-codex',
      '-c',
      'model_reasoning_effort="high"',
      '-c',
      'model_provider=fake',
      '-',
    ]);
    expect(codexPrompt(request())).toBe('SYS\n\nUSER');
  });
  it('planning: read-only sandbox; never the non-existent --approval-mode', () => {
    const args = codexArgs(request({ permissionMode: 'plan' }), { configOverrides: [] });
    expect(args.slice(2, 4)).toEqual(['--sandbox', 'read-only']);
    expect(args).not.toContain('--approval-mode');
    expect(args).not.toContain('model_reasoning_effort="high"');
  });
});

describe('codex --json lines', () => {
  it.each([
    ['{"type":"thread.started","thread_id":"t1"}', [{ kind: 'thread', id: 't1' }]],
    ['{"type":"turn.started"}', []],
    [
      '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"hi"}}',
      [{ kind: 'message', text: 'hi' }],
    ],
    [
      '{"type":"item.started","item":{"id":"i","type":"command_execution","command":"ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
      [{ kind: 'command_started', command: 'ls' }],
    ],
    [
      '{"type":"item.completed","item":{"id":"i","type":"command_execution","command":"ls","aggregated_output":"a\\n","exit_code":0,"status":"completed"}}',
      [{ kind: 'command', command: 'ls', exitCode: 0, output: 'a\n' }],
    ],
    [
      '{"type":"item.completed","item":{"id":"i","type":"file_change","changes":[{"path":"a.js","kind":"update"}],"status":"completed"}}',
      [{ kind: 'file_change', paths: ['a.js'] }],
    ],
    [
      '{"type":"item.completed","item":{"id":"i","type":"error","message":"Model metadata not found"}}',
      [{ kind: 'warning', text: 'Model metadata not found' }],
    ],
    [
      '{"type":"error","message":"Reconnecting... waiting for network"}',
      [{ kind: 'warning', text: 'Reconnecting... waiting for network' }],
    ],
    [
      '{"type":"turn.completed","usage":{"input_tokens":20,"cached_input_tokens":0,"output_tokens":10}}',
      [{ kind: 'turn_completed', usage: { inputTokens: 20, outputTokens: 10 } }],
    ],
    [
      '{"type":"turn.failed","error":{"message":"stream disconnected"}}',
      [{ kind: 'turn_failed', message: 'stream disconnected' }],
    ],
    ['{"type":"item.completed","item":{"id":"i","type":"reasoning","text":"thinking"}}', []],
    ['not json', []],
    ['{"type":"item.completed"', []],
  ])('%s', (line, items) => {
    expect(readCodexLine(line)).toEqual(items);
  });
});

describe('what a failed codex said', () => {
  it('its Error: line, not the backtrace of <unknown> frames after it', () => {
    const stderr = [
      'WARNING: proceeding, even though we could not create PATH aliases',
      'Error: failed to initialize in-process app-server client: Read-only file system (os error 30)',
      '',
      'Stack backtrace:',
      ...Array.from({ length: 14 }, (_, i) => `  ${i}: <unknown>`),
    ].join('\n');
    expect(stderrGist(stderr)).toBe(
      'Error: failed to initialize in-process app-server client: Read-only file system (os error 30)',
    );
  });

  it('its last lines when it printed no Error: line', () => {
    expect(stderrGist('a\nb\nc\nd\n')).toBe('b c d');
  });
});

describe('stage 1 helpers', () => {
  it('finds credentials in added lines only, by file and line, without the value', () => {
    const diff = [
      'diff --git a/src/a.js b/src/a.js',
      '--- a/src/a.js',
      '+++ b/src/a.js',
      '@@ -1,2 +10,3 @@',
      ' const x = 1;',
      "-const old = 'AKIAABCDEFGHIJKLMNOP';",
      "+const key = 'AKIAABCDEFGHIJKLMNOP';",
      '+const fine = 2;',
      "+const password = 'hunter2hunter2';",
      '+-----BEGIN OPENSSH PRIVATE KEY-----',
    ].join('\n');
    expect(findSecrets(diff)).toEqual([
      'src/a.js:11 looks like a AWS access key id',
      'src/a.js:13 looks like a assigned secret',
      'src/a.js:14 looks like a private key',
    ]);
  });
  it('an added line starting with "++ " is content, never a file header: scanned, and no secret leaks', () => {
    const diff = [
      'diff --git a/src/a.js b/src/a.js',
      'index 1111111..2222222 100644',
      '--- a/src/a.js',
      '+++ b/src/a.js',
      '@@ -0,0 +1,3 @@',
      '+++ AKIAABCDEFGHIJKLMNOP',
      '+const fine = 1;',
      "+const token = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';",
      'diff --git a/b.txt b/b.txt',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/b.txt',
      '@@ -0,0 +1 @@',
      '+--- not a header either',
    ].join('\n');
    const found = findSecrets(diff);
    expect(found).toEqual([
      'src/a.js:1 looks like a AWS access key id',
      'src/a.js:3 looks like a GitHub token',
    ]);
    expect(found.join('\n')).not.toContain('ABCDEFGHIJKLMNOP');
  });
  it('a file whose name holds a credential is named masked', () => {
    const diff = [
      'diff --git a/keys/AKIAABCDEFGHIJKLMNOP.txt b/keys/AKIAABCDEFGHIJKLMNOP.txt',
      '--- /dev/null',
      '+++ b/keys/AKIAABCDEFGHIJKLMNOP.txt',
      '@@ -0,0 +1 @@',
      "+secret = 'abcdefghijkl'",
    ].join('\n');
    const found = findSecrets(diff);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^keys\/AKIA\*+\.txt:1 looks like a assigned secret$/);
  });
  it('reads the test count from the last match, colour codes stripped', () => {
    expect(countTests('\u001b[32m3 passed\u001b[0m\nTests  12 passed (12)', '(\\d+) passed')).toBe(12);
    expect(countTests('# pass 7', '# pass (\\d+)')).toBe(7);
    expect(countTests('no summary', '(\\d+) passed')).toBeNull();
  });
});
