import type { Prompt } from './agent-call.js';
import type { Criterion, PlannedTask } from './blocks.js';
import type { CycleState } from './state.js';
import type { DoneTask } from './track-docs.js';
import { TRACK_TYPES } from './track-types.js';

/**
 * The cycle's prompts (seed 003 P3 pick track, P4 spec, P5 plan, P6 task adaptation, P7
 * implement, the per-criterion verifier). Block skeletons carry the placeholder {NONCE} (the seed's
 * `NONCE={nonce}`; an angle-bracket one would share its `>` with the `>>>` of the line) and the
 * real nonce is named once, so an echoed skeleton is never a block of this cycle.
 */

const SENTINEL_RULES = (nonce: string) =>
  [
    `This cycle's nonce is ${nonce}: write it in place of {NONCE}.`,
    'Output exactly one block. The opener and the closer stand alone on their own lines.',
    'Fields: KEY=bare_token, KEY="quoted string" (escape \\" \\\\ \\n \\t), KEY= followed by lines indented by two spaces, KEY: followed by "- " items.',
  ].join('\n');

export interface Docs {
  readonly [name: string]: string;
}

function docSection(docs: Docs): string {
  return Object.entries(docs)
    .map(([name, text]) => `--- ${name} ---\n${text.trim()}\n--- end of ${name} ---`)
    .join('\n\n');
}

const PLANNER_SYSTEM =
  'You are the planner of a deterministic coding pipeline. You read the project documents and answer with one sentinel block in the exact format asked. You never edit files.';

export function pickTrackPrompt(nonce: string, state: CycleState, docs: Docs): Prompt {
  const done =
    state.tracks_completed.map((t) => `${t.id} (${t.name}, phase ${t.phase})`).join(', ') || 'none';
  return {
    system: PLANNER_SYSTEM,
    user: [
      'P3 PICK TRACK: choose the next track (a coherent slice of the roadmap) to build.',
      `Current roadmap phase: ${state.roadmap.current_phase ?? 'not started'}; phases completed: ${state.roadmap.phases_completed.join(', ') || 'none'}.`,
      `Tracks completed: ${done}.`,
      ...(state.roadmap.unmet ? [`Your last PHASE_COMPLETE was refused: ${state.roadmap.unmet}`] : []),
      ...(state.roadmap.declined
        ? [`A human declined your last pick: ${state.roadmap.declined}. Choose with that in mind.`]
        : []),
      '',
      docSection(docs),
      '',
      'Answer with one TRACK block:',
      '<<<TRACK:V1:NONCE={NONCE}>>>',
      'TRACK_ID=<bare id>',
      'TRACK_NAME="<name>"',
      'PHASE=<bare roadmap phase id>',
      'REQUIREMENTS=<comma-separated requirement ids>',
      'GOAL="<one sentence>"',
      'ESTIMATED_TASKS=<positive integer>',
      `TRACK_TYPE=<one of ${TRACK_TYPES.join(', ')}: what kind of work the track is>`,
      '<<<END_TRACK:NONCE={NONCE}>>>',
      'If every track of the current phase is done, answer instead with PHASE_COMPLETE=true and NEXT_PHASE=<next phase id, or none when the roadmap is finished>.',
      'If the phase cannot proceed, answer with PHASE_BLOCKED=true and REASONS="<why>".',
      SENTINEL_RULES(nonce),
    ].join('\n'),
  };
}

export function specPrompt(nonce: string, state: CycleState, docs: Docs): Prompt {
  return {
    system: PLANNER_SYSTEM,
    user: [
      `P4 CREATE SPEC for track ${state.track.id} "${state.track.name}" (phase ${state.track.phase}).`,
      `Goal: ${state.track.goal}. Requirements: ${state.track.requirements.join(', ')}.`,
      'Search the codebase for related code before assuming anything is missing.',
      '',
      docSection(docs),
      '',
      'Answer with one SPEC block:',
      '<<<SPEC:V1:NONCE={NONCE}>>>',
      `TRACK_ID=${state.track.id}`,
      'TITLE="<title>"',
      'OVERVIEW=',
      '  <what the track delivers, indented two spaces>',
      'REQUIREMENTS:',
      '- id=<bare id> text="<testable requirement>"',
      '<<<END_SPEC:NONCE={NONCE}>>>',
      SENTINEL_RULES(nonce),
    ].join('\n'),
  };
}

