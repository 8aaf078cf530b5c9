import { Box } from 'ink';
import { RowLine } from '../components/RowLine.js';
import { type Row, type Segment, text } from '../components/row.js';
import { spendOfBudget, spendWithHeld, usd } from '../format/money.js';
import { truncate, widthOf } from '../format/text.js';
import { stopwatch } from '../format/time.js';
import { runningLanes } from '../store/reduce-lanes.js';
import { elapsedMs, phaseLabel, workIsOver } from '../store/selectors.js';
import type { UiState } from '../store/ui-state.js';

/**
 * One line: product, project, title, branch, where the run is, elapsed, spend against the budget.
 * Where the run is, its time and its cost always show, at every width the app draws (issue 16
 * item 4; the newcomer's pass, defect 9: at 60 columns the cost was cut): on a narrow terminal the
 * title goes first, then the branch and the project are shortened, and the status itself takes a
 * shorter form (no percentage, the tick's step in fewer words, the phase's short name, the cost
 * without its cap) before the project is dropped.
 */
export function headerRow(state: UiState, width = Number.POSITIVE_INFINITY): Row {
  if (state.view === 'fleet') return fleetHeaderRow(state);
  const h = state.header;
  const product = text(state.view === 'workflow' ? ' ralphy ' : ' relais ', { bold: true, inverse: true });
  const project = h.project || 'project';
  const full = [project, h.title ? `"${h.title}"` : null, h.branch];
  // The branch is worth a shorter status (the newcomer's pass: at 80 columns it was dropped while
  // the status kept its longest words); without room for it, the project at least.
  for (const keepBranch of h.branch ? [true, false] : [false]) {
    // The branch never costs the cap: level 4, which drops it, is tried only without the branch.
    for (const level of keepBranch ? STATUS_LEVELS.slice(0, 4) : STATUS_LEVELS) {
      const status = statusSegments(state, level);
      const room = width - rowWidth([product, text(' '), ...status]);
      // What fits, dropping the title first, then shortening the branch and the project.
      const fitted = fitIdentity(full, room);
      if (identityFits(fitted, project, room) && (!keepBranch || fitted[2]))
        return [product, text(' '), ...identitySegments(fitted), ...status];
    }
  }
  // Still too wide: where the run is, its time and cost matter more than the names.
  for (const level of STATUS_LEVELS) {
    const status = [text(' '), ...statusSegments(state, level).slice(1)];
    if (rowWidth(status) <= width) return status;
  }
  return [text(' '), ...statusSegments(state, 4).slice(1)];
}

/** The project shows, at least its first 8 columns (or all of a shorter name), within `room`. */
function identityFits(fitted: readonly (string | null)[], project: string, room: number): boolean {
  const shown = fitted[0] ?? '';
  return (
    room >= 1 && shown !== '' && widthOf(shown) >= Math.min(widthOf(project), 8) && widthOf(shown) <= room
  );
}

/** From the most to the fewest words: 0 as wide as it likes, 4 the least that still says it all. */
const STATUS_LEVELS = [0, 1, 2, 3, 4] as const;
type StatusLevel = (typeof STATUS_LEVELS)[number];

/** Where the run is, its elapsed time, its cost (and what is going on: pausing, stopping). */
function statusSegments(state: UiState, level: StatusLevel): Segment[] {
  const h = state.header;
  const sep = text(' · ', { dim: true });
  const elapsed = elapsedMs(state);
  const overBudget = h.budgetUsd !== null && h.costUsd >= h.budgetUsd;
  const short = level >= 1;
  const label = phaseLabel(state, level === 0 ? 'full' : level === 1 ? 'short' : 'shortest');
  const where = level >= 3 ? (label.split(' · ')[0] ?? label) : label;
  // Calls of unknown cost are said at every level: in full with room, shortly on a narrow terminal.
  const cost =
    level === 0
      ? spendOfBudget(h.costUsd, h.budgetUsd, h.held)
      : level <= 3 && h.budgetUsd !== null && h.budgetUsd > 0
        ? `${spendWithHeld(h.costUsd, h.held, true)}/${usd(h.budgetUsd)}`
        : spendWithHeld(h.costUsd, h.held, true);
  return [
    sep,
    text(where, { bold: true, tone: state.end?.state === 'FAILED' ? 'error' : 'accent' }),
    ...(elapsed === null ? [] : [sep, text(stopwatch(elapsed))]),
    sep,
    text(cost, { tone: overBudget ? 'error' : undefined }),
    ...(h.budgetWarnings.length > 0
      ? [sep, text(short ? '! budget' : '! budget warning', { tone: 'warn', bold: true })]
      : []),
    ...stoppingSegments(state, short),
  ];
}

/** What the human asked the run to do (pause, stop, abort), while it still runs. */
function stoppingSegments(state: UiState, short: boolean): Segment[] {
  const sep = text(' · ', { dim: true });
  const { interaction } = state;
  if (workIsOver(state)) return [];
  // Issue 16 item 11: the pause key was pressed; the run stops after the running agent.
  if (interaction.pausing && !interaction.aborting)
    return [sep, text(short ? 'PAUSING' : pausingText(state), { tone: 'warn', bold: true })];
  // Only while the work still runs: once it ended (FAILED, interrupted) it is not "aborting" any more.
  if (!interaction.aborting) return [];
  return [
    sep,
    interaction.interrupting
      ? text(short ? 'STOPPING' : 'STOPPING (resumable)', { tone: 'warn', bold: true })
      : text('ABORTING', { tone: 'error', bold: true }),
  ];
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
  list = [truncate(list[0] ?? '', room), null, null];
  return list;
}

export function Header({ state, width }: { readonly state: UiState; readonly width: number }) {
  return (
    <Box width={width} height={1} flexShrink={0}>
      <RowLine row={headerRow(state, width)} />
    </Box>
  );
}

/** With parallel lanes, each running lane ends its tick (landing it when verified), then stops. */
function pausingText(state: UiState): string {
  const lanes = runningLanes(state);
  return lanes > 0 ? `PAUSING: ${lanes} lane(s) end their tick` : 'PAUSING after this agent';
}
