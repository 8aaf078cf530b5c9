import { afterEach, describe, expect, it } from 'vitest';
import { CLI, TestProject } from '../support/project.js';
import { TmuxSession } from '../support/tmux.js';

// `relais cycle init` on a real terminal (tmux): the brainstorm asks, the human types, the four
// documents are shown and written only after the y (seed 003 P2, human-driven).

let project: TestProject | null = null;
let tmux: TmuxSession | null = null;
afterEach(() => {
  tmux?.kill();
  tmux = null;
  project?.dispose();
  project = null;
});

async function answer(session: TmuxSession, prompt: string, lines: readonly string[]): Promise<void> {
  await session.waitFor((s) => s.includes(prompt), `"${prompt}"`);
  for (const line of lines) {
    if (line) session.keys('-l', line);
    session.keys('Enter');
  }
}

describe('relais cycle init at a real terminal', () => {
  it('a greenfield brainstorm typed by a human, confirmed with y, writes and commits the documents', async () => {
    expect(TmuxSession.available(), 'tmux is required (apt-get install tmux)').toBe(true);
    project = TestProject.create({ 'README.md': '# new\n' });
    project.scenario({});
    tmux = new TmuxSession('cycle-init', 120, 60);
    tmux.start(`cd ${project.root} && node ${CLI} cycle init; echo "INIT_EXIT=$?"; read -r _`, {
      ...project.env,
      CI: undefined,
      TERM: 'dumb',
    });
    await answer(tmux, 'What are you building', ['A tiny greeting library.']);
    await answer(tmux, 'Who uses it', ['CLI authors.']);
    await answer(tmux, 'How will you know it works', ['greet works', '']);
    await answer(tmux, 'What is out of scope', ['']);
    await answer(tmux, 'Stack, platforms', ['Node 20']);
    await answer(tmux, 'Constraints', ['']);
    await answer(tmux, 'Requirements (what it must do)', ['greet(name) says hello', '']);
    await answer(tmux, 'P1 name', ['basics']);
    await answer(tmux, 'P1 goal', ['Greet people']);
    await answer(tmux, 'P1 delivers which requirements', ['R1']);
    await answer(tmux, 'P1 success criteria', ['greet returns Hello', '']);
    await answer(tmux, 'Write these documents in specs/? [y/N]', ['y']);
    const end = await tmux.waitFor((s) => s.includes('INIT_EXIT='), 'the exit code');
    expect(end).toContain('INIT_EXIT=0');
    expect(end).toContain('Next: relais cycle --loop');
    expect(project.read('specs/ROADMAP.md')).toContain('## P1: basics');
    expect(project.read('specs/VISION.md')).toContain('A tiny greeting library.');
    expect(project.exists('specs/P2_DONE')).toBe(true);
    expect(project.status()).toBe('');
  });

  it('Ctrl-C during the brainstorm ends it through the engine session: nothing written, exit 130', async () => {
    expect(TmuxSession.available(), 'tmux is required (apt-get install tmux)').toBe(true);
    project = TestProject.create({ 'README.md': '# new\n' });
    project.scenario({});
    const head = project.head();
    tmux = new TmuxSession('cycle-init-stop', 120, 60);
    tmux.start(`cd ${project.root} && node ${CLI} cycle init; echo "INIT_EXIT=$?"; read -r _`, {
      ...project.env,
      CI: undefined,
      TERM: 'dumb',
    });
    await answer(tmux, 'What are you building', ['A tiny greeting library.']);
    await tmux.waitFor((s) => s.includes('Who uses it'), 'the second question');
    tmux.keys('C-c');
    const end = await tmux.waitFor((s) => s.includes('INIT_EXIT='), 'the exit code');
    expect(end).toContain('INIT_EXIT=130');
    // The one owner of interrupts (cli/engine-session.ts) says what the first Ctrl-C does.
    expect(end).toContain('SIGINT received: stopping cycle init; nothing is written');
    expect(end).toContain('Brainstorm stopped.');
    for (const f of ['specs/VISION.md', 'specs/P2_DONE', 'relais/cycle/STATE.json'])
      expect(project.exists(f)).toBe(false);
    expect(project.head()).toBe(head);
  });
});
