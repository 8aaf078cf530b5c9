import { Box } from 'ink';
import { RowLine } from '../components/RowLine.js';
import { type Row, text } from '../components/row.js';
import { spendOfBudget } from '../format/money.js';
import { stopwatch } from '../format/time.js';
import { elapsedMs, phaseLabel, workIsOver } from '../store/selectors.js';
import type { UiState } from '../store/ui-state.js';

/** One line: product, project, branch, where the run is, elapsed, spend against the budget. */
export function headerRow(state: UiState): Row {
  const h = state.header;
  const sep = text(' · ', { dim: true });
  const elapsed = elapsedMs(state);
  const overBudget = h.budgetUsd !== null && h.costUsd >= h.budgetUsd;
  const row = [
    text(state.view === 'workflow' ? ' ralphy ' : ' relais ', { bold: true, inverse: true }),
    text(' '),
    text(h.project || 'project', { bold: true }),
    ...(h.title ? [sep, text(`"${h.title}"`)] : []),
    ...(h.branch ? [sep, text(h.branch, { tone: 'accent' })] : []),
    sep,
    text(phaseLabel(state), { bold: true, tone: state.end?.state === 'FAILED' ? 'error' : 'accent' }),
    ...(elapsed === null ? [] : [sep, text(stopwatch(elapsed))]),
    sep,
    text(spendOfBudget(h.costUsd, h.budgetUsd), { tone: overBudget ? 'error' : undefined }),
    ...(h.budgetWarnings.length > 0 ? [sep, text('! budget warning', { tone: 'warn', bold: true })] : []),
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
  return row;
}

export function Header({ state, width }: { readonly state: UiState; readonly width: number }) {
  return (
    <Box width={width} height={1} flexShrink={0}>
      <RowLine row={headerRow(state)} />
    </Box>
  );
}
