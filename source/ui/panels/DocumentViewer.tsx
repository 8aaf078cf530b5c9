import type { GateDocument } from '../../engine/gates.js';
import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { BLANK, type Row, text } from '../components/row.js';
import { displayLines, widthOf } from '../format/text.js';
import type { UiState } from '../store/ui-state.js';

/**
 * A gate's document in full, over the panels (issue 16 item 5): SPEC.md, TASKS.md, QA_REPORT.md
 * or the branch diff. Long lines wrap (nothing is cut at the right edge); the text is made safe
 * like every agent's text. Pure row functions, so the key controller can clamp the scroll.
 */

/** Lines wider than this are cut before wrapping (a minified file must not take a thousand rows). */
const MAX_DOC_LINE_CHARS = 4000;

let cache: { doc: GateDocument; width: number; rows: string[] } | null = null;

/** The document's wrapped rows at `width` (cached: scrolling must not re-wrap every frame). */
export function documentRows(doc: GateDocument, width: number): string[] {
  if (cache && cache.doc === doc && cache.width === width) return cache.rows;
  const rows = displayLines(doc.text, MAX_DOC_LINE_CHARS).flatMap((line) => hardWrap(line, width));
  cache = { doc, width, rows };
  return rows;
}

/** Cuts a line into rows of at most `width` columns, spaces kept (a diff's indent means something). */
export function hardWrap(line: string, width: number): string[] {
  if (line === '' || width <= 0) return [''];
  if (widthOf(line) <= width) return [line];
  const rows: string[] = [];
  let current = '';
  let used = 0;
  for (const char of line) {
    const w = widthOf(char);
    if (used + w > width && current) {
      rows.push(current);
      current = '';
      used = 0;
    }
    current += char;
    used += w;
  }
  if (current) rows.push(current);
  return rows;
}

/** The document the viewer shows now (a gate's, or an agent run's transcript), with its scroll. */
export function shownDocument(state: UiState): { doc: GateDocument; top: number } | null {
  const overlay = state.interaction.overlay;
  if (overlay?.kind === 'log') return { doc: overlay.document, top: overlay.top };
  if (overlay?.kind !== 'document') return null;
  const doc = state.gate?.documents?.[overlay.index];
  return doc ? { doc, top: overlay.top } : null;
}

/** The first row shown, kept inside the document (the store may hold any number). */
export function clampTop(top: number, total: number, height: number): number {
  return Math.max(0, Math.min(top, total - Math.max(1, height)));
}

export function viewerRows(doc: GateDocument, width: number, height: number, top: number): Row[] {
  const rows = documentRows(doc, width);
  const first = clampTop(top, rows.length, height);
  return rows
    .slice(first, first + height)
    .map((line): Row => (line === '' ? BLANK : [text(line, { tone: toneOf(doc, line) })]));
}

/** A diff reads better with its added and removed lines told apart. */
function toneOf(doc: GateDocument, line: string) {
  if (doc.name !== 'branch diff') return undefined;
  if (line.startsWith('+') && !line.startsWith('+++')) return 'ok' as const;
  if (line.startsWith('-') && !line.startsWith('---')) return 'error' as const;
  if (line.startsWith('@@')) return 'accent' as const;
  return undefined;
}

export function DocumentViewer(props: {
  readonly documents: readonly GateDocument[];
  readonly index: number;
  readonly top: number;
  readonly width: number;
  readonly height: number;
}) {
  const doc = props.documents[props.index];
  if (!doc) return null;
  const width = innerWidth(props.width);
  const height = innerHeight(props.height);
  const total = documentRows(doc, width).length;
  const first = clampTop(props.top, total, height);
  const last = Math.min(total, first + height);
  const tabs = props.documents.map((d, i) => (i === props.index ? `[${d.name}]` : d.name)).join(' ');
  return (
    <Frame
      title={tabs}
      aside={`${total === 0 ? 0 : first + 1}–${last} of ${total}`}
      width={props.width}
      height={props.height}
      tone="gate"
    >
      <Rows rows={viewerRows(doc, width, height, props.top)} />
    </Frame>
  );
}
