import { useInput, useStdin } from 'ink';
import { useCallback, useMemo, useRef } from 'react';
import type { UiController } from '../keys/controller.js';
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

/** The whole app: the store's latest snapshot, laid out for the terminal, keys to the controller. */
export function App(props: AppProps) {
  const { store, controller } = props;
  const snapshot = useSnapshot(store);
  const size = useTerminalSize(props.columns, props.rows);
  const layout = screenLayout(snapshot.state, size.columns, size.rows);
  const pageRows = useRef(1);
  pageRows.current = layout.kind === 'panels' ? layout.outputRows : 1;
  // The document viewer covers the body: its text area is the body's, inside the frame.
  const viewer = useRef({ width: 1, height: 1 });
  viewer.current =
    layout.kind === 'panels'
      ? { width: innerWidth(layout.columns), height: innerHeight(layout.bodyHeight) }
      : { width: 1, height: 1 };
  const { isRawModeSupported } = useStdin();
  const onKey = useCallback<Parameters<typeof useInput>[0]>(
    (input, key) => controller.handleKey(input, key, pageRows.current, viewer.current),
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
