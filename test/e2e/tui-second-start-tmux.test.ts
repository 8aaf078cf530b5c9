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
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answer, proceedGate, ready } from '../support/planner.js';
import { CLI, FAKE_CLAUDE, task } from '../support/project.js';
import { TmuxSession } from '../support/tmux.js';
import { happyScenario, PRD, qaStep, specStep } from '../support/workflow.js';

// Issue 16 item 12 in a real terminal: a project whose only Relais config is the one `relais init`
// just wrote, untracked (the defaults: the OS sandbox on, the checks from package.json). `n` at
// the spec gate; `ralphy start` again and `y`: the ticks run, never BLOCKED_MISSING_CONFIG.
// The agent is the scripted fake, found on PATH as `claude` like a user's. Its call log must
// outlive each sandboxed call, and the sandbox lets an agent write nothing of HOME but its login
// file (~/.claude is a private overlay), so the one line added to init's config makes the
// harness folder writable (`writable_outside`), as a user would for a folder an agent must write.
// `ralphy start` setting up a project that has no config at all, in a real terminal, is the demo's
// own first step (tui-tmux.test.ts: the real claude, whose scripted model keeps no files).

let tmux: TmuxSession | null = null;
let base: string | null = null;
afterEach(() => {
  tmux?.kill();
  tmux = null;
  if (base) rmSync(base, { recursive: true, force: true });
  base = null;
});

const implementing = (id: string, file: string) =>
  task({
    task_id: id,
    intent: `Implement ${file}`,
    scope: {
      allowed_globs: [file],
      forbidden_globs: [],
      allow_new_files: false,
      allow_lockfile_changes: false,
    },
    verification: { fast: ['test'], slow: [] },
  });

/** The footer (its `a abort`) is drawn last: with it on screen the whole frame is. */
const whole = (screen: string) => /a\s+abort/.test(screen);

