import { Frame, innerHeight } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRowsTail, type Row, type Segment, spinner, text } from '../components/row.js';
import { fitTo, padStartTo } from '../format/text.js';
import { duration } from '../format/time.js';
import { workIsOver } from '../store/selectors.js';
import type { UiState, VerifyRow } from '../store/ui-state.js';
import { GLYPH } from '../theme.js';

/** The runner's verification runs: template, fast/slow, live status, exit code, duration, command. */
export function verifyRows(state: UiState): Row[] {
  if (state.verifications.length === 0) return [[text('no verification run yet', { dim: true })]];
  return state.verifications.map((run) => [
    statusGlyph(run, workIsOver(state)),
    text(` ${run.phase.padEnd(4)} `, { dim: true }),
    text(fitTo(run.templateId, 14), { bold: true }),
    text(fitTo(` ${statusWord(run)}`, 12), { tone: toneOf(run) }),
    text(padStartTo(duration(run.durationMs ?? state.nowMs - run.startedAtMs), 7), { dim: true }),
    text(`  ${run.command}`, { dim: true }),
  ]);
}

function statusGlyph(run: VerifyRow, over: boolean): Segment {
  if (run.status === 'running') return over ? text(GLYPH.stopped, { dim: true }) : spinner('accent');
  return run.status === 'passed' ? text(GLYPH.done, { tone: 'ok' }) : text(GLYPH.failed, { tone: 'error' });
}

function statusWord(run: VerifyRow): string {
  if (run.status === 'running') return 'running';
  if (run.status === 'timed_out') return 'timed out';
  return `exit ${run.exitCode}`;
}

function toneOf(run: VerifyRow) {
  return run.status === 'running' ? 'accent' : run.status === 'passed' ? 'ok' : 'error';
}

export function Verifications(props: {
  readonly state: UiState;
  readonly width: number;
  readonly height: number;
}) {
  const runs = props.state.verifications;
  const passed = runs.filter((r) => r.status === 'passed').length;
  const failed = runs.filter((r) => r.status === 'failed' || r.status === 'timed_out').length;
  return (
    <Frame
      title="Verifications"
      // Every run counts: passed + failed + still running = runs (issue 16 item 3).
      aside={runs.length > 0 ? `${runs.length} run · ${passed} passed · ${failed} failed` : undefined}
      width={props.width}
      height={props.height}
      tone={failed > 0 ? 'error' : undefined}
    >
      <Rows rows={clipRowsTail(verifyRows(props.state), innerHeight(props.height))} />
    </Frame>
  );
}
