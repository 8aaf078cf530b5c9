import { join } from 'node:path';

/** What the demo says about itself: its usage, what is scripted, and how to resume it. */

export const USAGE = `npm run demo                        a fresh demo in a new temporary folder
npm run demo -- --resume <folder>   go on with a demo that stopped (an abort, Ctrl-C, a "no")
`;

/**
 * Said before anything runs (issue 16 item 9): what is real, what is scripted, and that an
 * answer typed to the planner does not change what the scripted agents write.
 */
export const WHAT_IS_SCRIPTED = [
  'This is a scripted demo. Real: the Claude Code binary, Relais (its judge, git, your checks, the',
  'gates). Scripted: the model behind Claude Code, a local stand-in on 127.0.0.1 whose answers are',
  'written in advance (no API key, no network). So an answer you type to the planner is recorded,',
  'but the scripted agents write the same spec and code whatever you answer. GitHub is a local',
  'folder, and `gh` a stand-in that only records the call.',
].join('\n   ');

/**
 * The resume hint resumes the demo (issue 16 item 9): a bare `ralphy start` on the folder would
 * run the user's own claude (or fail), not the scripted model.
 */
export function notCompleted(base: string, code: number, pushed: boolean, pr: boolean): string {
  const repo = join(base, 'demo-project');
  return [
    `The workflow did not complete (exit ${code}${pushed ? '' : ', no branch on the remote'}${pr ? '' : ', gh pr create was not called'}); see the output above and ${repo}/relais/`,
    '   To go on with THIS demo (its scripted model again, offline), from the relais folder:',
    `     npm run demo -- --resume ${base}`,
    '   (`ralphy start` on that folder by hand would call your own claude, not the scripted one.)',
  ].join('\n');
}
