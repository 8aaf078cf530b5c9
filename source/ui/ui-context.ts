import { createContext, useContext } from 'react';
import { COLOR_PALETTE, type Palette } from './theme.js';

/** Rendering options every panel reads: colours (NO_COLOR) and whether spinners move. */
export interface UiOptions {
  readonly palette: Palette;
  /** False in tests and screenshots: spinners show one fixed frame. */
  readonly animate: boolean;
}

export const UiOptionsContext = createContext<UiOptions>({ palette: COLOR_PALETTE, animate: true });

export function useUiOptions(): UiOptions {
  return useContext(UiOptionsContext);
}
