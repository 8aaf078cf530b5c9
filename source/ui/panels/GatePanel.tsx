import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { BLANK, type Row, text } from '../components/row.js';
import { displayLines, flatten, truncate, widthOf, wrapWhole } from '../format/text.js';
import { yesNoWords } from '../format/wording.js';
import type { GateModel, UiState } from '../store/ui-state.js';

/**
 * A human decision, showing what is being decided (the spec's task count and titles, the QA
 * report, an agent's question). A yes/no gate ends on its keys; a text gate shows the answer being
 * typed: Enter sends it, Ctrl-J (or Alt-Enter) starts a new line, Esc declines.
 *
 * The question is never cut (the newcomer's pass, defect 9: at 60×15 the planner's question did
 * not show at all). The layout gives the gate what it needs first; when a small terminal still
 * cannot hold it, the question scrolls inside the gate (↑ ↓ PgUp PgDn Home End) and its last row
 * says how much is above and below, and with which keys. The answer box and the keys stay.
 */
export const TEXT_GATE_KEYS = 'Enter send · Ctrl-J new line · Esc decline';
/** The planner's question gate also takes Ctrl-P: proceed to the spec (seed 004's proceed signal). */
export const PLAN_GATE_KEYS = 'Enter send · Ctrl-J new line · Ctrl-P proceed · Esc decline';

/** Lines of the answer box a text gate shows at most (the newest ones). */
const DRAFT_ROWS = 4;

/** Under `n` at a yes/no gate: why (optional), sent with the "no" to the agent's next attempt. */
export const REASON_KEYS = 'Enter reject · Ctrl-J new line · Esc back to the question';

/** The rows a gate shows in `height` rows, and how its question scrolls there. */
export interface GateView {
  readonly rows: Row[];
  /** Rows of the question (what scrolls). */
  readonly total: number;
  /** Rows of the question on screen at once. */
  readonly window: number;
  /** The first row shown (clamped). */
  readonly top: number;
}

export function gateView(
  gate: GateModel,
  draft: string,
  width: number,
  height: number,
  rejecting = false,
  top = 0,
): GateView {
  const body = bodyRows(gate, width);
  let footer = footerRows(gate, draft, width, rejecting);
  // A tiny gate keeps the answer line and the question before the key hints (the footer bar
  // under the panels still names the keys).
  if (height - footer.length < 2) footer = footerRows(gate, draft, width, rejecting, false);
  const gap = height - footer.length >= 3 ? [BLANK] : [];
  const room = Math.max(1, height - footer.length - gap.length);
  if (body.length <= room)
    return { rows: [...body, ...gap, ...footer], total: body.length, window: body.length, top: 0 };
  const window = Math.max(1, room - 1);
  const first = clampGateTop(top, body.length, window);
  return {
    rows: [
      ...body.slice(first, first + window),
      moreRow(first, body.length - first - window),
      ...gap,
      ...footer,
    ],
    total: body.length,
    window,
    top: first,
  };
}

export function gateRows(
  gate: GateModel,
  draft: string,
  width: number,
  height: number,
  rejecting = false,
  top = 0,
): Row[] {
  return gateView(gate, draft, width, height, rejecting, top).rows;
}

/** The first row of the question shown, kept inside it. */
export function clampGateTop(top: number, total: number, window: number): number {
  return Math.max(0, Math.min(top, total - window));
}

/** Says how much of the question is out of view and which keys bring it in. */
function moreRow(above: number, below: number): Row {
  const words =
    above === 0
      ? `↓ ${below} more (PgDn)`
      : below === 0
        ? `↑ ${above} above (PgUp)`
        : `↑ ${above} above · ↓ ${below} more (PgUp PgDn)`;
  return [text(words, { tone: 'gate', bold: true })];
}

/** Rows the gate would like (the layout gives them when it can). */
export function gateWant(gate: GateModel, draft: string, width: number, rejecting = false): number {
  return bodyRows(gate, width).length + 1 + footerRows(gate, draft, width, rejecting).length;
}

function footerRows(gate: GateModel, draft: string, width: number, rejecting: boolean, keys = true): Row[] {
  if (gate.answer === 'text') return draftRows(draft, width, keys ? keysOf(gate) : null);
  if (rejecting)
    return [
      ...wrapWhole('Why do you reject? (optional: the agent reads it on its next attempt)', width).map(
        (line): Row => [text(line, { tone: 'error' })],
      ),
      ...draftRows(draft, width, keys ? REASON_KEYS : null),
    ];
  return [...documentRows(gate, width), ...yesNoRows(gate.gate)];
}

