import { Box, Text } from 'ink';
import { wrapText } from '../format/text.js';
import type { PanelId, ScreenLayout } from '../layout/screen-layout.js';
import { MIN_COLUMNS, MIN_ROWS, PAIRS } from '../layout/screen-layout.js';
import { AgentOutput } from '../panels/AgentOutput.js';
import { BlastRadius } from '../panels/BlastRadius.js';
import { BreakerPanel } from '../panels/BreakerPanel.js';
import { CurrentTask } from '../panels/CurrentTask.js';
import { DocumentViewer } from '../panels/DocumentViewer.js';
import { FleetPanel } from '../panels/FleetPanel.js';
import { Footer } from '../panels/Footer.js';
import { GatePanel } from '../panels/GatePanel.js';
import { Header } from '../panels/Header.js';
import { HelpOverlay } from '../panels/HelpOverlay.js';
import { Lanes } from '../panels/Lanes.js';
import { Ledger } from '../panels/Ledger.js';
import { LogList } from '../panels/LogList.js';
import { PhaseTimeline } from '../panels/PhaseTimeline.js';
import { ResultPanel } from '../panels/ResultPanel.js';
import { Tasks } from '../panels/Tasks.js';
import { TickTimeline } from '../panels/TickTimeline.js';
import { Verdicts } from '../panels/Verdicts.js';
import { Verifications } from '../panels/Verifications.js';
import { WaitCountdown } from '../panels/WaitCountdown.js';
import type { UiSnapshot } from '../store/create-store.js';
import { agentLabel, finalResult, outputLabel } from '../store/selectors.js';

/**
 * What a terminal too small for the panels shows, wrapped to its width (issue 16 item 4: the
 * message itself was cut). Down to 20×6 it reads whole; the work goes on meanwhile.
 */
export function tooSmallLines(columns: number, rows: number): string[] {
  const words = `Terminal too small (${columns}×${rows}): Relais needs ${MIN_COLUMNS}×${MIN_ROWS}. Enlarge it; the run goes on.`;
  return wrapText(words, Math.max(1, columns), Math.max(1, rows - 1));
}

/** Header, the panels where the layout put them, footer: exactly the layout's size. */
export function Screen({
  snapshot,
  layout,
}: {
  readonly snapshot: UiSnapshot;
  readonly layout: ScreenLayout;
}) {
  const { state } = snapshot;
  if (layout.kind === 'too_small') {
    return (
      <Box
        flexDirection="column"
        width={layout.columns}
        height={Math.max(0, layout.rows - 1)}
        overflow="hidden"
      >
        {tooSmallLines(layout.columns, layout.rows).map((line, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: lines are positional
          <Text key={index} wrap="truncate-end">
            {line}
          </Text>
        ))}
      </Box>
    );
  }
  return (
    <Box flexDirection="column" width={layout.columns} height={layout.rows - 1} overflow="hidden">
      <Header state={state} width={layout.columns} />
      {state.interaction.overlay ? (
        <Overlay snapshot={snapshot} width={layout.columns} height={layout.bodyHeight} />
      ) : (
        <Box flexDirection="row" width={layout.columns} height={layout.bodyHeight} overflow="hidden">
          {layout.stack.map((column) => (
            <Box
              key={column.name}
              flexDirection="column"
              width={column.width}
              height={layout.bodyHeight}
              flexShrink={0}
            >
              {column.panels.map((panel) => (
                <Panel
                  key={panel.id}
                  id={panel.id}
                  snapshot={snapshot}
                  width={column.width}
                  height={panel.height}
                />
              ))}
            </Box>
          ))}
        </Box>
      )}
      <Footer state={state} width={layout.columns} />
    </Box>
  );
}

/**
 * What covers the panels (the header and footer stay): the `?` list of keys, a gate's document,
 * all the output, the list of agent runs or one run's transcript. The layout is untouched: closing the overlay shows the same panels again.
 */
function Overlay(props: { readonly snapshot: UiSnapshot; readonly width: number; readonly height: number }) {
  const { state } = props.snapshot;
  const overlay = state.interaction.overlay;
  const size = { width: props.width, height: props.height };
  if (overlay?.kind === 'output')
    return <AgentOutput output={props.snapshot.output} agent={agentLabel(state)} full {...size} />;
  if (overlay?.kind === 'logs') return <LogList list={overlay} {...size} />;
  if (overlay?.kind === 'log')
    return <DocumentViewer documents={[overlay.document]} index={0} top={overlay.top} {...size} />;
  if (overlay?.kind === 'help') return <HelpOverlay state={state} {...size} />;
  if (overlay?.kind === 'document')
    return (
      <DocumentViewer
        documents={state.gate?.documents ?? []}
        index={overlay.index}
        top={overlay.top}
        width={props.width}
        height={props.height}
      />
    );
  return null;
}

function Panel(props: {
  readonly id: PanelId;
  readonly snapshot: UiSnapshot;
  readonly width: number;
  readonly height: number;
}) {
  const { state, output } = props.snapshot;
  const size = { width: props.width, height: props.height };
  switch (props.id) {
    case 'result': {
      const result = finalResult(state);
      return result ? <ResultPanel result={result} {...size} /> : null;
    }
    case 'gate':
      return <GatePanel state={state} {...size} />;
    case 'fleet':
      return <FleetPanel state={state} {...size} />;
    case 'wait':
      return <WaitCountdown state={state} {...size} />;
    case 'phases':
      return <PhaseTimeline state={state} {...size} />;
    case 'ticks':
      return <TickTimeline state={state} {...size} />;
    case 'breaker':
      return <BreakerPanel state={state} {...size} />;
    case 'tasks':
      return <Tasks state={state} {...size} />;
    case 'verdicts':
      return <Verdicts state={state} {...size} />;
    case 'ledger':
      return <Ledger state={state} {...size} />;
    case 'task':
      return <CurrentTask state={state} {...size} />;
    case 'output':
      return (
        <AgentOutput
          output={output}
          agent={outputLabel(state)}
          tagLanes={state.lanes.rows.length > 0 && state.interaction.outputLane === null}
          {...size}
        />
      );
    case 'verify':
      return <Verifications state={state} {...size} />;
    case 'blast':
      return <BlastRadius state={state} {...size} />;
    case 'lanes':
      return <Lanes state={state} {...size} />;
    case 'verify_blast':
    case 'verdicts_ledger': {
      const [left, right] = PAIRS[props.id];
      const half = Math.floor(props.width / 2);
      return (
        <Box flexDirection="row" width={props.width} height={props.height} flexShrink={0}>
          <Panel id={left} snapshot={props.snapshot} width={half} height={props.height} />
          <Panel id={right} snapshot={props.snapshot} width={props.width - half} height={props.height} />
        </Box>
      );
    }
    default:
      return null;
  }
}
