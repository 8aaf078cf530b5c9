import { innerWidth } from '../components/Frame.js';
import { blastRows } from '../panels/BlastRadius.js';
import { breakerRows } from '../panels/BreakerPanel.js';
import { currentTaskRows } from '../panels/CurrentTask.js';
import { gateWant } from '../panels/GatePanel.js';
import { laneRows } from '../panels/Lanes.js';
import { ledgerRows } from '../panels/Ledger.js';
import { compactPhaseRows, phaseRows } from '../panels/PhaseTimeline.js';
import { resultRows } from '../panels/ResultPanel.js';
import { taskRows } from '../panels/Tasks.js';
import { tickRows } from '../panels/TickTimeline.js';
import { verdictRows } from '../panels/Verdicts.js';
import { verifyRows } from '../panels/Verifications.js';
import { finalResult } from '../store/selectors.js';
import type { UiState } from '../store/ui-state.js';
import { allocate, type Placed, type Slot } from './allocate.js';

/**
 * Where each panel goes and how tall it is, from the state and the terminal size (pure). The
 * screen is a header line, the panels, and a footer line, one row shorter than the terminal: a
 * frame as tall as the terminal makes it scroll, which Ink answers by clearing the whole screen
 * on every frame (flicker).
 */

export type PanelId =
  | 'result'
  | 'gate'
  | 'wait'
  | 'phases'
  | 'ticks'
  | 'breaker'
  | 'tasks'
  | 'verdicts'
  | 'ledger'
  | 'task'
  | 'output'
  | 'verify'
  | 'blast'
  | 'lanes'
  /** Two compact panels side by side (the loop view in one short column). */
  | 'verify_blast'
  | 'verdicts_ledger'
  | 'fleet';

/** The two panels a pair shows, left then right. */
export const PAIRS = {
  verify_blast: ['verify', 'blast'],
  verdicts_ledger: ['verdicts', 'ledger'],
} as const satisfies Partial<Record<PanelId, readonly [PanelId, PanelId]>>;

export interface ColumnLayout {
  readonly name: 'left' | 'right' | 'single';
  readonly width: number;
  readonly panels: readonly Placed<PanelId>[];
}

export type ScreenLayout =
  | { readonly kind: 'too_small'; readonly columns: number; readonly rows: number }
  | {
      readonly kind: 'panels';
      readonly columns: number;
      readonly rows: number;
      readonly bodyHeight: number;
      readonly stack: readonly ColumnLayout[];
      /** Rows of output on screen: a page for PgUp/PgDn. */
      readonly outputRows: number;
      /** Columns of output text (inside the frame): where a long line wraps. */
      readonly outputColumns: number;
      /** The gate panel's outer size, when a gate shows: its question scrolls inside it. */
      readonly gateBox: { readonly width: number; readonly height: number } | null;
    };

export const MIN_COLUMNS = 40;
export const MIN_ROWS = 10;
/** Below this width the panels stack in one column. */
export const TWO_COLUMNS_FROM = 100;
/** Lines the timelines may take before the rest of the column gets its share. */
const TIMELINE_CAP = 14;
/** The output's smallest frame: its borders and one line. */
const OUTPUT_FLOOR = 3;
/** A gate leaves the output its smallest frame only when it still gets this many rows. */
const GATE_KEEPS_OUTPUT_FROM = 10;
/**
 * One column this short (80×24 is the default terminal) shows every panel in its compact form:
 * one row each (the phases on a line, the task at work, the last verification, the blast radius's
 * summary), so none disappears (issue 16 item 4).
 */
const COMPACT_UP_TO_ROWS = 30;

export function screenLayout(state: UiState, columns: number, rows: number): ScreenLayout {
  if (columns < MIN_COLUMNS || rows < MIN_ROWS) return { kind: 'too_small', columns, rows };
  const bodyHeight = rows - 3; // header + footer + the row that keeps the frame shorter than the terminal
  // The fleet view (issue 20) is one panel over the whole body.
  if (state.view === 'fleet')
    return {
      kind: 'panels',
      columns,
      rows,
      bodyHeight,
      stack: [{ name: 'single', width: columns, panels: [{ id: 'fleet', height: bodyHeight }] }],
      outputRows: 1,
      outputColumns: 1,
      gateBox: null,
    };
  const twoColumns = columns >= TWO_COLUMNS_FROM;
  const leftWidth = twoColumns ? Math.min(64, Math.max(40, Math.round(columns * 0.4))) : columns;
  const rightWidth = twoColumns ? columns - leftWidth : columns;
  const compact = !twoColumns && bodyHeight <= COMPACT_UP_TO_ROWS;
  const wants = panelWants(state, innerWidth(leftWidth), innerWidth(rightWidth), bodyHeight, compact);
  const pick = (ids: readonly PanelId[]) => ids.flatMap((id) => wants.filter((slot) => slot.id === id));
  const view = state.view;
  const stack: ColumnLayout[] = twoColumns
    ? [
        {
          name: 'left',
          width: leftWidth,
          panels: allocate(
            pick(
              view === 'loop' ? ['ticks', 'verdicts', 'ledger', 'breaker'] : ['phases', 'breaker', 'tasks'],
            ),
            bodyHeight,
          ),
        },
        {
          name: 'right',
          width: rightWidth,
          panels: allocate(
            pick(['result', 'gate', 'wait', 'lanes', 'task', 'output', 'verify', 'blast']),
            bodyHeight,
          ),
        },
      ]
    : [
        {
          name: 'single',
          width: columns,
          panels: allocate(
            pick(
              view === 'loop'
                ? [
                    'result',
                    'gate',
                    'wait',
                    'ticks',
                    'task',
                    'breaker',
                    'output',
                    'verify',
                    'blast',
                    'verdicts',
                    'ledger',
                    'verify_blast',
                    'verdicts_ledger',
                  ]
                : [
                    'result',
                    'gate',
                    'wait',
                    'phases',
                    'lanes',
                    'breaker',
                    'output',
                    'tasks',
                    'verify',
                    'blast',
                  ],
            ),
            bodyHeight,
          ),
        },
      ];
  const outputColumn = stack.find((column) => column.panels.some((panel) => panel.id === 'output'));
  const output = outputColumn?.panels.find((panel) => panel.id === 'output');
  const gateColumn = stack.find((column) => column.panels.some((panel) => panel.id === 'gate'));
  const gate = gateColumn?.panels.find((panel) => panel.id === 'gate');
  return {
    kind: 'panels',
    columns,
    rows,
    bodyHeight,
    stack,
    outputRows: Math.max(1, (output?.height ?? 3) - 2),
    outputColumns: Math.max(1, innerWidth(outputColumn?.width ?? columns)),
    gateBox: gateColumn && gate ? { width: gateColumn.width, height: gate.height } : null,
  };
}

