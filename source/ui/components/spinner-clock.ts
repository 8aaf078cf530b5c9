import { useSyncExternalStore } from 'react';

/**
 * One clock for every spinner on screen. A spinner with its own timer (ink-spinner: one 80 ms
 * interval each) costs a React render per spinner per tick, at different moments: with a phase,
 * a task and two verifications running, that is about 50 renders a second. Here one interval
 * moves one shared frame and every spinner reads it: about 10 renders a second, however many
 * spinners show, and they all turn together. The interval runs only while a spinner is mounted.
 */

/** cli-spinners' "dots", the frames ink-spinner showed. */
export const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'] as const;
export const SPINNER_INTERVAL_MS = 100;

const listeners = new Set<() => void>();
let frame = 0;
let timer: ReturnType<typeof setInterval> | null = null;

function advance(): void {
  frame = (frame + 1) % SPINNER_FRAMES.length;
  for (const listener of [...listeners]) listener();
}

export function subscribeSpinnerClock(listener: () => void): () => void {
  listeners.add(listener);
  if (timer === null) {
    timer = setInterval(advance, SPINNER_INTERVAL_MS);
    // A spinner left on screen must not keep the process alive.
    timer.unref?.();
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  };
}

export function spinnerFrame(): string {
  return SPINNER_FRAMES[frame] ?? SPINNER_FRAMES[0];
}

/** The current frame; re-renders the caller on each tick of the shared clock. */
export function useSpinnerFrame(): string {
  return useSyncExternalStore(subscribeSpinnerClock, spinnerFrame);
}