/** The gate's documents, named, with the key that opens them (the QA gate never points at unseen notes). */
function documentRows(gate: GateModel, width: number): Row[] {
  const docs = gate.documents ?? [];
  if (docs.length === 0) return [];
  const [first = '', ...rest] = wrapWhole(`read in full: ${docs.map((d) => d.name).join(', ')}`, width - 4);
  return [
    [text(' v ', { inverse: true, bold: true, tone: 'gate' }), text(` ${first}`)],
    ...rest.map((line): Row => [text(`    ${line}`)]),
  ];
}

/**
 * The question, whole: a title too long for the frame's border first, the lane that asks (issue
 * 19), then every line wrapped under its own indent.
 */
function bodyRows(gate: GateModel, width: number): Row[] {
  const title = flatten(gate.title, 300);
  const titleRows: Row[] =
    widthOf(title) > width - 1
      ? wrapWhole(title, width).map((line): Row => [text(line, { bold: true, tone: 'gate' })])
      : [];
  const origin: Row[] = gate.origin
    ? wrapWhole(`from ${gate.origin}`, width).map((line): Row => [text(line, { bold: true, tone: 'gate' })])
    : [];
  return [...titleRows, ...origin, ...questionRows(gate, width)];
}

function questionRows(gate: GateModel, width: number): Row[] {
  return gate.lines.flatMap((line): Row[] => {
    const flat = flatten(line, 4000);
    const indent = /^ */.exec(flat)?.[0] ?? '';
    // A deep indent on a narrow gate gives way to the text.
    const lead = indent.length > width / 3 ? '' : indent;
    const wrapped = wrapWhole(flat.slice(indent.length), Math.max(10, width - lead.length));
    return wrapped.length === 0 ? [BLANK] : wrapped.map((part): Row => [text(`${lead}${part}`)]);
  });
}

function yesNoRows(gate: GateModel['gate']): Row[] {
  const words = yesNoWords(gate);
  return [
    [
      text(' y ', { inverse: true, bold: true, tone: 'ok' }),
      text(` ${words.yes}   `),
      text(' n ', { inverse: true, bold: true, tone: 'error' }),
      text(` ${words.no}`),
    ],
  ];
}

function keysOf(gate: GateModel): string {
  return gate.gate === 'plan' ? PLAN_GATE_KEYS : TEXT_GATE_KEYS;
}

function draftRows(draft: string, width: number, keys: string | null): Row[] {
  const lines = displayLines(draft);
  const shown = lines.slice(-DRAFT_ROWS);
  const rows: Row[] = shown.map((line, index): Row => {
    const last = index === shown.length - 1;
    const prefix = index === 0 && lines.length <= DRAFT_ROWS ? '› ' : '  ';
    return [
      text(prefix, { tone: 'gate', bold: true }),
      // Keep the end of a long line in view: it is where the typing happens.
      text(last ? tail(line, width - 3) : truncate(line, width - 2)),
      ...(last ? [text('▌', { tone: 'gate' })] : []),
    ];
  });
  if (lines.length > DRAFT_ROWS)
    rows.unshift([text(`  … ${lines.length - DRAFT_ROWS} line(s) above`, { dim: true })]);
  // The keys wrap on a narrow panel rather than lose their end ("Esc decline").
  if (keys) for (const line of wrapWhole(keys, Math.max(10, width))) rows.push([text(line, { dim: true })]);
  return rows;
}

function tail(line: string, width: number): string {
  if (width <= 0) return '';
  const chars = [...line];
  return chars.length <= width ? line : `…${chars.slice(chars.length - width + 1).join('')}`;
}

/** The gate's text area inside a panel of `width` × `height`: what the scroll keys move. */
export function gateViewIn(state: UiState, width: number, height: number): GateView | null {
  const gate = state.gate;
  if (!gate) return null;
  return gateView(
    gate,
    state.interaction.draft,
    innerWidth(width),
    innerHeight(height),
    state.interaction.rejecting,
    state.interaction.gateTop,
  );
}

export function GatePanel(props: {
  readonly state: UiState;
  readonly width: number;
  readonly height: number;
}) {
  const gate = props.state.gate;
  const view = gateViewIn(props.state, props.width, props.height);
  if (!gate || !view) return null;
  return (
    <Frame
      title={flatten(gate.title, 200)}
      aside={`${gate.gate} gate`}
      width={props.width}
      height={props.height}
      tone="gate"
    >
      <Rows rows={view.rows} />
    </Frame>
  );
}
