import { Box } from 'ink';
import { RowLine } from '../components/RowLine.js';
import { type Row, type Segment, text } from '../components/row.js';
import { spendOfBudget } from '../format/money.js';
import { truncate, widthOf } from '../format/text.js';
import { stopwatch } from '../format/time.js';
import { elapsedMs, phaseLabel, workIsOver } from '../store/selectors.js';
import type { UiState } from '../store/ui-state.js';

/**
 * One line: product, project, title, branch, where the run is, elapsed, spend against the budget.
 * Where the run is, its time and its cost always show (issue 16 item 4: at 80 columns they were
 * cut off the end): on a narrow terminal the title goes first, then the branch and the project
 * are shortened.
 */
export function headerRow(state: UiState, width = Number.POSITIVE_INFINITY): Row {
  if (state.view === 'fleet') return fleetHeaderRow(state);
  const h = state.header;
  const product = text(state.view === 'workflow' ? ' ralphy ' : ' relais ', { bold: true, inverse: true });
  // Calls of unknown cost are said in full when there is room, shortly on a narrow terminal.
  const full = statusSegments(state, false);
  const status = rowWidth(full) + 1 <= width ? full : statusSegments(state, true);
  const room = width - rowWidth([product, text(' '), ...status]);
  // Still too wide: where the run is, its time and cost matter more than the product's name.
  if (room < 4) return [text(' '), ...status.slice(1)];
  const project = h.project || 'project';
  // What fits, dropping the title first, then shortening the branch and the project.
  const identity = identitySegments(fitIdentity([project, h.title ? `"${h.title}"` : null, h.branch], room));
  return [product, text(' '), ...identity, ...status];
}

function identitySegments(fitted: readonly (string | null)[]): Segment[] {
  const sep = text(' · ', { dim: true });
  const identity: Segment[] = [];
  fitted.forEach((part, index) => {
    if (part === null) return;
    if (identity.length > 0) identity.push(sep);
    identity.push(
      index === 0 ? text(part, { bold: true }) : index === 2 ? text(part, { tone: 'accent' }) : text(part),
    );
  });
  return identity;
}

/** Where the run is, its time, its spend against the budget, and the pause/abort marks. */
function statusSegments(state: UiState, short: boolean): Segment[] {
  const h = state.header;
  const sep = text(' · ', { dim: true });
  const elapsed = elapsedMs(state);
  const overBudget = h.budgetUsd !== null && h.costUsd >= h.budgetUsd;
  return [
    sep,
    text(phaseLabel(state), { bold: true, tone: state.end?.state === 'FAILED' ? 'error' : 'accent' }),
    ...(elapsed === null ? [] : [sep, text(stopwatch(elapsed))]),
    sep,
    text(spendOfBudget(h.costUsd, h.budgetUsd, h.held, short), { tone: overBudget ? 'error' : undefined }),
    ...(h.budgetWarnings.length > 0 ? [sep, text('! budget warning', { tone: 'warn', bold: true })] : []),
    // Issue 16 item 11: the pause key was pressed; the run stops after the running agent.
    ...(state.interaction.pausing && !state.interaction.aborting && !workIsOver(state)
      ? [sep, text('PAUSING after this agent', { tone: 'warn', bold: true })]
      : []),
    // Only while the work still runs: once it ended (FAILED, interrupted) it is not "aborting" any more.
    ...(state.interaction.aborting && !workIsOver(state)
      ? [
          sep,
          state.interaction.interrupting
            ? text('STOPPING (resumable)', { tone: 'warn', bold: true })
            : text('ABORTING', { tone: 'error', bold: true }),
        ]
      : []),
  ];
}

/** The fleet view's line (issue 20): what needs a human first (gates), then the rest. */
function fleetHeaderRow(state: UiState): Row {
  const sep = text(' · ', { dim: true });
  const fleet = state.fleet;
  const head = [text(' relais ', { bold: true, inverse: true }), text(' fleet', { bold: true })];
  if (!fleet) return head;
  const alive = fleet.workers.filter((w) => w.alive).length;
  const waiting = fleet.waitingGates.length;
  const { spent_usd: spent, reserved_usd: reserved, cap_usd: cap } = fleet.budget;
  return [
    ...head,
    sep,
    text(`${fleet.runs.length} runs`),
    sep,
    text(`${waiting} waiting for a human`, { tone: waiting > 0 ? 'warn' : undefined, bold: waiting > 0 }),
    sep,
    text(`${alive} workers alive`, { tone: alive === 0 ? 'error' : undefined }),
    sep,
    text(spendOfBudget(spent + reserved, cap)),
  ];
}

function rowWidth(row: Row): number {
  return row.reduce((sum, segment) => sum + ('text' in segment ? widthOf(segment.text) : 1), 0);
}

/** [project, title, branch] within `room` columns (separators counted). */
function fitIdentity(parts: readonly (string | null)[], room: number): (string | null)[] {
  const width = (list: readonly (string | null)[]) => {
    const present = list.filter((p): p is string => p !== null);
    return present.reduce((sum, p) => sum + widthOf(p), 0) + 3 * Math.max(0, present.length - 1);
  };
  let list = [...parts];
  if (width(list) <= room) return list;
  list = [list[0] ?? null, null, list[2] ?? null];
  if (width(list) <= room) return list;
  // Shorten the branch, then the project, each down to a few characters.
  const branch = list[2];
  if (branch) {
    const left = room - width([list[0] ?? null]) - 3;
    list[2] = left >= 8 ? truncate(branch, left) : null;
    if (width(list) <= room) return list;
  }
  list = [truncate(list[0] ?? '', Math.max(4, room)), null, null];
  return list;
}

export function Header({ state, width }: { readonly state: UiState; readonly width: number }) {
  return (
    <Box width={width} height={1} flexShrink={0}>
      <RowLine row={headerRow(state, width)} />
    </Box>
  );
}
