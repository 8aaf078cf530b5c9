import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, type TestProject, task } from '../support/project.js';
import { TmuxSession } from '../support/tmux.js';
import { happyScenario, workflowFile, workflowProject } from '../support/workflow.js';

// Issue 16 in a real terminal (tmux): the app shows only what the runner decided (item 1), and an
// error before the work starts is plain text, whole, at 80×24 (item 4).

let tmux: TmuxSession | null = null;
let cleanup: Array<() => void> = [];
afterEach(() => {
  tmux?.kill();
  tmux = null;
  for (const fn of cleanup) fn();
  cleanup = [];
});

const interactive = (extra: Record<string, string | undefined> = {}) => ({
  CI: undefined,
  CONTINUOUS_INTEGRATION: undefined,
  TERM: 'xterm-256color',
  ...extra,
});

describe('issue 16 in a real terminal', () => {
  it('not a git repository, at 80×24: plain text with its whole fix, never the full-screen app', async () => {
    expect(TmuxSession.available(), 'tmux is required (apt-get install tmux)').toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'relais-not-a-repo-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    tmux = new TmuxSession('not-a-repo', 80, 24);
    tmux.start(`cd ${dir} && node ${CLI} start; echo "START_EXIT=$?"; read -r _`, interactive());
    const after = await tmux.waitFor((s) => s.includes('START_EXIT='), 'the end of ralphy start', 100_000);
    expect(tmux.written()).not.toContain('\u001b[?1049h');
    expect(after).not.toContain('╭─');
    expect(after).not.toContain('START_EXIT=0');
    // The fix wraps at the terminal's edge but is all there (joined back without the line breaks).
    const text = after.replace(/\n/g, '');
    expect(text).toContain('Fix: Run ralphy start at the root of a git repository with at least one commit');
  }, 120_000);

  it('a builder that writes outside its scope: the Tasks panel never shows ✓ and says 0 verified', async () => {
    const project: TestProject = workflowProject((config) => {
      config.workflow.max_ticks_per_task = 1;
    });
    cleanup.push(() => project.dispose());
    const outside = task({
      task_id: 'T1',
      scope: {
        allowed_globs: ['src/a.ts'],
        forbidden_globs: [],
        allow_new_files: false,
        allow_lockfile_changes: false,
      },
    });
    const scenario = happyScenario();
    scenario.orchestrator = [{ result_json: outside }];
    scenario.builder = [
      {
        actions: [{ write: 'src/b.ts', content: 'sneaky\n' }],
        result_json: { summary: 'done', files_intended: ['src/a.ts'], commands_ran: [], notes: [] },
      },
    ];
    project.scenario(scenario);
    tmux = new TmuxSession('verdict', 120, 40);
    const env = interactive({ ...project.env, CI: undefined, IS_SANDBOX: '1' });
    tmux.start(`cd ${project.root} && node ${CLI} start --yes; echo "START_EXIT=$?"; read -r _`, env);

    const final = await tmux.waitFor(
      (s) => s.includes('q  quit') && s.includes('FAILED'),
      'the final screen',
      280_000,
    );
    expect(workflowFile(project).tasks[0]).toMatchObject({ verdict: 'rejected' });
    // The task's own row in the Tasks panel (left column; at this width it shows marks).
    const row = final.split('\n').find((l) => /\s1 Greet by name\s+agent/.test(l)) ?? '';
    const cell = row.split('││')[0] ?? '';
    expect(cell, final).toContain('Greet by name');
    expect(cell).not.toContain('✓');
    expect(cell).toMatch(/runner ✗/);
    expect(final).toMatch(/ 0\/\d+ verified/);
    tmux.keys('q');
    await tmux.waitFor((s) => s.includes('START_EXIT='), 'the end of ralphy start');
  }, 420_000);
});
