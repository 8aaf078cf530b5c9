import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { BLANK, clipRows, type Row, text } from '../components/row.js';
import { displayLines, flatten, truncate, wrapText } from '../format/text.js';
import type { GateModel, UiState } from '../store/ui-state.js';

/**
 * A human decision, showing what is being decided (the spec's task count and titles, the QA
 * report's summary, an agent's question). A yes/no gate ends on its keys; a text gate shows the
 * answer being typed: Enter sends it, Ctrl-J (or Alt-Enter) starts a new line, Esc declines.
 */
export const TEXT_GATE_KEYS = 'Enter send · Ctrl-J new line · Esc decline';
/** The planner's question gate also takes Ctrl-P: proceed to the spec (seed 004's proceed signal). */
export const PLAN_GATE_KEYS = 'Enter send · Ctrl-J new line · Ctrl-P proceed · Esc decline';

/** Lines of the answer box a text gate shows at most (the newest ones). */
const DRAFT_ROWS = 4;

/** Under `n` at a yes/no gate: why (optional), sent with the "no" to the agent's next attempt. */
export const REASON_KEYS = 'Enter reject · Ctrl-J new line · Esc back to the question';

export function gateRows(
  gate: GateModel,
  draft: string,
  width: number,
  height: number,
  rejecting = false,
): Row[] {
  const footer = footerRows(gate, draft, width, rejecting);
  const body = bodyRows(gate, width);
  const room = Math.max(0, height - footer.length - 1);
  return [...clipRows(body, room), BLANK, ...footer];
}

/** Rows the gate would like (the layout caps them). */
export function gateWant(gate: GateModel, draft: string, width: number, rejecting = false): number {
  return bodyRows(gate, width).length + 1 + footerRows(gate, draft, width, rejecting).length;
}

function footerRows(gate: GateModel, draft: string, width: number, rejecting: boolean): Row[] {
  if (gate.answer === 'text') return draftRows(draft, width, keysOf(gate));
  if (rejecting)
    return [
      [text('Why do you reject? (optional: the agent reads it on its next attempt)', { tone: 'error' })],
      ...draftRows(draft, width, REASON_KEYS),
    ];
  return [...documentRows(gate), ...yesNoRows()];
}

/** The gate's documents, named, with the key that opens them (the QA gate never points at unseen notes). */
function documentRows(gate: GateModel): Row[] {
  const docs = gate.documents ?? [];
  if (docs.length === 0) return [];
  return [
    [
      text(' v ', { inverse: true, bold: true, tone: 'gate' }),
      text(` read in full: ${docs.map((d) => d.name).join(', ')}`),
    ],
  ];
}

/**
 * A long line (a planner's question) wraps under its own indent instead of being cut. A lane's
 * gate (issue 19) first says whose it is: lanes ask side by side, and the answer goes to that one.
 */
function bodyRows(gate: GateModel, width: number): Row[] {
  const origin: Row[] = gate.origin
    ? [[text(truncate(`from ${gate.origin}`, width), { bold: true, tone: 'gate' })]]
    : [];
  return [...origin, ...questionRows(gate, width)];
}

function questionRows(gate: GateModel, width: number): Row[] {
  return gate.lines.flatMap((line): Row[] => {
    const flat = flatten(line, 400);
    const indent = /^ */.exec(flat)?.[0] ?? '';
    const wrapped = wrapText(flat.slice(indent.length), Math.max(10, width - indent.length), 4);
    return wrapped.length === 0 ? [BLANK] : wrapped.map((part): Row => [text(`${indent}${part}`)]);
  });
}

function yesNoRows(): Row[] {
  return [
    [
      text(' y ', { inverse: true, bold: true, tone: 'ok' }),
      text(' approve   '),
      text(' n ', { inverse: true, bold: true, tone: 'error' }),
      text(' reject'),
    ],
  ];
}

function keysOf(gate: GateModel): string {
  return gate.gate === 'plan' ? PLAN_GATE_KEYS : TEXT_GATE_KEYS;
}

function draftRows(draft: string, width: number, keys: string): Row[] {
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
  for (const line of wrapText(keys, Math.max(10, width), 3)) rows.push([text(line, { dim: true })]);
  return rows;
}

function tail(line: string, width: number): string {
  if (width <= 0) return '';
  const chars = [...line];
  return chars.length <= width ? line : `…${chars.slice(chars.length - width + 1).join('')}`;
}

export function GatePanel(props: {
  readonly state: UiState;
  readonly width: number;
  readonly height: number;
}) {
  const gate = props.state.gate;
  if (!gate) return null;
  const rows = gateRows(
    gate,
    props.state.interaction.draft,
    innerWidth(props.width),
    innerHeight(props.height),
    props.state.interaction.rejecting,
  );
  return (
    <Frame
      title={flatten(gate.title, 200)}
      aside={`${gate.gate} gate`}
      width={props.width}
      height={props.height}
      tone="gate"
    >
      <Rows rows={rows} />
    </Frame>
  );
}
