import { Box, Text } from 'ink';
import type { PanelId, ScreenLayout } from '../layout/screen-layout.js';
import { MIN_COLUMNS, MIN_ROWS } from '../layout/screen-layout.js';
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
import { PhaseTimeline } from '../panels/PhaseTimeline.js';
import { ResultPanel } from '../panels/ResultPanel.js';
import { Tasks } from '../panels/Tasks.js';
import { TickTimeline } from '../panels/TickTimeline.js';
import { Verdicts } from '../panels/Verdicts.js';
import { Verifications } from '../panels/Verifications.js';
import { WaitCountdown } from '../panels/WaitCountdown.js';
import type { UiSnapshot } from '../store/create-store.js';
import { agentLabel, finalResult } from '../store/selectors.js';
import type { UiState } from '../store/ui-state.js';

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
      <Box width={layout.columns} height={Math.max(0, layout.rows - 1)} overflow="hidden">
        <Text wrap="truncate-end">
          Terminal too small ({layout.columns}×{layout.rows}); Relais needs {MIN_COLUMNS}×{MIN_ROWS}.
        </Text>
      </Box>
    );
  }
  return (
    <Box flexDirection="column" width={layout.columns} height={layout.rows - 1} overflow="hidden">
      <Header state={state} width={layout.columns} />
      {state.interaction.overlay ? (
        <Overlay state={state} width={layout.columns} height={layout.bodyHeight} />
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
 * What covers the panels (the header and footer stay): the `?` list of keys or a gate's document.
 * The layout is untouched: closing the overlay shows the same panels again.
 */
function Overlay(props: { readonly state: UiState; readonly width: number; readonly height: number }) {
  const overlay = props.state.interaction.overlay;
  if (overlay?.kind === 'help')
    return <HelpOverlay state={props.state} width={props.width} height={props.height} />;
  if (overlay?.kind === 'document')
    return (
      <DocumentViewer
        documents={props.state.gate?.documents ?? []}
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
      return <AgentOutput output={output} agent={agentLabel(state)} {...size} />;
    case 'verify':
      return <Verifications state={state} {...size} />;
    case 'blast':
      return <BlastRadius state={state} {...size} />;
    case 'lanes':
      return <Lanes state={state} {...size} />;
    default:
      return null;
  }
}
