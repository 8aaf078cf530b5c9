import { DETERMINISTIC_CHECKS, deterministicCheckOf } from './det-checks.js';
import {
  type BlockKind,
  type Entry,
  extractBlock,
  parseFields,
  type SentinelError,
  type SentinelResult,
  type Value,
} from './sentinel.js';
import { isTrackType, TRACK_TYPES, type TrackType } from './track-types.js';

/**
 * The four block kinds of seed 003, each validated field by field on top of the one parser in
 * sentinel.ts. TRACK and SPEC are not spelled out by the seed; their fields are the STATE fields
 * pick_track and create_spec fill. PLAN holds TRACK_ID, TASK_COUNT and one `TASK:` section per
 * task with the seed's plan fields; VERDICT is the seed's, with NEEDS_HUMAN as a third answer so
 * the combined-verdict row "PASS | NEEDS_HUMAN" can happen at all.
 */

export type TrackBlock =
  | {
      kind: 'track';
      id: string;
      name: string;
      phase: string;
      requirements: string[];
      goal: string;
      estimatedTasks: number;
      /** TRACK_TYPE (seed 003 P12's loading map keys on it); optional, null when not given. */
      type: TrackType | null;
    }
  | { kind: 'phase_complete'; nextPhase: string | null }
  | { kind: 'phase_blocked'; reasons: string };

export interface SpecBlock {
  trackId: string;
  title: string;
  overview: string;
  requirements: Array<{ id: string; text: string }>;
}

export interface PlannedFile {
  path: string;
  action: 'add' | 'modify' | 'delete';
  rationale: string;
}

export interface Criterion {
  id: string;
  text: string;
  kind: 'DET' | 'LLM';
}

export interface PlannedTask {
  taskId: string;
  title: string;
  summary: string;
  files: PlannedFile[];
  acceptance: Criterion[];
  estimatedDiff: number;
  dependsOn: string[];
}

export interface PlanBlock {
  trackId: string;
  tasks: PlannedTask[];
}

export interface VerdictBlock {
  criterion: string;
  answer: 'YES' | 'NO' | 'NEEDS_HUMAN';
  reason: string;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Track and task ids end up in paths, commit subjects and rescue branch names: git must accept them. */
const REF_SAFE_ID = /^(?!.*\.\.)(?!.*\.$)(?!.*\.[lL][oO][cC][kK]$)[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const REF_SAFE_WHAT = "a bare id (letters, digits, . _ -; no '..', not ending in '.' or '.lock')";
const PATH = /^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|$))[A-Za-z0-9._@+/-]{1,300}$/;
const POSITIVE = /^[1-9][0-9]{0,8}$/;

type R<T> = SentinelResult<T>;
const bad = <T>(line: number | null, message: string): R<T> => ({
  ok: false,
  error: { kind: 'malformed', line, message } satisfies SentinelError,
});

/** Fields of one section: every key at most once, none unknown. */
class Section {
  private readonly byKey = new Map<string, Entry>();

  private constructor(readonly end: number) {}

