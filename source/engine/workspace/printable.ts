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

// CSI (colours, cursor moves, clear screen), the string controls OSC/DCS/SOS/PM/APC (window
// titles, hyperlinks, OSC 52 clipboard writes) up to their BEL or ST, in their 7-bit (ESC x) and
// 8-bit (C1) forms, then any other escape (charset, reset) and a lone ESC.
const ESCAPE_SEQUENCE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing escape sequences is the point
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|(?:\u001b[\]PX^_]|[\u0090\u0098\u009d-\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[ -/]*[0-~]?/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const HAS_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/**
 * Text for a terminal with nothing the terminal would act on: escape sequences go whole (a
 * cursor move, a screen clear, an OSC 52 clipboard write), then every other C0 control (a bell, a
 * carriage return that would overwrite the line), DEL and every C1 control. Only tab and newline
 * stay, for the caller to lay out. Unlike `printable`, nothing is shown in their place: this is
 * for the screen, where `\u001b[2J` spelled out is noise, not evidence.
 */
export function stripControls(text: string): string {
  if (!HAS_CONTROL.test(text)) return text;
  return text.replace(ESCAPE_SEQUENCE, '').replace(CONTROL_CHARACTER, '');
}