/** Every panel that has something to show now, with its size wishes. */
function panelWants(
  state: UiState,
  leftInner: number,
  rightInner: number,
  bodyHeight: number,
  compact: boolean,
): Slot<PanelId>[] {
  // Compact: a panel wants its one-row form (the panels render what fits in the rows they get).
  const framed = (rows: number) => (compact ? 3 : rows + 2);
  // What a decision or the end needs is never compacted.
  const full = (rows: number) => rows + 2;
  const slots: Slot<PanelId>[] = [];
  const result = finalResult(state);
  if (result) {
    // The end and what to do next, whole (issue 16 item 4): all it needs, leaving the output its floor.
    const want = Math.min(full(resultRows(result, rightInner).length), bodyHeight - OUTPUT_FLOOR);
    slots.push({ id: 'result', min: Math.max(3, want), want, priority: 0 });
  }
  if (state.gate && !state.interaction.over) {
    // The question whole is what a decision needs (the newcomer's pass, defect 9): the output
    // keeps its smallest frame (and a usage-limit wait its own, it says when the run goes on),
    // everything else gives way, and on a terminal too short even for that the gate takes the
    // whole body. What still does not fit scrolls inside the gate.
    const want = full(gateWant(state.gate, state.interaction.draft, rightInner, state.interaction.rejecting));
    const kept = bodyHeight - OUTPUT_FLOOR - (state.wait ? 3 : 0);
    const cap = kept >= GATE_KEEPS_OUTPUT_FROM ? kept : bodyHeight;
    const height = Math.min(want, cap);
    slots.push({
      id: 'gate',
      min: Math.min(height, Math.max(4, Math.min(6, cap))),
      want: height,
      priority: 0,
    });
  }
  if (state.wait) slots.push({ id: 'wait', min: 3, want: 4, priority: 2 });
  if (state.view === 'loop') {
    slots.push(
      {
        id: 'ticks',
        min: 3,
        want: Math.min(TIMELINE_CAP, framed(tickRows(state, leftInner).length)),
        priority: 2,
      },
      { id: 'task', min: 3, want: framed(currentTaskRows(state, rightInner).length), priority: 3 },
      { id: 'verdicts', min: 3, want: framed(verdictRows(state, leftInner).length), priority: 5 },
      { id: 'ledger', min: 3, want: framed(ledgerRows(state, leftInner).length), priority: 6 },
    );
  } else {
    slots.push(
      {
        id: 'phases',
        min: compact ? 3 : 4,
        want: compact
          ? compactPhaseRows(state, leftInner, 2).length + 2
          : Math.min(TIMELINE_CAP, framed(phaseRows(state, leftInner).length)),
        priority: 2,
      },
      { id: 'tasks', min: 3, want: framed(taskRows(state, leftInner).length), priority: 5 },
    );
  }
  // Issue 19: parallel lanes get their panel while any ran.
  if (state.lanes.rows.length > 0)
    slots.push({ id: 'lanes', min: 3, want: Math.min(12, framed(laneRows(state).length)), priority: 2 });
  // The output is what a human watches most: it keeps a third of the screen whatever else shows,
  // except what a decision or the end of the work needs (a gate, the result) on a small screen.
  // A usage-limit wait at a gate keeps its smallest frame too (the gate left it room).
  const urgent =
    slots.reduce((sum, slot) => sum + (slot.priority === 0 ? slot.want : 0), 0) +
    (state.wait && state.gate ? 3 : 0);
  const floor = urgent >= bodyHeight ? 0 : OUTPUT_FLOOR;
  const outputMin = Math.max(
    floor,
    Math.min(compact ? 5 : Math.max(5, Math.round(bodyHeight * 0.35)), bodyHeight - urgent),
  );
  slots.push(
    { id: 'breaker', min: 3, want: framed(breakerRows(state).length), priority: 3 },
    { id: 'output', min: outputMin, want: 0, priority: 1, grow: true },
  );
  // The loop in one short column has seven panels and the output: each compact one takes three
  // rows, which 80×24 cannot give them all. Side by side in pairs, every one keeps a place.
  if (compact && state.view === 'loop')
    return slots
      .filter((slot) => slot.id !== 'verdicts' && slot.id !== 'ledger')
      .concat([
        { id: 'verify_blast', min: 3, want: 3, priority: 4 },
        { id: 'verdicts_ledger', min: 3, want: 3, priority: 5 },
      ]);
  slots.push(
    { id: 'verify', min: 3, want: Math.min(8, framed(verifyRows(state).length)), priority: 4 },
    { id: 'blast', min: 3, want: Math.min(8, framed(blastRows(state, rightInner).length)), priority: 6 },
  );
  return slots;
}
