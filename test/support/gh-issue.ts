import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * A `gh` stand-in on PATH that serves one issue thread from a JSON file (`gh issue view <n> --json
 * …`) and records what is posted (`gh issue comment <n> --body-file F`), appending it to the
 * thread as the logged-in user, as GitHub would; `gh api user --jq .login` prints that user. A real program (a child process the runner
 * starts), standing in only for the network. RELAIS_GH_NOAUTH and RELAIS_GH_COMMENT_FAIL make it
 * fail the way gh does.
 */

export interface GhThread {
  title: string;
  body: string;
  author: { login: string };
  assignees: Array<{ login: string }>;
  comments: Array<{
    id: string;
    author: { login: string };
    body: string;
    createdAt: string;
    /** What GitHub says of the author's access (OWNER, MEMBER, COLLABORATOR, NONE...). */
    authorAssociation?: string;
  }>;
}

export interface GhStandIn {
  readonly bin: string;
  readonly threadPath: string;
  readonly env: NodeJS.ProcessEnv;
  thread(): GhThread;
  /** A human writes in the issue (with their access to the repository, when it matters). */
  comment(login: string, body: string, authorAssociation?: string): void;
  /** Every call: argv, and the body of a posted comment. */
  calls(): Array<{ args: string[]; body?: string }>;
  posted(): string[];
}

export function ghStandIn(base: string, thread: Omit<GhThread, 'comments'>, loggedInAs = 'dev'): GhStandIn {
  const bin = join(base, 'gh-bin');
  mkdirSync(bin, { recursive: true });
  const threadPath = join(base, 'issue.json');
  const logPath = join(base, 'gh-issue.log');
  writeFileSync(threadPath, JSON.stringify({ ...thread, comments: [] }, null, 2));
  writeFileSync(
    join(bin, 'gh'),
    [
      '#!/usr/bin/env node',
      "const fs = require('node:fs');",
      'const args = process.argv.slice(2);',
      `const thread = JSON.parse(fs.readFileSync(${JSON.stringify(threadPath)}, 'utf8'));`,
      'const log = (entry) => fs.appendFileSync(' +
        JSON.stringify(logPath) +
        ", JSON.stringify(entry) + '\\n');",
      "if (process.env.RELAIS_GH_NOAUTH) { log({ args }); console.error('To get started with GitHub CLI, please run:  gh auth login'); process.exit(4); }",
      `if (args[0] === 'api' && args[1] === 'user') { log({ args }); console.log(${JSON.stringify(loggedInAs)}); process.exit(0); }`,
      "if (args[0] === 'issue' && args[1] === 'view') { log({ args }); process.stdout.write(JSON.stringify(thread)); process.exit(0); }",
      "if (args[0] === 'issue' && args[1] === 'comment') {",
      "  const body = fs.readFileSync(args[args.indexOf('--body-file') + 1], 'utf8');",
      '  log({ args, body });',
      "  if (process.env.RELAIS_GH_COMMENT_FAIL) { console.error('HTTP 502: Bad Gateway'); process.exit(1); }",
      `  const id = 'IC_' + (thread.comments.length + 1);`,
      `  thread.comments.push({ id, author: { login: ${JSON.stringify(loggedInAs)} }, body, createdAt: new Date().toISOString() });`,
      `  fs.writeFileSync(${JSON.stringify(threadPath)}, JSON.stringify(thread, null, 2));`,
      "  console.log('https://github.com/acme/reports/issues/12#issuecomment-' + thread.comments.length);",
      '  process.exit(0);',
      '}',
      "console.error('gh stand-in: unknown command ' + args.join(' ')); process.exit(1);",
      '',
    ].join('\n'),
  );
  chmodSync(join(bin, 'gh'), 0o755);
  const read = (): GhThread => JSON.parse(readFileSync(threadPath, 'utf8'));
  const calls = () =>
    existsSync(logPath)
      ? readFileSync(logPath, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
  return {
    bin,
    threadPath,
    env: { PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` },
    thread: read,
    comment(login, body, authorAssociation) {
      const current = read();
      current.comments.push({
        id: `IC_${current.comments.length + 1}`,
        author: { login },
        body,
        createdAt: new Date().toISOString(),
        ...(authorAssociation ? { authorAssociation } : {}),
      });
      writeFileSync(threadPath, JSON.stringify(current, null, 2));
    },
    calls,
    posted: () => calls().flatMap((c: { body?: string }) => (c.body ? [c.body] : [])),
  };
}
