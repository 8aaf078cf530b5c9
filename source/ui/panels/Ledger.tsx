import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRows, type Row, text } from '../components/row.js';
import { usd } from '../format/money.js';
import { fitTo, padStartTo } from '../format/text.js';
import type { LedgerCounters, UiState } from '../store/ui-state.js';

/** The milestone ledger (STATE.json) against its caps, one gauge per budget. */
export function ledgerRows(state: UiState, width: number): Row[] {
  const ledger = state.ledger;
  if (!ledger) return [[text('no ledger yet', { dim: true })]];
  const items: Array<[string, keyof LedgerCounters]> = [
    ['ticks', 'ticks'],
    ['orchestrator', 'orchestrator_calls'],
    ['builder', 'builder_calls'],
    ['verify runs', 'verify_runs'],
    ['cost', 'cost_usd'],
  ];
  const barWidth = Math.max(0, Math.min(20, width - 33));
  // Issue 16 item 7: in a workflow, the cost row is the workflow's recorded spend against its own
  // cap, the header's numbers and `ralphy status`'s; the milestone's part of it was a third cost.
  const workflow = state.view === 'workflow';
  return items.map(([label, key]) => {
    const spend = workflow && key === 'cost_usd';
    const used = spend ? state.header.costUsd : ledger.used[key];
    const cap = spend ? (state.header.budgetUsd ?? 0) : ledger.caps[key];
    const ratio = cap > 0 ? used / cap : 0;
    const tone = ratio >= 0.9 ? 'error' : ratio >= 0.7 ? 'warn' : 'ok';
    const amount =
      key !== 'cost_usd' ? `${used}/${cap}` : spend && cap <= 0 ? usd(used) : `${usd(used)}/${usd(cap)}`;
    const filled = Math.min(barWidth, Math.round(ratio * barWidth));
    return [
      text(fitTo(spend ? 'workflow cost' : label, 13), { dim: true }),
      text(padStartTo(amount, 17), { tone: ratio >= 0.7 ? tone : undefined }),
      ...(barWidth > 0
        ? [text(' '), text('█'.repeat(filled), { tone }), text('░'.repeat(barWidth - filled), { dim: true })]
        : []),
    ];
  });
}

/** One row (a compact panel at 80×24): ticks against their cap, then the cost against its cap. */
export function compactLedgerRow(state: UiState): Row {
  const ledger = state.ledger;
  if (!ledger) return [text('no ledger yet', { dim: true })];
  const { used, caps } = ledger;
  const near = (key: keyof LedgerCounters) =>
    caps[key] > 0 && used[key] / caps[key] >= 0.7 ? 'warn' : undefined;
  return [
    text('ticks ', { dim: true }),
    text(`${used.ticks}/${caps.ticks}`, { tone: near('ticks') }),
    text(' · cost ', { dim: true }),
    text(`${usd(used.cost_usd)}/${usd(caps.cost_usd)}`, { tone: near('cost_usd') }),
  ];
}

export function Ledger(props: { readonly state: UiState; readonly width: number; readonly height: number }) {
  const milestone = props.state.ledger?.milestone;
  const rows =
    innerHeight(props.height) <= 1 && props.state.view === 'loop'
      ? [compactLedgerRow(props.state)]
      : ledgerRows(props.state, innerWidth(props.width));
  return (
    <Frame title="Ledger" aside={milestone ?? undefined} width={props.width} height={props.height}>
      <Rows rows={clipRows(rows, innerHeight(props.height))} />
    </Frame>
  );
}
