import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/project.js';

// Nothing in the repository points at a document a clone does not have: the design card
// (DESIGN.md, its "style rules") or the seeds' folder (../shared). The seed documents themselves
// are cited by section, and docs/seeds.md says what each cited section holds and where it lives.

const SKIP = new Set(['node_modules', 'dist', '.git']);
const THIS_FILE = 'test/unit/outside-references.test.ts';

function textFiles(dir: string, out: Map<string, string> = new Map()): Map<string, string> {
  for (const entry of readdirSync(join(REPO_ROOT, dir), { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) textFiles(path, out);
    else if (/\.(ts|tsx|mjs|js|json|md|txt)$/.test(entry.name))
      out.set(relative('.', path), readFileSync(join(REPO_ROOT, path), 'utf8'));
  }
  return out;
}

const files = new Map([
  ...['source', 'test', 'bench', 'docs', 'prompts', 'examples'].flatMap((dir) => [...textFiles(dir)]),
  ['README.md', readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')],
]);
files.delete(THIS_FILE);

const OUTSIDE = /DESIGN\.md|\bDESIGN(?: style rule|:)|\.\.\/shared\b|shared\/seeds/;

/** A seed section as comments cite it: §7, §3.1, Appendix A/B, A1-A6, PR1-PR5, P2-P12, Q2, F006, G1-G5. */
const SECTION =
  /§\d+(?:\.\d+)?|Appendix [AB]\d?|\bA[1-6]\b|\bPR\d\b|\bP\d{1,2}\b|\bQ\d\b|\bF0\d\d\b|\bG\d\b/g;

/** Every (seed, section) a text cites: the sections written after "seed 00N" on the same line. */
function seedCitations(text: string): Array<{ seed: string; section: string | null }> {
  const found: Array<{ seed: string; section: string | null }> = [];
  for (const line of text.split('\n')) {
    const parts = line.split(/\bseed (00\d)\b/i);
    for (let i = 1; i < parts.length; i += 2) {
      const seed = parts[i] as string;
      const sections = (parts[i + 1] ?? '').match(SECTION) ?? [];
      if (sections.length === 0) found.push({ seed, section: null });
      for (const section of sections)
        found.push({ seed, section: section.replace(/^Appendix (A\d)$/, '$1') });
    }
  }
  return found;
}

const seedsPage = readFileSync(join(REPO_ROOT, 'docs/seeds.md'), 'utf8');

function partOf(seed: string): string {
  const start = seedsPage.indexOf(`## Seed ${seed}`);
  if (start < 0) return '';
  const next = seedsPage.indexOf('\n## ', start + 1);
  return seedsPage.slice(start, next < 0 ? undefined : next);
}

const listed = (part: string, section: string) =>
  new RegExp(`${section.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\d]|\\.\\d)`).test(part);

describe('references a clone can follow', () => {
  it('reads the source, tests, benchmarks, docs and prompts', () => {
    expect([...files.keys()]).toContain('source/cli/signals.ts');
    expect([...files.keys()]).toContain('docs/ARCHITECTURE.md');
    expect(files.size).toBeGreaterThan(400);
  });

  it('no file names DESIGN.md, its style rules, or ../shared', () => {
    const offenders = [...files].filter(([, text]) => OUTSIDE.test(text)).map(([path]) => path);
    expect(offenders).toEqual([]);
  });

  it('every seed section cited in source/ or docs/ is listed in docs/seeds.md, under its seed', () => {
    const missing = new Set<string>();
    for (const [path, text] of files) {
      if (!(path.startsWith('source/') || path.startsWith('docs/')) || path === 'docs/seeds.md') continue;
      for (const { seed, section } of seedCitations(text)) {
        const part = partOf(seed);
        if (!part) missing.add(`seed ${seed} (no "## Seed ${seed}" part), cited in ${path}`);
        else if (section && !listed(part, section)) missing.add(`seed ${seed} ${section}, cited in ${path}`);
      }
    }
    expect([...missing]).toEqual([]);
  });

  it('the citation reader finds what a comment cites, and the check would catch a section not listed', () => {
    expect(seedCitations('// REPORT (seed 000 §6, §14, Appendix A6); seed 001 PR4-PR5 and seed 003')).toEqual(
      [
        { seed: '000', section: '§6' },
        { seed: '000', section: '§14' },
        { seed: '000', section: 'A6' },
        { seed: '001', section: 'PR4' },
        { seed: '001', section: 'PR5' },
        { seed: '003', section: null },
      ],
    );
    expect(listed(partOf('000'), '§7')).toBe(true);
    expect(listed(partOf('000'), '§3')).toBe(false);
    expect(listed(partOf('000'), '§3.1')).toBe(true);
    expect(listed(partOf('002'), '§42')).toBe(false);
    expect(OUTSIDE.test('// One place owns interrupts (DESIGN style rule 3).')).toBe(true);
    expect(OUTSIDE.test("see '../shared/seeds/000.md'")).toBe(true);
  });
});
