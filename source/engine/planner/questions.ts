/**
 * What counts as an explicit question in a comment (seed 004 "Each explicit question ⇒ one gap
 * record"). The seed asks for numbered questions, one per item; the runner reads every line that
 * asks something (ends a sentence with "?") as one question, list markers and emphasis stripped.
 * Text inside a quote (`>`) or a code block is somebody else's words, not a question asked.
 */

export function explicitQuestions(content: string): string[] {
  const questions: string[] = [];
  let inCode = false;
  for (const raw of content.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('```')) {
      inCode = !inCode;
      continue;
    }
    if (inCode || line.startsWith('>')) continue;
    const text = stripMarkers(line);
    if (asks(text)) questions.push(text);
  }
  return questions;
}

/** Numbered items ("1." "2)") in a comment: the seed's question format. */
export function numberedItems(content: string): string[] {
  return content
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => /^\d{1,3}[.)]\s+\S/.test(l));
}

/** "1) **Which statuses?**" -> "Which statuses?" */
export function stripMarkers(line: string): string {
  return line
    .replace(/^(?:[-*+]\s+|\d{1,3}[.)]\s+|#{1,6}\s+)+/, '')
    .replace(/\*\*|__|`/g, '')
    .trim();
}

/** A sentence that ends with a question mark (closing quotes or brackets allowed after it). */
function asks(text: string): boolean {
  return /\?["')\]]*(?:\s|$)/.test(text);
}

/** Case, spacing, quotes and markdown emphasis do not make two texts different. */
export function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/[*_`"“”‘’']/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Whether `part` appears in `whole`, both normalized. */
export function containsText(whole: string, part: string): boolean {
  const needle = normalize(part);
  return needle.length > 0 && normalize(whole).includes(needle);
}
