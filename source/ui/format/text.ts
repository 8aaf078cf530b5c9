import stringWidth from 'string-width';
import { stripControls } from '../../engine/events.js';

/**
 * Text from agents, git and child processes, made safe and sized for a terminal cell grid. Widths
 * are measured in terminal columns (a CJK character or an emoji takes two), never in UTF-16 units.
 */

/** What one kept output line may hold: wider than any terminal, small enough to bound memory. */
export const MAX_LINE_CHARS = 1000;

// Anything that needs work before display: control characters (escapes, \r, \t) and C1 codes.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const NEEDS_CLEANING = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * One display line from raw text: escape sequences and control characters dropped (an agent's
 * coloured output must not restyle the app, a model's text must not move the cursor, clear the
 * screen or write the clipboard), a carriage return keeps what a terminal would show (the text
 * after it), tabs become spaces, and the result is cut to `max` characters.
 * The line is always a copy: the text may itself be a slice of a large chunk of a child's stdout,
 * and a kept line must not pin that chunk in memory.
 */
export function displayLine(raw: string, max = MAX_LINE_CHARS): string {
  // Plain text, the common case, takes one test and one copy.
  if (raw.length <= max && !NEEDS_CLEANING.test(raw)) return detach(raw);
  let text = raw.length > max * 4 ? raw.slice(0, max * 4) : raw;
  const carriageReturn = text.lastIndexOf('\r', text.length - 2);
  if (carriageReturn >= 0) text = text.slice(carriageReturn + 1);
  text = stripControls(text.replace(/\t/g, '  ').replace(/\n/g, ' '));
  if (text.length > max) text = `${text.slice(0, max - 1)}…`;
  return detach(text);
}

/** The display lines of a block of text (one per `\n`). */
export function displayLines(raw: string, max = MAX_LINE_CHARS): string[] {
  if (!raw.includes('\n')) return [displayLine(raw, max)];
  return raw.split('\n').map((line) => displayLine(line, max));
}

/** One line from text that may hold newlines: each newline shows as ⏎. */
export function flatten(raw: string, max = MAX_LINE_CHARS): string {
  return displayLine(raw.replace(/\r?\n/g, ' ⏎ '), max);
}

/** `flatten` for a field an event may leave empty. */
export function flattenOrNull(raw: string | null, max = MAX_LINE_CHARS): string | null {
  return raw === null ? null : flatten(raw, max);
}

/**
 * V8 keeps a substring as a view into its parent string: storing `chunk.slice(…)` would keep the
 * whole chunk alive. Slicing a fresh concatenation makes V8 copy the characters into a new string
 * first, so the result points into that copy, not into the parent.
 */
function detach(text: string): string {
  return text.length < 13 ? text : ` ${text}`.slice(1);
}

export function widthOf(text: string): number {
  return stringWidth(text);
}

/** Cut `text` to at most `width` columns, ending with … when something was cut. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return '';
  if (text.length <= width && isNarrow(text)) return text;
  if (widthOf(text) <= width) return text;
  let used = 0;
  let out = '';
  for (const char of text) {
    const w = widthOf(char);
    if (used + w > width - 1) break;
    out += char;
    used += w;
  }
  return `${out}…`;
}

/** `text` cut or padded with spaces to exactly `width` columns. */
export function fitTo(text: string, width: number): string {
  const cut = truncate(text, width);
  return cut + ' '.repeat(Math.max(0, width - widthOf(cut)));
}

/** `text` right-aligned in `width` columns (cut when longer). */
export function padStartTo(text: string, width: number): string {
  const cut = truncate(text, width);
  return ' '.repeat(Math.max(0, width - widthOf(cut))) + cut;
}

// Printable ASCII: one column per character, so `.length` is the width.
function isNarrow(text: string): boolean {
  return /^[\x20-\x7e]*$/.test(text);
}

/** 1234 -> "1,234": counters read at a glance. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** Word-wrap `text` to `width` columns, at most `maxLines` lines (the last ends with … when cut). */
export function wrapText(text: string, width: number, maxLines: number): string[] {
  if (width <= 0 || maxLines <= 0) return [];
  const lines = wrapWords(text, width, (word) => [truncate(word, width)]);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines);
  kept[maxLines - 1] = truncate(`${kept[maxLines - 1]} …`, width);
  return kept;
}

/**
 * Word-wrap `text` to `width` columns, all of it: no line limit, and a word wider than the line is
 * broken across rows instead of cut (a gate's question is read whole, issue 9 of the newcomer's
 * pass). Runs of spaces collapse like a paragraph's.
 */
export function wrapWhole(text: string, width: number): string[] {
  if (width <= 0) return [];
  return wrapWords(text, width, (word) => {
    const rows: string[] = [];
    let rest = word;
    while (widthOf(rest) > width) {
      const [head, tail] = splitAtWidth(rest, width);
      rows.push(head);
      rest = tail;
    }
    return [...rows, rest];
  });
}

/** Words packed into lines of `width` columns; a word wider than a line becomes `tooWide(word)`'s rows. */
function wrapWords(text: string, width: number, tooWide: (word: string) => string[]): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const candidate = current ? `${current} ${word}` : word;
    if (widthOf(candidate) <= width) {
      current = candidate;
      continue;
    }
    if (current) lines.push(current);
    const rows = widthOf(word) > width ? tooWide(word) : [word];
    lines.push(...rows.slice(0, -1));
    current = rows.at(-1) ?? '';
  }
  if (current) lines.push(current);
  return lines;
}

/** The longest head of `text` that fits `width` columns (at least one character), and the rest. */
function splitAtWidth(text: string, width: number): [string, string] {
  let used = 0;
  let head = '';
  for (const char of text) {
    const w = widthOf(char);
    if (used + w > width && head) break;
    head += char;
    used += w;
  }
  return [head, text.slice(head.length)];
}
