import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRows, type Row, text, wrapRows } from '../components/row.js';
import { sandboxWords } from '../format/sandbox.js';
import { count, plural } from '../format/text.js';
import type { BlastModel, UiState } from '../store/ui-state.js';
import { GLYPH } from '../theme.js';

/**
 * What the judge measured in git: files touched, lines added/deleted, new files, scope violations.
 * At `width` the violations and the touched paths wrap (at the PR gate, the whole branch's list).
 */
export function blastRows(state: UiState, width = Number.POSITIVE_INFINITY): Row[] {
  const blast = state.blast;
  if (!blast) return [[text('nothing judged yet', { dim: true })]];
  const rows: Row[] = [
    [
      ...(blast.scope === 'branch' ? [text('whole branch: ', { tone: 'accent', bold: true })] : []),
      text(plural(blast.filesTouched, 'file'), { bold: true }),
      text(' · ', { dim: true }),
      text(`+${count(blast.linesAdded)}`, { tone: 'ok' }),
      text(' '),
      text(`−${count(blast.linesDeleted)}`, { tone: 'error' }),
      text(' · ', { dim: true }),
      text(`${count(blast.newFiles)} new`),
    ],
    verdictRow(blast),
  ];
  if (blast.sandbox)
    rows.push([
      text(sandboxWords(blast.sandbox), {
        dim: blast.sandbox === 'bwrap',
        tone: blast.sandbox === 'bwrap' ? undefined : 'warn',
      }),
    ]);
  for (const violation of blast.violations) rows.push([text(`  ${violation}`, { tone: 'error' })]);
  if (blast.touchedPaths.length > 0) {
    const more = blast.touchedTotal - blast.touchedPaths.length;
    rows.push([
      text('touched: ', { dim: true }),
      text(blast.touchedPaths.join(', ') + (more > 0 ? ` (+${count(more)})` : '')),
    ]);
  }
  return Number.isFinite(width) ? wrapRows(rows, width) : rows;
}

/**
 * The judge's word on scope. A write the scope hook refused never reached the diff, so the scope
 * is ok, but the agent tried: said beside it (the newcomer's pass, defect 27).
 */
function verdictRow(blast: BlastModel): Row {
  if (blast.code) return [text(`${GLYPH.failed} ${blast.code}`, { tone: 'error', bold: true })];
  if (blast.scope === 'branch') return [text('what the branch holds (base..HEAD)', { dim: true })];
  const refused = blast.refusedWrites ?? 0;
  return [
    text(`${GLYPH.done} scope ok`, { tone: 'ok' }),
    ...(refused > 0
      ? [
          text(' · ', { dim: true }),
          text(`${plural(refused, 'write')} refused`, { tone: 'warn', bold: true }),
        ]
      : []),
  ];
}

export function BlastRadius(props: {
  readonly state: UiState;
  readonly width: number;
  readonly height: number;
}) {
  const failed = props.state.blast?.code != null;
  return (
    <Frame title="Blast radius" width={props.width} height={props.height} tone={failed ? 'error' : undefined}>
      <Rows rows={clipRows(blastRows(props.state, innerWidth(props.width)), innerHeight(props.height))} />
    </Frame>
  );
}
