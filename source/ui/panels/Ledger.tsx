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
  return items.map(([label, key]) => {
    const used = ledger.used[key];
    const cap = ledger.caps[key];
    const ratio = cap > 0 ? used / cap : 0;
    const tone = ratio >= 0.9 ? 'error' : ratio >= 0.7 ? 'warn' : 'ok';
    const amount = key === 'cost_usd' ? `${usd(used)}/${usd(cap)}` : `${used}/${cap}`;
    const filled = Math.min(barWidth, Math.round(ratio * barWidth));
    return [
      text(fitTo(label, 13), { dim: true }),
      text(padStartTo(amount, 17), { tone: ratio >= 0.7 ? tone : undefined }),
      ...(barWidth > 0
        ? [text(' '), text('█'.repeat(filled), { tone }), text('░'.repeat(barWidth - filled), { dim: true })]
        : []),
    ];
  });
}

export function Ledger(props: { readonly state: UiState; readonly width: number; readonly height: number }) {
  const milestone = props.state.ledger?.milestone;
  return (
    <Frame title="Ledger" aside={milestone ?? undefined} width={props.width} height={props.height}>
      <Rows rows={clipRows(ledgerRows(props.state, innerWidth(props.width)), innerHeight(props.height))} />
    </Frame>
  );
}
