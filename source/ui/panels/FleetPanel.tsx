import type { FleetSnapshot } from '../../engine/protocol/fleet.js';
import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { BLANK, clipRows, type Row, text } from '../components/row.js';
import { usd } from '../format/money.js';
import { fitTo, flatten, padStartTo, truncate } from '../format/text.js';
import type { UiState } from '../store/ui-state.js';

/**
 * The fleet view (issue 20, `relais fleet status` on a terminal): runs per state, the gates that
 * wait (with the command that answers each from here), spend against the fleet budget, the model
 * accounts' rates, the workers alive and gone, then every run. Redrawn at each reading.
 */

const STATUS_ORDER = ['running', 'waiting', 'queued', 'completed', 'failed', 'rejected', 'budget_exhausted'];

export function fleetRows(state: UiState, width: number): Row[] {
  const fleet = state.fleet;
  if (!fleet) return [[text('reading the fleet database…', { dim: true })]];
  const label = (name: string) => text(fitTo(name, 10), { dim: true });
  return [
    [label('runs'), ...runCounts(fleet)],
    [label('spend'), ...spend(fleet, width - 10)],
    [label('workers'), ...workers(fleet, width - 10)],
    ...(fleet.accounts.length > 0 ? [[label('accounts'), ...accounts(fleet, width - 10)]] : []),
    BLANK,
    ...waiting(fleet, width),
    ...runs(fleet, width),
  ];
}

function runCounts(fleet: FleetSnapshot): Row {
  const entries = Object.entries(fleet.byStatus).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
  if (entries.length === 0) return [text('none submitted yet', { dim: true })];
  return entries.flatMap(([status, n], i) => [
    ...(i > 0 ? [text(' · ', { dim: true })] : []),
    text(`${n} ${status}`, { tone: toneOf(status), bold: status === 'waiting' }),
  ]);
}

function rank(status: string): number {
  const i = STATUS_ORDER.indexOf(status);
  return i < 0 ? STATUS_ORDER.length : i;
}

function toneOf(status: string) {
  if (status === 'completed') return 'ok' as const;
  if (status === 'waiting') return 'warn' as const;
  if (status === 'failed' || status === 'rejected' || status === 'budget_exhausted') return 'error' as const;
  return undefined;
}

function spend(fleet: FleetSnapshot, width: number): Row {
  const { cap_usd: cap, spent_usd: spent, reserved_usd: reserved } = fleet.budget;
  const words = `${usd(spent)} spent${cap === null ? ' (no cap)' : ` of ${usd(cap)}`} · ${usd(reserved)} reserved`;
  if (cap === null || cap <= 0) return [text(words)];
  const ratio = Math.min(1, (spent + reserved) / cap);
  const tone = ratio >= 0.9 ? 'error' : ratio >= 0.7 ? 'warn' : 'ok';
  const bar = Math.max(0, Math.min(20, width - words.length - 2));
  const filled = Math.round(ratio * bar);
  return [
    text(words, { tone: ratio >= 0.7 ? tone : undefined }),
    ...(bar > 0
      ? [text('  '), text('█'.repeat(filled), { tone }), text('░'.repeat(bar - filled), { dim: true })]
      : []),
  ];
}

function workers(fleet: FleetSnapshot, width: number): Row {
  const alive = fleet.workers.filter((w) => w.alive);
  const gone = fleet.workers.filter((w) => !w.alive);
  const aliveText = alive
    .map((w) => `${flatten(w.executor_id, 60)} (${(w.age_ms / 1000).toFixed(1)} s)`)
    .join(', ');
  const goneText = gone
    .map((w) => `${flatten(w.executor_id, 60)}${w.taken_over_by ? ` → ${flatten(w.taken_over_by, 60)}` : ''}`)
    .join(', ');
  return [
    text(`${alive.length} alive`, { tone: alive.length > 0 ? 'ok' : 'error', bold: alive.length === 0 }),
    ...(aliveText ? [text(`: ${truncate(aliveText, Math.max(10, width - 30))}`)] : []),
    ...(gone.length > 0 ? [text(` · ${gone.length} gone: ${truncate(goneText, 40)}`, { dim: true })] : []),
  ];
}

function accounts(fleet: FleetSnapshot, width: number): Row {
  const words = fleet.accounts
    .map(
      (a) =>
        `${flatten(a.name, 60)}: ${a.last_minute}${a.calls_per_minute === null ? ' (no limit)' : ` of ${a.calls_per_minute}`} calls this minute`,
    )
    .join(' · ');
  return [text(truncate(words, width))];
}

function waiting(fleet: FleetSnapshot, width: number): Row[] {
  if (fleet.waitingGates.length === 0) return [];
  return [
    [
      text('Waiting at a gate', { bold: true, tone: 'warn' }),
      text('  relais attach <run> answers it here; relais approve <run> anywhere', { dim: true }),
    ],
    ...fleet.waitingGates.map(
      (g): Row => [
        text(`  ${fitTo(flatten(g.run_id, 40), 26)} `),
        text(fitTo(g.gate, 6), { tone: 'warn' }),
        text(` ${truncate(flatten(g.title, 300), Math.max(10, width - 36))}`),
      ],
    ),
    BLANK,
  ];
}

function runs(fleet: FleetSnapshot, width: number): Row[] {
  if (fleet.runs.length === 0) return [];
  // The columns before it take 93: the repository gets what is left, nothing when there is none.
  const repoWidth = Math.max(0, width - 94);
  return [
    [text('Runs', { bold: true })],
    ...[...fleet.runs]
      .reverse()
      .map(
        (r): Row => [
          text(`  ${fitTo(flatten(r.run_id, 40), 26)} `),
          text(fitTo(r.status, 17), { tone: toneOf(r.status) }),
          text(fitTo(flatten(r.state, 40), 24), { dim: true }),
          text(padStartTo(usd(r.spent_usd), 8)),
          text(`  ${fitTo(flatten(r.executor_id ?? '-', 30), 12)}`, { dim: true }),
          ...(repoWidth >= 6 ? [text(` ${truncate(flatten(r.repo, 300), repoWidth)}`, { dim: true })] : []),
        ],
      ),
  ];
}

export function FleetPanel(props: {
  readonly state: UiState;
  readonly width: number;
  readonly height: number;
}) {
  const fleet = props.state.fleet;
  const alive = fleet?.workers.filter((w) => w.alive).length ?? 0;
  return (
    <Frame
      title="Fleet"
      aside={fleet ? `${fleet.runs.length} runs · ${alive} workers` : undefined}
      width={props.width}
      height={props.height}
      tone={fleet && fleet.waitingGates.length > 0 ? 'warn' : undefined}
    >
      <Rows rows={clipRows(fleetRows(props.state, innerWidth(props.width)), innerHeight(props.height))} />
    </Frame>
  );
}
