import { Frame, innerHeight, innerWidth } from '../components/Frame.js';
import { Rows } from '../components/RowLine.js';
import { clipRows, type Row, text } from '../components/row.js';
import { flatten, wrapText } from '../format/text.js';
import type { UiState } from '../store/ui-state.js';

/** The task the orchestrator proposed for the running tick, once the runner accepted it. */
export function currentTaskRows(state: UiState, width: number, maxIntentLines = 3): Row[] {
  const task = state.proposed;
  if (!task) {
    const waiting = state.runningTick ? 'waiting for the orchestrator' : 'no task yet';
    return [[text(waiting, { dim: true })]];
  }
  return [
    [
      text(flatten(task.taskId, 40), { bold: true, tone: 'accent' }),
      text(` [${flatten(task.milestone, 40)}]`, { dim: true }),
      text(` ${task.kind}`),
      text(` · ${task.mode}`, { dim: true }),
    ],
    ...wrapText(flatten(task.intent, 2000), width, maxIntentLines).map((line): Row => [text(line)]),
  ];
}

export function CurrentTask(props: {
  readonly state: UiState;
  readonly width: number;
  readonly height: number;
}) {
  const rows = currentTaskRows(
    props.state,
    innerWidth(props.width),
    Math.max(1, innerHeight(props.height) - 1),
  );
  return (
    <Frame title="Current task" width={props.width} height={props.height}>
      <Rows rows={clipRows(rows, innerHeight(props.height))} />
    </Frame>
  );
}
