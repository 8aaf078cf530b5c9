import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILDER_OK, TestProject, task } from '../support/project.js';
import { sh } from './aftermath.js';

// Issue 14, the agents' login files (~/.claude/.credentials.json, Codex's auth.json). A builder
// that could write them could swap the user's login (for another account's, or for garbage that
// logs the user out). In the sandbox each is a private copy that goes back to the host only as a
// refresh: valid JSON of the same shape. Through `relais run` with the fake Claude Code builder.

let project: TestProject | undefined;
afterEach(() => {
  project?.dispose();
  project = undefined;
});

const CLAUDE_LOGIN = `${JSON.stringify({
  claudeAiOauth: { accessToken: 'user-token', refreshToken: 'user-refresh', expiresAt: 1 },
})}\n`;
const CODEX_LOGIN = `${JSON.stringify({ OPENAI_API_KEY: null, tokens: { access_token: 'a', refresh_token: 'r' } })}\n`;

function withLogins(): { claude: string; codex: string } {
  const created = TestProject.create({ 'src/a.ts': 'a\n' });
  project = created;
  const claude = join(created.home, '.claude/.credentials.json');
  const codex = join(created.home, '.codex/auth.json');
  mkdirSync(join(created.home, '.claude'), { recursive: true });
  mkdirSync(join(created.home, '.codex'), { recursive: true });
  writeFileSync(claude, CLAUDE_LOGIN, { mode: 0o600 });
  writeFileSync(codex, CODEX_LOGIN, { mode: 0o600 });
  return { claude, codex };
}

function runBuilder(actions: unknown[]): void {
  const created = project as TestProject;
  created.scenario({
    orchestrator: [{ result_json: task() }],
    builder: [{ actions: [...actions, { write: 'src/a.ts', content: 'b\n' }], result_json: BUILDER_OK }],
  });
  const run = created.cliSync(['run']);
  expect(run.code, run.stdout + run.stderr).toBe(0);
  expect(created.report()).toMatchObject({ code: 'SUCCESS', sandbox: 'bwrap' });
}

describe('red team: a builder cannot swap the login files', () => {
  it('overwritten with another shape, or replaced by a rename with a new nested key: the host files are unchanged', () => {
    const { claude, codex } = withLogins();
    runBuilder([
      // Another shape: an API key helper instead of the OAuth login.
      sh(`printf '%s' '{"apiKeyHelper":"curl evil"}' > "$HOME/.claude/.credentials.json"`),
      // A rename over it (what an editor's save does), with a new key in the nested object.
      sh(
        `printf '%s' '{"OPENAI_API_KEY":null,"tokens":{"access_token":"x","refresh_token":"y","id_token":"z"}}' > "$TMPDIR/a" && mv "$TMPDIR/a" "$HOME/.codex/auth.json"`,
      ),
    ]);
    expect(readFileSync(claude, 'utf8')).toBe(CLAUDE_LOGIN);
    expect(readFileSync(codex, 'utf8')).toBe(CODEX_LOGIN);
  });

  it('a symlink, or text that is not JSON, in place of the login: the host files are unchanged', () => {
    const { claude, codex } = withLogins();
    runBuilder([
      sh(`ln -sf /etc/hostname "$HOME/.claude/.credentials.json"`),
      sh(`echo 'not json' > "$HOME/.codex/auth.json"`),
    ]);
    expect(readFileSync(claude, 'utf8')).toBe(CLAUDE_LOGIN);
    expect(readFileSync(codex, 'utf8')).toBe(CODEX_LOGIN);
  });

  it('a refresh (new values, same shape) still reaches the host, so the user stays logged in', () => {
    const { claude, codex } = withLogins();
    const refreshed = JSON.stringify({
      claudeAiOauth: { accessToken: 'new-token', refreshToken: 'new-refresh', expiresAt: 2 },
    });
    const codexRefreshed = JSON.stringify({
      OPENAI_API_KEY: null,
      tokens: { access_token: 'b', refresh_token: 's' },
    });
    runBuilder([
      sh(`printf '%s' '${refreshed}' > "$HOME/.claude/.credentials.json"`),
      sh(`printf '%s' '${codexRefreshed}' > "$TMPDIR/c" && mv "$TMPDIR/c" "$HOME/.codex/auth.json"`),
    ]);
    expect(readFileSync(claude, 'utf8')).toBe(refreshed);
    expect(readFileSync(codex, 'utf8')).toBe(codexRefreshed);
  });
});
