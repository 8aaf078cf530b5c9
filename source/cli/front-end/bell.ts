import type { StampedEvent } from '../../engine/index.js';
import type { CommandIo } from '../io.js';

/** The terminal bell: many terminals turn it into a desktop notification or an urgent window. */
const BEL = '\u0007';

/**
 * The user's notifications (`relais config set notifications.enabled true`): a bell when a gate
 * asks a question and when the command's work ends. It goes to stderr, so stdout stays clean
 * lines or NDJSON; without the setting nothing rings.
 */
export interface Bell {
  take(event: StampedEvent): void;
  /** The work is over (not interrupted: whoever pressed Ctrl-C is already at the terminal). */
  end(): void;
}

export function bellFor(io: CommandIo, enabled: boolean): Bell {
  const ring = () => {
    if (enabled) io.stderr.write(BEL);
  };
  return {
    take(event) {
      if (event.type === 'gate.requested') ring();
    },
    end: ring,
  };
}
