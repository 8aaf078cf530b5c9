/**
 * Colours and glyphs. Colour is never the only signal (every state also has a glyph or a word), so
 * with NO_COLOR (https://no-color.org: set and not empty) the app stays readable without it.
 */

export type Tone = 'accent' | 'ok' | 'warn' | 'error' | 'info' | 'gate';

export type Palette = Readonly<Record<Tone, string | undefined>>;

export const COLOR_PALETTE: Palette = {
  accent: 'cyan',
  ok: 'green',
  warn: 'yellow',
  error: 'red',
  info: 'blue',
  gate: 'magenta',
};

export const NO_COLOR_PALETTE: Palette = {
  accent: undefined,
  ok: undefined,
  warn: undefined,
  error: undefined,
  info: undefined,
  gate: undefined,
};

export function colorsWanted(env: NodeJS.ProcessEnv): boolean {
  return env.NO_COLOR === undefined || env.NO_COLOR === '';
}

/** Single-column glyphs only: a double-width glyph would shift every column after it. */
export const GLYPH = {
  done: '✓',
  failed: '✗',
  pending: '○',
  waiting: '◇',
  rejected: '⊘',
  claimed: '◐',
  /** Ended without doing all of its part (a branch left unpushed). */
  partial: '◐',
  /** A phase Ctrl-C stopped: resumable, not failed. */
  interrupted: '‖',
  /** Something that was running when the work stopped. */
  stopped: '·',
  warn: '!',
  tool: '▸',
  /** The spinner's frame when animation is off (tests, screenshots). */
  still: '⠿',
} as const;
