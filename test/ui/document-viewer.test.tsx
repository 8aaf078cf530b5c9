import { describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import type { GateRequest } from '../../source/engine/gates.js';
import { documentRows, hardWrap } from '../../source/ui/panels/DocumentViewer.js';
import { KEY, renderApp, Script } from './helpers.js';

// Issue 16 item 5: at a gate, what is approved can be read in full inside the app.

const SPEC = Array.from({ length: 100 }, (_, i) => `spec line ${i + 1}`).join('\n');
const LONG = `${'word '.repeat(60)}END-OF-LONG-LINE`;
const request: GateRequest = {
  gate: 'spec',
  title: 'Approve the specification and tasks?',
  lines: ['Files generated:', '  - specs/SPEC.md'],
  answer: 'yes_no',
  documents: [
    { name: 'specs/SPEC.md', text: SPEC },
    { name: 'specs/TASKS.md', text: `1. Parse\n${LONG}\n\u001b[31mred\u001b[0m` },
  ],
};

describe('the document viewer', () => {
  test('wraps long lines instead of cutting them, and keeps indents', () => {
    expect(hardWrap('abcdefghij', 4)).toEqual(['abcd', 'efgh', 'ij']);
    expect(hardWrap('  indented', 20)).toEqual(['  indented']);
    const rows = documentRows({ name: 'x', text: LONG }, 40);
    expect(rows.join('')).toBe(LONG);
    expect(rows.every((r) => r.length <= 40)).toBe(true);
    // An escape sequence in a document is shown inert, never sent to the terminal.
    expect(documentRows({ name: 'y', text: '\u001b[31mred\u001b[2J' }, 40)).toEqual(['red']);
  });

  test('v opens the documents; they scroll, switch and close; the answer is given after', async () => {
    const s = new Script();
    const app = renderApp(s.store, { columns: 100, rows: 30 });
    const answer = app.controller.gates.ask(request, new AbortController().signal);
    await app.waitFor('read in full: specs/SPEC.md, specs/TASKS.md');
    app.press('v');
    await app.waitFor('[specs/SPEC.md]');
    // The body is 27 rows; 25 of them are text.
    expect(app.frame()).toContain('spec line 1\n'.trim());
    expect(app.frame()).toContain('1–25 of 100');
    expect(app.frame()).not.toContain('spec line 26');
    app.press(KEY.pageDown);
    await app.waitFor('25–49 of 100');
    expect(app.frame()).toContain('spec line 49');
    expect(app.frame()).not.toMatch(/spec line 24\b/);
    app.press(KEY.end);
    await app.waitFor('76–100 of 100');
    expect(app.frame()).toContain('spec line 100');
    // y does not answer from inside the viewer: the human closes it first.
    app.press('y');
    await app.waitFor('Esc closes the viewer');
    app.press(KEY.tab);
    await app.waitFor('[specs/TASKS.md]');
    expect(app.frame()).toContain('END-OF-LONG-LINE');
    expect(app.frame()).toContain('red');
    app.press(KEY.escape);
    await app.waitFor((f) => !f.includes('[specs/TASKS.md]'), 'the viewer closed');
    expect(app.frame()).toContain('Approve the specification and tasks?');
    app.press('y');
    await expect(answer).resolves.toEqual({ decision: 'approve', by: 'human' });
    app.unmount();
  });
});
