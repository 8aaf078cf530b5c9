/**
 * The escape sequences the app owns. Entering: the alternate screen (the user's scrollback stays
 * untouched underneath), cursor home, screen cleared, cursor hidden. Leaving: attributes reset,
 * cursor shown, back to the normal screen exactly as it was.
 */
export const ENTER_ALTERNATE_SCREEN = '\u001b[?1049h\u001b[H\u001b[2J\u001b[?25l';
export const LEAVE_ALTERNATE_SCREEN = '\u001b[0m\u001b[?25h\u001b[?1049l';
/** Before a redraw at a new size: whatever the terminal kept of the old frame goes. */
export const CLEAR_SCREEN = '\u001b[H\u001b[2J';

/** Raw mode off, when the stream has it (a TTY); never throws (the crash path calls this). */
export function leaveRawMode(stdin: NodeJS.ReadStream): void {
  try {
    if (stdin.isTTY && typeof stdin.setRawMode === 'function') stdin.setRawMode(false);
  } catch {
    // The terminal may already be gone (hang-up): nothing left to restore.
  }
}

/** A write that never throws: restoring the terminal must go on when stdout is closed. */
export function safeWrite(stdout: NodeJS.WriteStream, data: string): void {
  try {
    if (!stdout.destroyed && stdout.writable !== false) stdout.write(data);
  } catch {
    // Same as above.
  }
}