describe('a second start after a rejected spec, on a project whose config init just wrote', () => {
  it('relais init, ralphy start, n at the spec gate, ralphy start again, y: the ticks run', async () => {
    expect(TmuxSession.available(), 'tmux is required (apt-get install tmux)').toBe(true);
    base = mkdtempSync(join(tmpdir(), 'relais-second-start-'));
    const repo = join(base, 'repo');
    const home = join(base, 'home');
    const bin = join(base, 'bin');
    const harness = join(base, 'harness');
    for (const dir of [repo, bin, harness]) mkdirSync(dir, { recursive: true });
    const files: Record<string, string> = {
      'PRD.md': PRD,
      'src/a.ts': 'export const a = 1;\n',
      'src/b.ts': 'export const b = 1;\n',
      'package.json': `${JSON.stringify({ name: 'greeting', private: true, scripts: { test: 'node -e "process.exit(0)"' } }, null, 2)}\n`,
    };
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(join(repo, path, '..'), { recursive: true });
      writeFileSync(join(repo, path), content);
    }
    const git = (...args: string[]) => {
      const r = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'initial');
    writeFileSync(join(bin, 'claude'), `#!/bin/sh\nexec node ${FAKE_CLAUDE} "$@"\n`, { mode: 0o755 });

    const [writeA, writeB] = (happyScenario().builder ?? []) as Array<Record<string, unknown>>;
    const ok = { summary: 'done', files_intended: ['src/a.ts'], commands_ran: [], notes: [] };
    writeFileSync(
      join(harness, 'scenario.json'),
      JSON.stringify({
        // The first start plans: asks to proceed (Ctrl-P says yes), then is ready.
        planner: [answer(proceedGate()), answer(ready('Greet people by name.', []))],
        spec: [specStep(), specStep()],
        orchestrator: [implementing('T1', 'src/a.ts'), implementing('T2', 'src/b.ts')].map((t) => ({
          result_json: t,
        })),
        builder: [
          { ...writeA, result_json: ok },
          { ...writeB, result_json: { ...ok, files_intended: ['src/b.ts'] } },
        ],
        qa: [qaStep()],
      }),
    );
    expect(existsSync(join(repo, 'relais.config.json'))).toBe(false);

    tmux = new TmuxSession('second-start', 120, 40);
    // Widens init's config by the harness folder, keeping everything else init chose.
    const allowHarness = join(base, 'allow-harness.cjs');
    writeFileSync(
      allowHarness,
      `const fs = require('node:fs');
const c = JSON.parse(fs.readFileSync('relais.config.json', 'utf8'));
const mode = typeof c.sandbox === 'string' ? c.sandbox : c.sandbox.mode;
c.sandbox = { ...(typeof c.sandbox === 'object' ? c.sandbox : {}), mode, writable_outside: [${JSON.stringify(harness)}] };
fs.writeFileSync('relais.config.json', JSON.stringify(c, null, 2));
`,
    );
    tmux.start(
      `cd ${repo} && node ${CLI} init </dev/null && node ${allowHarness} && node ${CLI} start; echo "START_EXIT=$?"; node ${CLI} start; echo "START2_EXIT=$?"; read -r _`,
      {
        PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
        HOME: home,
        XDG_CONFIG_HOME: join(home, '.config'),
        RELAIS_FAKE_SCENARIO: join(harness, 'scenario.json'),
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
        // As root (here), Claude Code's bypassPermissions needs to be told it runs in a sandbox.
        IS_SANDBOX: '1',
        CI: undefined,
        CONTINUOUS_INTEGRATION: undefined,
        TERM: 'xterm-256color',
      },
    );

    await tmux.waitFor((s) => /Ctrl-P\s+proceed/.test(s), "the planner's question", 120_000);
    tmux.keys('C-p');
    await tmux.waitFor(
      (s) => s.includes('Approve the specification') && /y\s+approve/.test(s) && whole(s),
      'the spec gate',
    );
    // init's defaults: the sandbox on, the checks from package.json; the config still untracked.
    expect(tmux.written()).toContain('created  relais.config.json');
    const config = JSON.parse(readFileSync(join(repo, 'relais.config.json'), 'utf8'));
    expect(
      config.sandbox === 'bwrap' || config.sandbox?.mode === 'bwrap',
      JSON.stringify(config.sandbox),
    ).toBe(true);
    expect(config.verification.templates.map((t: { id: string }) => t.id)).toEqual(['test']);
    tmux.keys('n');
    await tmux.waitFor((s) => s.includes('Why do you reject?'), 'the reason prompt');
    tmux.keys('Enter');
    await tmux.waitFor((s) => s.includes('REJECTED') && s.includes('q  quit'), 'the rejected spec');
    tmux.keys('q');
    await tmux.waitFor((s) => s.includes('START_EXIT=1'), 'the end of the first ralphy start');

    // The second start: a new workflow, whose ticks run with the config the first one set up. The
    // PRD's planning is kept (relais/planner/sessions), so it goes straight to the spec.
    await tmux.waitFor(
      (s) => s.includes('Approve the specification') && /y\s+approve/.test(s) && whole(s),
      'the spec gate again',
    );
    tmux.keys('y');
    const atQa = await tmux.waitFor(
      (s) => s.includes('Approve the QA report') && /y\s+approve/.test(s) && whole(s),
      'the QA gate after both tasks',
      240_000,
    );
    expect(atQa).toContain('2/2 verified');
    expect(atQa).toMatch(/1 Greet by name\s+agent ◐ runner ✓/);
    expect(tmux.written()).not.toContain('BLOCKED_MISSING_CONFIG');
    // What the runner recorded: two ticks, both verified, in the sandbox the defaults asked for.
    const history = join(repo, 'relais/history');
    const reports = readdirSync(history)
      .filter((n) => /^\d{8}T/.test(n))
      .map((n) => JSON.parse(readFileSync(join(history, n, 'report.json'), 'utf8')));
    expect(reports.map((r) => r.code)).toEqual(['SUCCESS', 'SUCCESS']);
    expect(reports.map((r) => r.sandbox)).toEqual(['bwrap', 'bwrap']);
    tmux.keys('C-c');
    await tmux.waitFor((s) => s.includes('START2_EXIT=130'), 'the second ralphy start, stopped');
  }, 420_000);
});
