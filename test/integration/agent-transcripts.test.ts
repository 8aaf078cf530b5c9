import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentOutcome, AgentRequest, AgentRunner } from '../../source/engine/agents/agent-run.js';
import {
  listTranscripts,
  readTranscript,
  TRANSCRIPT_MAX_BYTES,
  TRANSCRIPTS_KEPT,
  transcribedRunner,
} from '../../source/engine/agents/transcripts.js';
import { EngineBus } from '../../source/engine/events.js';
import { listAgentTranscripts, readAgentTranscript } from '../../source/engine/session/agent-transcripts.js';
import { builderWrites, TestProject, task } from '../support/project.js';

// Issue 16 item 11: each agent run leaves its transcript in relais/history/agents, whole (the bus
// cuts lines at 400 characters and messages at 50 lines), capped, and the app lists and reads them.

let project: TestProject | null = null;
let dir: string | null = null;
afterEach(() => {
  project?.dispose();
  project = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

describe('agent transcripts', () => {
  it('a judged tick: the orchestrator and the builder each leave a transcript, every line whole', async () => {
    project = TestProject.create();
    const long = `A long line of reasoning: ${'word '.repeat(200)}end of the long line.`;
    const many = Array.from({ length: 80 }, (_, i) => `line ${i + 1} of a long message`).join('\n');
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'export const a = 2;\n' }, { say: `${long}\n${many}` })],
    });
    const run = project.cliSync(['run', '--json']);
    expect(project.report().code, run.stdout + run.stderr).toBe('SUCCESS');

    const entries = await listAgentTranscripts(project.root, project.env);
    expect(entries.map((e) => e.role).sort()).toEqual(['builder', 'orchestrator']);
    for (const entry of entries) {
      expect(entry.path).toMatch(/^relais\/history\/agents\/\d{8}T\d{6}Z-[0-9a-f]{6}-\w+\.log$/);
      expect(entry.running).toBe(false);
      expect(entry.bytes).toBe(statSync(join(project.root, entry.path)).size);
    }
    const builder = entries.find((e) => e.role === 'builder');
    const text = await readAgentTranscript(project.root, project.env, builder?.id ?? '');
    expect(text.split('\n')[0]).toMatch(/^── builder · model \S+ · started \d{4}-/);
    // The bus would have cut both: the 1,000-character line at 400, the message after 50 lines.
    expect(text).toContain(long);
    expect(text).toContain('line 80 of a long message');
    expect(text).toMatch(/── finished in \d+\.\ds · \$\d+\.\d{4}\n$/);
    // A transcript is a record for humans: no escape sequence, nothing in git.
    expect(project.status()).toBe('');
    // The app asks only for names it was given.
    await expect(readAgentTranscript(project.root, project.env, '../../relais.config.json')).rejects.toThrow(
      /not a transcript/,
    );
  });

  it('history turned off: no transcript is written', async () => {
    project = TestProject.create();
    project.commitConfig((c) => {
      c.history.enabled = false;
    });
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [builderWrites({ 'src/a.ts': 'export const a = 2;\n' })],
    });
    project.cliSync(['run', '--json']);
    expect(project.report().code).toBe('SUCCESS');
    expect(await listAgentTranscripts(project.root, project.env)).toEqual([]);
  });

  it('capped: 1 MB a run (the rest counted), the newest 60 runs; escape codes never kept', async () => {
    dir = mkdtempSync(join(tmpdir(), 'relais-transcripts-'));
    const where = dir;
    // A stand-in agent: the wrapper's own behaviour is under test, not an agent CLI's.
    const chatty = (lines: string[]): AgentRunner => ({
      async run(request: AgentRequest): Promise<AgentOutcome> {
        for (const line of lines) request.onOutputLine?.(line);
        return outcome();
      },
    });
    let clock = Date.UTC(2025, 0, 1, 10, 0, 0);
    const now = () => {
      clock += 1000;
      return new Date(clock);
    };
    const line = `${'x'.repeat(999)}`;
    const big = transcribedRunner(chatty(Array.from({ length: 1500 }, () => line)), where, now);
    await big.run(request(), new EngineBus());
    const [first] = readdirSync(where);
    const text = readFileSync(join(where, first ?? ''), 'utf8');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(TRANSCRIPT_MAX_BYTES + 200);
    expect(text).toMatch(/… \d+ more line\(s\) not kept \(a transcript keeps 1 MB a run\)\n$/);

    const hostile = transcribedRunner(chatty(['\u001b[2J\u001b]52;c;aGk=\u0007cleared?']), where, now);
    await hostile.run(request(), new EngineBus());
    for (let run = 0; run < TRANSCRIPTS_KEPT + 5; run++) await hostile.run(request(), new EngineBus());
    const kept = await listTranscripts(where, where);
    expect(kept).toHaveLength(TRANSCRIPTS_KEPT);
    // Newest first; the oldest (the big one) went first.
    expect(kept.map((e) => e.id)).toEqual([...kept.map((e) => e.id)].sort().reverse());
    expect(kept.some((e) => e.id === first)).toBe(false);
    const newest = await readTranscript(where, kept[0]?.id ?? '');
    expect(newest).toContain('cleared?');
    expect(newest).not.toContain('\u001b');
    expect(newest).not.toContain('\u0007');
  });
});

function request(): AgentRequest {
  return {
    role: 'builder',
    attempt: 1,
    systemPrompt: '',
    userPrompt: '',
    model: 'test',
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
}

function outcome(): AgentOutcome {
  return {
    text: 'ok',
    failure: null,
    costUsd: 0.01,
    costReported: true,
    errorText: null,
    apiErrorStatus: null,
    permissionDenials: [],
    numTurns: 1,
    process: { durationMs: 1200 } as AgentOutcome['process'],
  };
}