const TASK_SKELETON = [
  'TASK:',
  'TASK_ID=<bare id>',
  'TITLE="<title>"',
  'SUMMARY=',
  '  <what to do, indented two spaces>',
  'FILES:',
  '- path=<relative path> action=<add|modify|delete> rationale="<why>"',
  'ACCEPTANCE:',
  '- id=AC<n> text="DET: <one of: tests pass, lint passes, diff within budget, no blocked paths, no secrets, clean tree>"',
  '- id=AC<n> text="LLM: <a statement a reviewer can check from the diff>"',
  'ESTIMATED_DIFF=<positive integer: lines added + deleted>',
  'DEPENDS_ON=<none or comma-separated task ids>',
];

/** Why the track is planned again, and what of it is already done (create_plan after REPLAN_REQUIRED / REQUEST_SPLIT). */
export interface Replan {
  readonly reason: string;
  /** The track's tasks already verified, numbered: they stay done and out of the new plan. */
  readonly done: readonly string[];
  readonly doneCount: number;
  /** The verified tasks the plan file still knows (ids and titles): their TASK_IDs are not reused. */
  readonly verified: readonly DoneTask[];
  /** The old plan's tasks from the one it stopped at. */
  readonly previous: readonly string[];
}

function replanLines(replan: Replan | null): string[] {
  if (!replan) return [];
  return [
    `RE-PLAN: the previous plan of this track stopped: ${replan.reason}`,
    replan.doneCount > 0
      ? `Done and verified, keep them out of this plan: ${replan.done.join('; ')}.`
      : 'No task of this track is done yet.',
    ...(replan.previous.length
      ? [`The previous plan's remaining tasks were: ${replan.previous.join(', ')}.`]
      : []),
    'Plan only the remaining work, from the current tree; split any task whose change would exceed 3x its ESTIMATED_DIFF.',
  ];
}

export function planPrompt(
  nonce: string,
  state: CycleState,
  docs: Docs,
  replan: Replan | null = null,
): Prompt {
  return {
    system: PLANNER_SYSTEM,
    user: [
      `P5 CREATE PLAN for track ${state.track.id}: small tasks, each one commit.`,
      ...replanLines(replan),
      'Criteria prefixed DET: are checked by the deterministic verifier only; anything about file contents is LLM:.',
      '',
      docSection(docs),
      '',
      'Answer with one PLAN block:',
      '<<<PLAN:V1:NONCE={NONCE}>>>',
      `TRACK_ID=${state.track.id}`,
      'TASK_COUNT=<number of TASK: sections>',
      ...TASK_SKELETON,
      '<<<END_PLAN:NONCE={NONCE}>>>',
      SENTINEL_RULES(nonce),
    ].join('\n'),
  };
}

export function adaptTaskPrompt(
  nonce: string,
  state: CycleState,
  task: PlannedTask,
  why: string[],
  docs: Docs,
): Prompt {
  return {
    system: PLANNER_SYSTEM,
    user: [
      `P6 GENERATE TASK: adapt the bindings of task ${task.taskId} of track ${state.track.id}; do not re-plan.`,
      ...why.map((w) => `- ${w}`),
      'Keep TASK_ID and ACCEPTANCE exactly as they are (acceptance criteria are immutable); fix FILES to the current tree;',
      'put execution guidance for the implementer in SUMMARY; give a fresh ESTIMATED_DIFF.',
      '',
      '--- the planned task ---',
      renderTaskFields(task),
      '--- end of the planned task ---',
      '',
      docSection(docs),
      '',
      'Answer with one PLAN block holding this one task:',
      '<<<PLAN:V1:NONCE={NONCE}>>>',
      `TRACK_ID=${state.track.id}`,
      'TASK_COUNT=1',
      ...TASK_SKELETON,
      '<<<END_PLAN:NONCE={NONCE}>>>',
      SENTINEL_RULES(nonce),
    ].join('\n'),
  };
}

