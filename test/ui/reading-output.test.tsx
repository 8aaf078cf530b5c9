import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { AgentOutcome, AgentRequest } from '../../source/engine/agents/agent-run.js';
import {
  listTranscripts,
  readTranscript,
  transcribedRunner,
} from '../../source/engine/agents/transcripts.js';
import { EngineBus } from '../../source/engine/events.js';
import type { GateRequest } from '../../source/engine/gates.js';
import { createUiController } from '../../source/ui/keys/controller.js';
import type { AgentLogPort } from '../../source/ui/logs/agent-logs.js';
import { enter, KEY, renderApp, Script } from './helpers.js';

// Issue 16 item 11: the full output of the current and past agent runs is read inside the app:
// `o` shows all the kept output over the whole screen, wrapped and scrollable; `l` lists the runs
// the engine kept in history and opens one in the viewer.

let dir: string | null = null;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

const LONG = `The builder explains: ${'because '.repeat(40)}END-OF-THE-LONG-LINE`;

function running(): Script {
  return new Script().emit([
    enter('IMPLEMENTATION'),
    { type: 'agent.started', role: 'builder', attempt: 1, command: 'claude', model: 'opus' },
    ...Array.from({ length: 60 }, (_, i) => ({
      type: 'agent.output' as const,
      role: 'builder' as const,
      text: `step ${i + 1}`,
      kind: 'text' as const,
    })),
    { type: 'agent.output', role: 'builder', text: LONG, kind: 'text' },
  ]);
}

/** Transcripts written by the engine's own wrapper around a stand-in agent (its lines scripted). */
async function transcripts(): Promise<{ port: AgentLogPort; dir: string }> {
  dir = mkdtempSync(join(tmpdir(), 'relais-app-logs-'));
  const where = dir;
  let clock = Date.UTC(2025, 0, 1, 10, 0, 0);
  for (const [role, lines] of [
    ['spec', ['Reading the PRD.', 'SPEC.md is written.']],
    ['builder', ['Working on src/a.ts.', LONG]],
  ] as const) {
    const runner = transcribedRunner(
      {
        async run(request: AgentRequest): Promise<AgentOutcome> {
          for (const line of lines) request.onOutputLine?.(line);
          return {
            text: 'ok',
            failure: null,
            costUsd: 0.02,
            costReported: true,
            errorText: null,
            apiErrorStatus: null,
            permissionDenials: [],
            numTurns: 1,
            process: { durationMs: 3000 } as AgentOutcome['process'],
          };
        },
      },
      where,
      () => {
        clock += 60_000;
        return new Date(clock);
      },
    );
    await runner.run({ ...baseRequest, role }, new EngineBus());
  }
  return {
    dir: where,
    port: { list: () => listTranscripts(where, where), read: (id) => readTranscript(where, id) },
  };
}

const baseRequest: AgentRequest = {
  role: 'builder',
  attempt: 1,
  systemPrompt: '',
  userPrompt: '',
  model: 'opus',
  fallbackModel: null,
  maxTurns: 1,
  maxBudgetUsd: 1,
  tools: [],
  permissionMode: 'plan',
  streaming: true,
  cwd: '/',
  timeoutMs: 1000,
  signal: new AbortController().signal,
};

describe('reading what the agents said', () => {
  test('o: all the output over the screen, the long line whole, scrolled back to the first line', async () => {
    const s = running();
    s.store.flush();
    const app = renderApp(s.store, { columns: 100, rows: 30 });
    await app.waitFor('Output · builder');
    // The panel wraps the long line too (issue 16 item 4).
    expect(app.frame().replace(/[│\s]/g, '')).toContain('END-OF-THE-LONG-LINE');
    app.press('o');
    await app.waitFor('All output · builder');
    const frame = app.frame();
    expect(frame).not.toContain('Phases');
    expect(frame.replace(/[│\s]/g, '')).toContain(LONG.replace(/\s/g, ''));
    app.press(KEY.home);
    await app.waitFor((f) => /step 1\b/.test(f) && f.includes('▶ IMPLEMENTATION'), 'the first lines');
    app.press(KEY.escape);
    await app.waitFor((f) => f.includes('Phases') && !f.includes('All output'), 'the panels again');
    app.unmount();
  });

  test('l: the runs kept in history, newest first; Enter reads one whole; r reads it again; Esc goes back', async () => {
    const logs = await transcripts();
    const s = running();
    s.store.flush();
    const controller = createUiController({
      store: s.store,
      onAbort: () => {},
      onForceQuit: () => {},
      logs: logs.port,
    });
    const app = renderApp(s.store, { columns: 100, rows: 30, controller });
    await app.waitFor('Output · builder');
    app.press('l');
    await app.waitFor('2 kept');
    const list = app.frame();
    // Newest first: the builder ran a minute after the spec agent.
    expect(list.indexOf('builder')).toBeLessThan(list.indexOf('spec'));
    expect(list).toMatch(/› \d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}builder/);
    app.press(KEY.down);
    await app.waitFor((f) => /› \S+ \S+ {2}spec/.test(f), 'the spec run picked');
    app.press(KEY.up);
    await app.waitFor((f) => /› \S+ \S+ {2}builder/.test(f), 'the builder run picked');
    app.press(KEY.enter);
    await app.waitFor('Working on src/a.ts.');
    const viewer = app.frame();
    expect(viewer).toMatch(/\[\d{8}T\d{6}Z-[0-9a-f]{6}-builder\.log\]/);
    expect(viewer.replace(/[│\s]/g, '')).toContain(LONG.replace(/\s/g, ''));
    expect(viewer).toMatch(/── finished in 3\.0s · \$0\.0200/);
    // A running agent adds lines: r reads the file again.
    const [builder] = await logs.port.list();
    appendFileSync(join(logs.dir, builder?.id ?? ''), 'a line written later\n');
    app.press('r');
    await app.waitFor('a line written later');
    app.press(KEY.escape);
    await app.waitFor((f) => f.includes('Agent runs') && f.includes('2 kept'), 'the list again');
    app.press(KEY.escape);
    await app.waitFor((f) => f.includes('Phases') && !f.includes('Agent runs'), 'the panels again');
    app.unmount();
  });

  test('l without a history to read says so; a question under the output says it waits', async () => {
    const s = running();
    s.store.flush();
    const app = renderApp(s.store, { columns: 100, rows: 30 });
    app.press('l');
    await app.waitFor('no agent runs are kept for this command');
    app.press(KEY.escape);
    // Esc and a letter in one read would be Alt and the letter: the next key waits for the frame.
    await app.waitFor((f) => !f.includes('Agent runs'), 'the list closed');
    app.press('o');
    await app.waitFor('All output');
    const request: GateRequest = { gate: 'qa', title: 'Approve the QA report?', lines: [], answer: 'yes_no' };
    const answer = app.controller.gates.ask(request, new AbortController().signal);
    await app.waitFor('A question waits (Esc)');
    app.press(KEY.escape);
    await app.waitFor('Approve the QA report?');
    app.press('y');
    await expect(answer).resolves.toMatchObject({ decision: 'approve', by: 'human' });
    app.unmount();
  });
});
