import { afterEach, describe, expect, test, vi } from 'vitest';

vi.hoisted(() => {
  delete process.env.CI;
});

import { render } from 'ink-testing-library';
import { Rows } from '../../source/ui/components/RowLine.js';
import { type Row, spinner, text } from '../../source/ui/components/row.js';
import {
  SPINNER_FRAMES,
  SPINNER_INTERVAL_MS,
  subscribeSpinnerClock,
} from '../../source/ui/components/spinner-clock.js';
import { NO_COLOR_PALETTE } from '../../source/ui/theme.js';
import { UiOptionsContext } from '../../source/ui/ui-context.js';

// Spinners turn on one shared clock: the screen redraws about 10 times a second for them, however
// many show (a running phase, a task, verifications), instead of once per spinner per 80 ms.

afterEach(() => {
  vi.useRealTimers();
});

const rows = (count: number): Row[] =>
  Array.from({ length: count }, (_, i): Row => [spinner('accent'), text(` running ${i}`)]);

function renderSpinners(count: number) {
  return render(
    <UiOptionsContext.Provider value={{ palette: NO_COLOR_PALETTE, animate: true }}>
      <Rows rows={rows(count)} />
    </UiOptionsContext.Provider>,
  );
}

/** The spinner glyph of each line of a frame. */
const glyphs = (frame: string | undefined) => (frame ?? '').split('\n').map((line) => [...line][0] ?? '');

describe('the shared spinner clock', () => {
  test('one interval for any number of listeners, gone with the last one', () => {
    vi.useFakeTimers();
    const before = vi.getTimerCount();
    const heard = [0, 0, 0];
    const stops = heard.map((_, i) =>
      subscribeSpinnerClock(() => {
        heard[i] = (heard[i] ?? 0) + 1;
      }),
    );
    expect(vi.getTimerCount()).toBe(before + 1);
    vi.advanceTimersByTime(1000);
    expect(heard).toEqual([10, 10, 10]);
    for (const stop of stops) stop();
    expect(vi.getTimerCount()).toBe(before);
  });

  test('five spinners: every one shows the same frame, and about 10 frames a second are drawn', async () => {
    vi.useFakeTimers();
    const view = renderSpinners(5);
    const first = glyphs(view.lastFrame());
    expect(first).toHaveLength(5);
    expect(new Set(first).size).toBe(1);
    expect(SPINNER_FRAMES).toContain(first[0]);
    const framesBefore = view.frames.length;
    await vi.advanceTimersByTimeAsync(1000);
    const drawn = view.frames.length - framesBefore;
    // One clock: 1000 / 100 ms = 10 redraws. Five 80 ms timers made about 60.
    expect(drawn).toBeGreaterThanOrEqual(1000 / SPINNER_INTERVAL_MS - 1);
    expect(drawn).toBeLessThanOrEqual(1000 / SPINNER_INTERVAL_MS + 1);
    // Ten frames make a turn; one more tick moves every spinner on, together.
    await vi.advanceTimersByTimeAsync(SPINNER_INTERVAL_MS);
    const later = glyphs(view.lastFrame());
    expect(new Set(later).size).toBe(1);
    expect(later[0]).not.toBe(first[0]);
    view.unmount();
  });
});
