/**
 * Text from models, git paths and child processes may hold control characters; printed raw they
 * could rewrite the user's terminal. Everything shown to a human goes through this.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function printable(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** One line, control characters escaped, cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const flat = printable(text.replace(/\r?\n/g, ' ⏎ '));
  return flat.length > max ? `${flat.slice(0, Math.max(0, max - 1))}…` : flat;
}
