import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../workspace/atomic-write.js';
import type { Learning } from './schemas.js';

/**
 * Learnings reach the Relais orchestrator through relais/FACTS.md, which its prompt already reads
 * (capped). FACTS.md is also the human's own file of curated facts: the planner owns one marked
 * section of it, replaced in place, and never touches the rest.
 */

export const FACTS_BEGIN =
  '<!-- relais planner learnings: begin (generated from relais/planner/learnings.json) -->';
export const FACTS_END = '<!-- relais planner learnings: end -->';

/**
 * The section: the newest learnings first, within `maxItems` and `maxChars`. `maxChars` counts
 * everything between the fixed title and end marker, headings included; a heading comes only
 * with at least one of its learnings.
 */
export function learningsSection(learnings: readonly Learning[], maxItems: number, maxChars: number): string {
  const newest = [...learnings].sort((a, b) => b.id - a.id).slice(0, maxItems);
  const lines: string[] = [];
  let size = 0;
  for (const type of ['domain_learnings', 'code_learnings'] as const) {
    const heading = type === 'domain_learnings' ? '### Domain' : '### Code';
    let headed = false;
    for (const l of newest.filter((item) => item.type === type)) {
      const line = `- ${inert(l.content.replace(/\s+/g, ' ').trim())} (learning ${l.id}, from ${inert(l.source_author)})`;
      const cost = line.length + 1 + (headed ? 0 : heading.length + 1);
      if (size + cost > maxChars) break;
      if (!headed) lines.push(heading);
      headed = true;
      lines.push(line);
      size += cost;
    }
  }
  return [FACTS_BEGIN, '## Learnings from planning (Relay)', ...lines, FACTS_END].join('\n');
}

/**
 * A learning is a human's words: it must not open or close an HTML comment, or it could end the
 * section early (the next replace would then leave its tail behind) or hide text from a reader.
 */
function inert(text: string): string {
  return text.replace(/<!--/g, '&lt;!--').replace(/-->/g, '--&gt;');
}

export function withLearningsSection(current: string, section: string): string {
  const begin = current.indexOf(FACTS_BEGIN);
  const end = begin >= 0 ? current.indexOf(FACTS_END, begin) : -1;
  if (begin >= 0 && end > begin)
    return `${current.slice(0, begin)}${section}${current.slice(end + FACTS_END.length)}`;
  const base = current.trimEnd();
  return `${base}${base ? '\n\n' : ''}${section}\n`;
}

export async function renderFacts(
  factsPath: string,
  learnings: readonly Learning[],
  caps: { maxItems: number; maxChars: number },
): Promise<void> {
  if (learnings.length === 0) return;
  const current = await readFile(factsPath, 'utf8').catch(() => '');
  const next = withLearningsSection(current, learningsSection(learnings, caps.maxItems, caps.maxChars));
  if (next !== current) await writeFileAtomic(factsPath, next);
}
