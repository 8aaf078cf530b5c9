import { useInput, useStdin } from 'ink';
import { useCallback, useMemo, useRef } from 'react';
import type { UiController, ViewerBox } from '../keys/controller.js';
import { screenLayout } from '../layout/screen-layout.js';
import type { UiStore } from '../store/create-store.js';
import { COLOR_PALETTE, NO_COLOR_PALETTE } from '../theme.js';
import { type UiOptions, UiOptionsContext } from '../ui-context.js';
import { innerHeight, innerWidth } from './Frame.js';
import { Screen } from './Screen.js';
import { useSnapshot } from './use-snapshot.js';
import { useTerminalSize } from './use-terminal-size.js';

export interface AppProps {
  readonly store: UiStore;
  readonly controller: UiController;
  /** A fixed size (tests); otherwise the terminal's, followed on resize. */
  readonly columns?: number;
  readonly rows?: number;
  readonly colors?: boolean;
  /** False: spinners show a fixed frame (tests). */
  readonly animate?: boolean;
}

interface ScrollBoxes {
  readonly pageRows: number;
  readonly outputWidth: number;
  readonly viewer: ViewerBox;
  readonly gate: ViewerBox | null;
}

const NO_BOXES: ScrollBoxes = { pageRows: 1, outputWidth: 1, viewer: { width: 1, height: 1 }, gate: null };

/** The whole app: the store's latest snapshot, laid out for the terminal, keys to the controller. */
export function App(props: AppProps) {
  const { store, controller } = props;
  const snapshot = useSnapshot(store);
  const size = useTerminalSize(props.columns, props.rows);
  const layout = screenLayout(snapshot.state, size.columns, size.rows);
  // What the keys scroll: the output panel, or the whole body when an overlay covers it (all
  // the output, a document, a transcript: its text area is the body's, inside the frame).
  const boxes = useRef<ScrollBoxes>(NO_BOXES);
  if (layout.kind === 'panels') {
    const body = { width: innerWidth(layout.columns), height: innerHeight(layout.bodyHeight) };
    const full = snapshot.state.interaction.overlay?.kind === 'output';
    boxes.current = {
      pageRows: full ? body.height : layout.outputRows,
      outputWidth: full ? body.width : layout.outputColumns,
      viewer: body,
      gate: layout.gateBox,
    };
  } else boxes.current = NO_BOXES;
  const { isRawModeSupported } = useStdin();
  const onKey = useCallback<Parameters<typeof useInput>[0]>(
    (input, key) => {
      const { pageRows, viewer, outputWidth, gate } = boxes.current;
      controller.handleKey(input, key, pageRows, viewer, outputWidth, gate ?? undefined);
    },
    [controller],
  );
  useInput(onKey, { isActive: isRawModeSupported });
  const colors = props.colors ?? true;
  const animate = props.animate ?? true;
  const options = useMemo<UiOptions>(
    () => ({ palette: colors ? COLOR_PALETTE : NO_COLOR_PALETTE, animate }),
    [colors, animate],
  );
  return (
    <UiOptionsContext.Provider value={options}>
      <Screen snapshot={snapshot} layout={layout} />
    </UiOptionsContext.Provider>
  );
}