  static of(entries: readonly Entry[], allowed: readonly string[], end: number, what: string): R<Section> {
    const section = new Section(end);
    for (const entry of entries) {
      if (!allowed.includes(entry.key))
        return bad(entry.line, `unknown field ${entry.key} in ${what} (allowed: ${allowed.join(', ')})`);
      const first = section.byKey.get(entry.key);
      if (first) return bad(entry.line, `duplicate field ${entry.key} (first at line ${first.line})`);
      section.byKey.set(entry.key, entry);
    }
    return { ok: true, value: section };
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  scalar(key: string, type: 'bare' | 'quoted'): R<{ value: Value; line: number }> {
    const entry = this.byKey.get(key);
    if (!entry) return bad(this.end, `missing field ${key}`);
    if (entry.type !== 'scalar') return bad(entry.line, `${key} must be written ${key}=value`);
    if (type === 'quoted' && !entry.value.quoted) return bad(entry.line, `${key} must be a quoted string`);
    if (type === 'bare' && entry.value.quoted)
      return bad(entry.line, `${key} must be a bare token, not quoted`);
    return { ok: true, value: { value: entry.value, line: entry.line } };
  }

  token(key: string, pattern: RegExp, what: string): R<string> {
    const s = this.scalar(key, 'bare');
    if (!s.ok) return s;
    if (!pattern.test(s.value.value.text)) return bad(s.value.line, `${key} must be ${what}`);
    return { ok: true, value: s.value.value.text };
  }

  text(key: string): R<string> {
    const s = this.scalar(key, 'quoted');
    if (!s.ok) return s;
    if (s.value.value.text.trim() === '') return bad(s.value.line, `${key} is empty`);
    return { ok: true, value: s.value.value.text };
  }

  int(key: string): R<number> {
    const t = this.token(key, POSITIVE, 'a positive integer');
    return t.ok ? { ok: true, value: Number(t.value) } : t;
  }

  bool(key: string): R<boolean> {
    const t = this.token(key, /^(true|false)$/, 'true or false');
    return t.ok ? { ok: true, value: t.value === 'true' } : t;
  }

  multiline(key: string): R<string> {
    const entry = this.byKey.get(key);
    if (!entry) return bad(this.end, `missing field ${key}`);
    if (entry.type !== 'multiline')
      return bad(entry.line, `${key} must be written ${key}= with indented lines below`);
    return { ok: true, value: entry.text };
  }

  list(key: string): R<Array<{ attrs: Map<string, Value>; line: number }>> {
    const entry = this.byKey.get(key);
    if (!entry) return bad(this.end, `missing field ${key}`);
    if (entry.type !== 'list') return bad(entry.line, `${key} must be written ${key}: with - items below`);
    if (entry.items.length === 0) return bad(entry.line, `${key} has no items`);
    return { ok: true, value: entry.items };
  }
}

function attr(
  item: { attrs: Map<string, Value>; line: number },
  name: string,
  type: 'bare' | 'quoted',
  pattern?: RegExp,
  what?: string,
): R<string> {
  const value = item.attrs.get(name);
  if (!value) return bad(item.line, `missing attribute ${name}=`);
  if (type === 'quoted' && !value.quoted) return bad(item.line, `${name} must be a quoted string`);
  if (type === 'bare' && value.quoted) return bad(item.line, `${name} must be a bare token`);
  if (pattern && !pattern.test(value.text)) return bad(item.line, `${name} must be ${what}`);
  return { ok: true, value: value.text };
}

function onlyAttrs(item: { attrs: Map<string, Value>; line: number }, allowed: string[]): R<true> {
  for (const name of item.attrs.keys())
    if (!allowed.includes(name))
      return bad(item.line, `unknown attribute ${name} (allowed: ${allowed.join(', ')})`);
  return { ok: true, value: true };
}

function read(
  text: string,
  kind: BlockKind,
  nonce: string,
  criterion: string | null = null,
): R<{ entries: Entry[]; end: number }> {
  const block = extractBlock(text, kind, nonce, criterion);
  if (!block.ok) return block;
  const fields = parseFields(block.value);
  if (!fields.ok) return fields;
  return { ok: true, value: { entries: fields.value, end: block.value.closer } };
}

/** Unwraps a chain of results: the first error wins. */
function all<T extends Record<string, R<unknown>>>(
  parts: T,
): R<{ [K in keyof T]: T[K] extends R<infer V> ? V : never }> {
  const out: Record<string, unknown> = {};
  for (const [key, part] of Object.entries(parts)) {
    if (!part.ok) return part as R<never>;
    out[key] = part.value;
  }
  return { ok: true, value: out as { [K in keyof T]: T[K] extends R<infer V> ? V : never } };
}

export function parseTrackBlock(text: string, nonce: string): R<TrackBlock> {
  const block = read(text, 'TRACK', nonce);
  if (!block.ok) return block;
  const allowed = [
    'TRACK_ID',
    'TRACK_NAME',
    'PHASE',
    'REQUIREMENTS',
    'GOAL',
    'ESTIMATED_TASKS',
    'TRACK_TYPE',
    'PHASE_COMPLETE',
    'NEXT_PHASE',
    'PHASE_BLOCKED',
    'REASONS',
  ];
  const s = Section.of(block.value.entries, allowed, block.value.end, 'a TRACK block');
  if (!s.ok) return s;
  const f = s.value;
  if (f.has('PHASE_COMPLETE') || f.has('PHASE_BLOCKED')) return trackSignal(f, block.value.end);
  const parts = all({
    id: f.token('TRACK_ID', REF_SAFE_ID, REF_SAFE_WHAT),
    name: f.text('TRACK_NAME'),
    phase: f.token('PHASE', ID, 'a bare phase id'),
    requirements: f.token(
      'REQUIREMENTS',
      /^[A-Za-z0-9._-]+(,[A-Za-z0-9._-]+)*$/,
      'comma-separated requirement ids',
    ),
    goal: f.text('GOAL'),
    estimatedTasks: f.int('ESTIMATED_TASKS'),
    type: f.has('TRACK_TYPE')
      ? f.token('TRACK_TYPE', new RegExp(`^(${TRACK_TYPES.join('|')})$`), `one of ${TRACK_TYPES.join(', ')}`)
      : { ok: true as const, value: null },
  });
  if (!parts.ok) return parts;
  const type = parts.value.type;
  return {
    ok: true,
    value: {
      kind: 'track',
      ...parts.value,
      requirements: parts.value.requirements.split(','),
      type: type !== null && isTrackType(type) ? type : null,
    },
  };
}

/**
 * PHASE_COMPLETE=true [NEXT_PHASE=id|none], or PHASE_BLOCKED=true REASONS="...". Only two TRUE
 * flags conflict: a flag written out as false says "not this" and stands beside the other one
 * (issue 15: `PHASE_COMPLETE=false` with `PHASE_BLOCKED=true` and its REASONS is a valid block).
 */
function trackSignal(f: Section, end: number): R<TrackBlock> {
  const complete = f.has('PHASE_COMPLETE') ? f.bool('PHASE_COMPLETE') : null;
  if (complete && !complete.ok) return complete;
  const blockedFlag = f.has('PHASE_BLOCKED') ? f.bool('PHASE_BLOCKED') : null;
  if (blockedFlag && !blockedFlag.ok) return blockedFlag;
  if (complete?.value && blockedFlag?.value)
    return bad(end, 'PHASE_COMPLETE and PHASE_BLOCKED exclude each other');
  if (complete && (complete.value || !blockedFlag)) {
    if (!complete.value) return bad(end, 'PHASE_COMPLETE=false: leave it out and select a track');
    const next = f.has('NEXT_PHASE') ? f.token('NEXT_PHASE', ID, 'a bare phase id or none') : null;
    if (next && !next.ok) return next;
    return {
      ok: true,
      value: { kind: 'phase_complete', nextPhase: next && next.value !== 'none' ? next.value : null },
    };
  }
  const blocked = all({ flag: f.bool('PHASE_BLOCKED'), reasons: f.text('REASONS') });
  if (!blocked.ok) return blocked;
  if (!blocked.value.flag) return bad(end, 'PHASE_BLOCKED=false: leave it out and select a track');
  return { ok: true, value: { kind: 'phase_blocked', reasons: blocked.value.reasons } };
}

export function parseSpecBlock(text: string, nonce: string): R<SpecBlock> {
  const block = read(text, 'SPEC', nonce);
  if (!block.ok) return block;
  const s = Section.of(
    block.value.entries,
    ['TRACK_ID', 'TITLE', 'OVERVIEW', 'REQUIREMENTS'],
    block.value.end,
    'a SPEC block',
  );
  if (!s.ok) return s;
  const parts = all({
    trackId: s.value.token('TRACK_ID', REF_SAFE_ID, REF_SAFE_WHAT),
    title: s.value.text('TITLE'),
    overview: s.value.multiline('OVERVIEW'),
    items: s.value.list('REQUIREMENTS'),
  });
  if (!parts.ok) return parts;
  const requirements: SpecBlock['requirements'] = [];
  for (const item of parts.value.items) {
    const checked = all({
      only: onlyAttrs(item, ['id', 'text']),
      id: attr(item, 'id', 'bare', ID, 'a bare id'),
      text: attr(item, 'text', 'quoted'),
    });
    if (!checked.ok) return checked;
    requirements.push({ id: checked.value.id, text: checked.value.text });
  }
  const { items: _items, ...rest } = parts.value;
  return { ok: true, value: { ...rest, requirements } };
}

const TASK_FIELDS = ['TASK_ID', 'TITLE', 'SUMMARY', 'FILES', 'ACCEPTANCE', 'ESTIMATED_DIFF', 'DEPENDS_ON'];

export function parsePlanBlock(text: string, nonce: string): R<PlanBlock> {
  const block = read(text, 'PLAN', nonce);
  if (!block.ok) return block;
  const { entries, end } = block.value;
  // `TASK:` (a list key with no items) starts a section; what comes before it is the header.
  const starts = entries.flatMap((e, i) => (e.key === 'TASK' ? [i] : []));
  for (const i of starts) {
    const marker = entries[i] as Entry;
    if (marker.type !== 'list' || marker.items.length > 0)
      return bad(marker.line, 'TASK: starts a task section and stands alone on its line');
  }
  const header = Section.of(
    entries.slice(0, starts[0] ?? entries.length),
    ['TRACK_ID', 'TASK_COUNT'],
    end,
    'the PLAN header',
  );
  if (!header.ok) return header;
  const head = all({
    trackId: header.value.token('TRACK_ID', REF_SAFE_ID, REF_SAFE_WHAT),
    count: header.value.int('TASK_COUNT'),
  });
  if (!head.ok) return head;
  if (starts.length !== head.value.count)
    return bad(end, `TASK_COUNT=${head.value.count} but the plan has ${starts.length} TASK: section(s)`);
  const tasks: PlannedTask[] = [];
  for (const [n, start] of starts.entries()) {
    const sectionEnd = starts[n + 1] ?? entries.length;
    const task = readTask(entries.slice(start + 1, sectionEnd), (entries[sectionEnd]?.line ?? end) - 1);
    if (!task.ok) return task;
    if (tasks.some((t) => t.taskId === task.value.taskId))
      return bad((entries[start] as Entry).line, `duplicate TASK_ID ${task.value.taskId}`);
    tasks.push(task.value);
  }
  return { ok: true, value: { trackId: head.value.trackId, tasks } };
}

function readTask(entries: Entry[], end: number): R<PlannedTask> {
  const s = Section.of(entries, TASK_FIELDS, end, 'a TASK section');
  if (!s.ok) return s;
  const f = s.value;
  const parts = all({
    taskId: f.token('TASK_ID', REF_SAFE_ID, REF_SAFE_WHAT),
    title: f.text('TITLE'),
    summary: f.multiline('SUMMARY'),
    files: f.list('FILES'),
    acceptance: f.list('ACCEPTANCE'),
    estimatedDiff: f.int('ESTIMATED_DIFF'),
    dependsOn: f.has('DEPENDS_ON')
      ? f.token(
          'DEPENDS_ON',
          /^(none|[A-Za-z0-9._-]+(,[A-Za-z0-9._-]+)*)$/,
          'none or comma-separated task ids',
        )
      : ({ ok: true, value: 'none' } as R<string>),
  });
  if (!parts.ok) return parts;
  const files: PlannedFile[] = [];
  for (const item of parts.value.files) {
    const file = all({
      only: onlyAttrs(item, ['path', 'action', 'rationale']),
      path: attr(item, 'path', 'bare', PATH, 'a relative path inside the repository (no .., no leading /)'),
      action: attr(item, 'action', 'bare', /^(add|modify|delete)$/, 'add, modify or delete'),
      rationale: attr(item, 'rationale', 'quoted'),
    });
    if (!file.ok) return file;
    files.push({
      path: file.value.path,
      action: file.value.action as PlannedFile['action'],
      rationale: file.value.rationale,
    });
  }
  const acceptance: Criterion[] = [];
  for (const item of parts.value.acceptance) {
    const ac = all({
      only: onlyAttrs(item, ['id', 'text']),
      id: attr(item, 'id', 'bare', /^AC[1-9][0-9]{0,2}$/, 'AC<n>'),
      text: attr(item, 'text', 'quoted', /^(DET|LLM): \S/, 'prefixed "DET: " or "LLM: "'),
    });
    if (!ac.ok) return ac;
    if (acceptance.some((a) => a.id === ac.value.id))
      return bad(item.line, `duplicate criterion ${ac.value.id}`);
    if (ac.value.text.startsWith('DET:') && deterministicCheckOf(ac.value.text) === null)
      return bad(
        item.line,
        `${ac.value.id} is DET: but names none of the six deterministic checks (${DETERMINISTIC_CHECKS.map((c) => c.name).join(', ')}); prefix it LLM: instead`,
      );
    acceptance.push({
      id: ac.value.id,
      text: ac.value.text,
      kind: ac.value.text.startsWith('DET:') ? 'DET' : 'LLM',
    });
  }
  const { dependsOn, ...rest } = parts.value;
  return {
    ok: true,
    value: { ...rest, files, acceptance, dependsOn: dependsOn === 'none' ? [] : dependsOn.split(',') },
  };
}

export function parseVerdictBlock(text: string, nonce: string, criterion: string): R<VerdictBlock> {
  const block = read(text, 'VERDICT', nonce, criterion);
  if (!block.ok) return block;
  const s = Section.of(block.value.entries, ['ANSWER', 'REASON'], block.value.end, 'a VERDICT block');
  if (!s.ok) return s;
  const parts = all({
    answer: s.value.token('ANSWER', /^(YES|NO|NEEDS_HUMAN)$/, 'YES, NO or NEEDS_HUMAN'),
    reason: s.value.text('REASON'),
  });
  if (!parts.ok) return parts;
  if (parts.value.reason.includes('\n'))
    return bad(block.value.end - 1, 'REASON is a single sentence on one line');
  return {
    ok: true,
    value: { criterion, answer: parts.value.answer as VerdictBlock['answer'], reason: parts.value.reason },
  };
}