/** A task in the plan-block field format (also what verify.sh-style tooling greps: path=, ESTIMATED_DIFF=). */
export function renderTaskFields(task: PlannedTask): string {
  return [
    `TASK_ID=${task.taskId}`,
    `TITLE=${quote(task.title)}`,
    'SUMMARY=',
    ...task.summary.split('\n').map((l) => `  ${l}`),
    'FILES:',
    ...task.files.map((f) => `- path=${f.path} action=${f.action} rationale=${quote(f.rationale)}`),
    'ACCEPTANCE:',
    ...task.acceptance.map((a) => `- id=${a.id} text=${quote(a.text)}`),
    `ESTIMATED_DIFF=${task.estimatedDiff}`,
    `DEPENDS_ON=${task.dependsOn.length ? task.dependsOn.join(',') : 'none'}`,
  ].join('\n');
}

export function quote(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;
}

export function implementPrompt(input: {
  taskId: string;
  title: string;
  packet: string;
  files: Array<{ path: string; content: string }>;
  failures: string[];
  /** The human's answers to this task's earlier questions (issue 15). */
  answers?: readonly string[];
}): Prompt {
  return {
    system:
      'IDENTITY: you are the implementer of a deterministic coding pipeline. You change the working tree to complete exactly one task; the runner commits your changes and verifies them.',
    user: [
      `TASK ${input.taskId}: ${input.title}`,
      '',
      '## TASK PACKET',
      input.packet.trim(),
      '',
      ...(input.files.length
        ? [
            '## FILES TO LOAD',
            ...input.files.map((f) => `--- ${f.path} ---\n${f.content}\n--- end of ${f.path} ---`),
            '',
          ]
        : []),
      ...(input.answers?.length ? ['## ANSWERS FROM THE HUMAN', ...input.answers, ''] : []),
      ...(input.failures.length
        ? ['## PREVIOUS ATTEMPT FAILED', ...input.failures.map((f) => `- ${f}`), 'Fix these first.', '']
        : []),
      '## DIRECTIVES',
      '- Make the smallest change that meets every acceptance criterion; run the OPS commands to check.',
      '- Touch only the FILES of the packet unless the task cannot be done otherwise.',
      '## GUARDRAILS',
      '- Never write secrets, .env files, keys or anything under .git/ or relais/.',
      '- If a file to modify or delete is missing, stop and print REPLAN_REQUIRED=true with a reason.',
      '- If the change needs more than 3x ESTIMATED_DIFF lines, stop and print REQUEST_SPLIT=true with a reason.',
      '## DONE CONTRACT',
      '- Leave your changes in the working tree (committing is optional); end with one line summarising what changed.',
    ].join('\n'),
  };
}

export function verifierPrompt(nonce: string, criterion: Criterion, evidence: string): Prompt {
  return {
    system:
      'You are a verifier. You judge one acceptance criterion from the evidence given, and answer with one VERDICT block. You have no tools.',
    user: [
      `Criterion ${criterion.id}: ${criterion.text}`,
      '',
      evidence,
      '',
      "If required evidence is missing, answer NO with reason 'insufficient evidence'. Never guess.",
      'Answer NEEDS_HUMAN only when the criterion is a matter of human judgement the evidence cannot settle.',
      `<<<VERDICT:V1:${criterion.id}:NONCE={NONCE}>>>`,
      'ANSWER=<YES|NO|NEEDS_HUMAN>',
      'REASON="<single sentence>"',
      `<<<END_VERDICT:${criterion.id}:NONCE={NONCE}>>>`,
      SENTINEL_RULES(nonce),
    ].join('\n'),
  };
}
