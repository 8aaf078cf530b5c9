import { userText } from './relais-script.js';
import type { ModelReply, ModelRequest } from './scripted-model-server.js';

/**
 * The demo's Relay planner (seed 004), scripted on what the runner's context dump says, since the
 * planner is stateless and the human's answers vary: one question for the reporter; an answer is
 * closed verbatim and followed by the proceed gate; a proceed closes what is open as an
 * assumption and hands over to the spec-agent. With `--yes`, the runner proceeds at once.
 */

const QUESTION =
  'Should letters with accents (é, ü) stay as they are in the slug, or become plain ASCII (e, u)?';
const WHY = 'It decides the character rule of the spec, and the tests that pin it.';
const ASSUMPTION =
  'Assumption: letters of any script stay as they are (é stays é).\nRationale: the PRD only asks to drop punctuation; transliteration would be a feature of its own.';

export function demoPlanner(request: ModelRequest): ModelReply {
  const dump = userText(request);
  const open = /=== OPEN GAPS ===\n\[gap 1\]/.test(dump);
  const summary =
    'slugify(title) trims, collapses whitespace into one dash, drops punctuation, keeps letters and digits of any script; the existing tests stay as they are.';
  // The demo's "judgement": an explicit proceed, or any reply once its one question is settled.
  const asked = dump.includes('[gap 1]');
  if (dump.includes('is an explicit proceed') || (asked && !open)) {
    const actions: unknown[] = [];
    if (open)
      actions.push(
        { type: 'update_gaps', data: { close: [{ gap_id: 1, reason: 'inferred', note: ASSUMPTION }] } },
        {
          type: 'post_comment',
          data: {
            kind: 'assumptions',
            content:
              'Going ahead on your proceed. I am assuming letters of any script stay as they are (é stays é).',
          },
        },
      );
    actions.push({
      type: 'ready_for_spec_generation',
      data: { context_summary: summary, relevant_finding_ids: [], closed_gap_ids: [1], learning_ids: [] },
    });
    return json(actions);
  }
  const answer = humanAnswer(dump);
  if (open && answer)
    return json([
      { type: 'update_gaps', data: { close: [{ gap_id: 1, reason: 'answered', note: answer }] } },
      {
        type: 'post_comment',
        data: {
          kind: 'proceed_gate',
          content:
            'Thanks, that settles it. I have enough to draft the spec: shall I proceed? (This is the scripted demo: your answer is recorded as the decision, but the scripted spec-agent writes the same spec whatever you answered.)',
        },
      },
    ]);
  return json([
    {
      type: 'post_comment',
      data: {
        kind: 'questions',
        content: `One question before I draft the spec:\n\n1) ${QUESTION}\n   ${WHY}\n\nReply inline with 1: …`,
      },
    },
    {
      type: 'update_gaps',
      data: { add: [{ question: QUESTION, respondent: 'reporter', severity: 'high', why: WHY }] },
    },
  ]);
}

/** The first line of the human's latest answer, as the dump shows it (a verbatim excerpt). */
function humanAnswer(dump: string): string | null {
  const byId = [...dump.matchAll(/→ answers gap 1: (.+)/g)].at(-1)?.[1];
  if (byId) return byId.split(' / ')[0]?.trim() || null;
  const free = [...dump.matchAll(/\[message \d+\] human @\S+(?: \(\w+\))? · answer\n {2}(.+)/g)].at(-1)?.[1];
  return free?.trim() || null;
}

function json(actions: unknown[]): ModelReply {
  return { text: JSON.stringify({ actions }) };
}
