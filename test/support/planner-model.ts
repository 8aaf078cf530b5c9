import { join } from 'node:path';
import { type RelaisModelPlan, userText } from '../../source/demo/relais-script.js';
import type { ModelReply, ModelRequest } from '../../source/demo/scripted-model-server.js';
import { REPO_ROOT } from './project.js';
import { TASKS_MD } from './workflow.js';

/**
 * The scripted model behind the REAL claude binary for the planner's end-to-end tests: two rounds
 * of questions (the first after reading the code with Claude Code's Read tool), answers closed
 * verbatim as the human typed them, the proceed gate, then the handoff; the spec-agent writes its
 * two files. Like a real planner it answers from the context dump it is given, nothing else.
 */

export const CLAUDE = join(REPO_ROOT, 'node_modules/.bin/claude');

export const Q1 = 'Should greet() take the full name or only the first name?';
export const Q2 = 'Is the greeting always "Hello", or in the user\'s language?';
export const Q3 = 'Should bye() live in its own module, or next to greet()?';
export const SUMMARY = 'greet(firstName) says Hello in English; bye() lives in src/b.ts.';

export function claudeEnv(url: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: 'sk-test-offline',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    IS_SANDBOX: '1',
  };
}

export function plannerModelPlan(root: string): RelaisModelPlan {
  return {
    orchestrator: [],
    builder: [],
    planner: (request) => plannerReply(request, root),
    spec: [
      [
        {
          toolUses: [
            {
              name: 'Write',
              input: { file_path: join(root, 'specs/SPEC.md'), content: '# Spec\n\nGreet and bye.\n' },
            },
            { name: 'Write', input: { file_path: join(root, 'specs/TASKS.md'), content: TASKS_MD } },
          ],
        },
        { text: 'SPEC.md and TASKS.md are written.\n\nEXIT_SIGNAL: true' },
      ],
    ],
  };
}

function plannerReply(request: ModelRequest, root: string): ModelReply {
  const dump = userText(request);
  const turn = request.messages.filter((m) => m.role === 'assistant').length;
  const answers = new Map(
    [...dump.matchAll(/→ answers gap (\d+): (.+)/g)].map((m) => [Number(m[1]), m[2] ?? '']),
  );
  if (dump.includes('is an explicit proceed'))
    return json([
      {
        type: 'ready_for_spec_generation',
        data: {
          context_summary: SUMMARY,
          relevant_finding_ids: [],
          closed_gap_ids: [1, 2, 3],
          learning_ids: [1],
        },
      },
    ]);
  if (dump.includes('[gap 3]')) {
    // Round 2 was answered in free text: its first line is the answer.
    const free = [...dump.matchAll(/human @\S+ \(\w+\) · answer\n {2}(.+)/g)].at(-1)?.[1] ?? '';
    return json([
      { type: 'update_gaps', data: { close: [{ gap_id: 3, reason: 'answered', note: free.trim() }] } },
      {
        type: 'post_comment',
        data: { kind: 'proceed_gate', content: 'I have what I need to draft the spec. Shall I proceed?' },
      },
    ]);
  }
  if (answers.has(1))
    return json([
      {
        type: 'update_gaps',
        data: {
          close: [
            { gap_id: 1, reason: 'answered', note: answers.get(1) },
            { gap_id: 2, reason: 'answered', note: answers.get(2) },
          ],
        },
      },
      {
        type: 'update_learnings',
        data: {
          propose: [
            {
              type: 'domain_learnings',
              content: 'Greetings are in English only.',
              source_message_id: messageAnswering(dump, 2),
            },
          ],
        },
      },
      ...ask('assignee', Q3, 'It decides which files the tasks touch.', 'One for the implementation:'),
    ]);
  // Round 1: a look at the code first (Claude Code's real Read tool), then the questions.
  if (turn === 0)
    return {
      text: 'Checking what greet looks like today.',
      toolUses: [{ name: 'Read', input: { file_path: join(root, 'src/a.ts') } }],
    };
  return json([
    {
      type: 'post_comment',
      data: {
        kind: 'questions',
        content: `Two questions before the spec (src/a.ts has no greet yet):\n1) ${Q1}\n   It decides what greet() takes.\n2) ${Q2}\n   A language rule changes the API.`,
      },
    },
    {
      type: 'update_gaps',
      data: {
        add: [
          {
            question: Q1,
            respondent: 'reporter',
            severity: 'blocking',
            why: 'It decides what greet() takes.',
          },
          { question: Q2, respondent: 'reporter', severity: 'high', why: 'A language rule changes the API.' },
        ],
      },
    },
  ]);
}

/** The id of the human message that answers this gap (a learning names where it comes from). */
function messageAnswering(dump: string, gap: number): number | null {
  const blocks = [...dump.matchAll(/\[message (\d+)\] human [^\n]*\n((?: {2}[^\n]*(?:\n|$))*)/g)];
  const found = blocks.find((m) => (m[2] ?? '').includes(`→ answers gap ${gap}:`));
  return found ? Number(found[1]) : null;
}

function ask(respondent: string, question: string, why: string, preface: string): unknown[] {
  return [
    { type: 'post_comment', data: { kind: 'questions', content: `${preface}\n1) ${question}\n   ${why}` } },
    { type: 'update_gaps', data: { add: [{ question, respondent, severity: 'medium', why }] } },
  ];
}

function json(actions: unknown[]): ModelReply {
  return { text: JSON.stringify({ actions }) };
}
