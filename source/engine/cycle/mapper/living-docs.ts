import * as z from 'zod';
import { TRACK_TYPES, type TrackType } from '../track-types.js';

/**
 * Seed 003 P12's seven living docs: what the mapper agent must answer (zod-validated JSON), how
 * WORKFLOW.md carries the loading map, and the token cap ("<5000 tokens combined"), measured the
 * way the cycle measures files to load (4 characters a token) on the files as written.
 */

export const LIVING_DOCS = [
  'TECH_STACK.md',
  'PATTERNS.md',
  'PITFALLS.md',
  'RISKS.md',
  'WORKFLOW.md',
  'PRODUCT.md',
  'GLOSSARY.md',
] as const;
export type LivingDocName = (typeof LIVING_DOCS)[number];

/** `<docs_dir>/p12/`: the seed's `.deadf/p12/` (its `.deadf/seed/` docs live in `<docs_dir>/`). */
export function livingDocsDir(docsDir: string): string {
  return `${docsDir}/p12`;
}

/** Seed 003 P12: "<5000 tokens combined", so 4,999 at most. */
export const LIVING_DOCS_TOKEN_CAP = 4999;

/** The cycle's estimate (cycle.files_to_load_tokens): 4 characters a token. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

const MAP_START = '<!-- relais:loading-map -->';
const MAP_END = '<!-- /relais:loading-map -->';

const docText = z.string().trim().min(1).max(12_000);
/** A folder or file prefix of the repository ("source/cli/", "package.json"), or `*` for any path. */
const areaPath = z
  .string()
  .min(1)
  .max(200)
  .refine(
    (p) => p === '*' || (!p.startsWith('/') && !p.split('/').includes('..') && !/[|,\s]/.test(p)),
    'a relative path prefix without "..", spaces, "|" or ",", or "*"',
  );

const docList = z
  .array(z.enum(LIVING_DOCS))
  .min(1)
  .max(LIVING_DOCS.length)
  .refine((d) => new Set(d).size === d.length, 'no doc twice');

/** The seed's map: a track type (or `*`, every track) and the docs a track of that type loads. */
export const trackRowSchema = z.strictObject({
  track: z.enum([...TRACK_TYPES, '*']),
  docs: docList,
});

/** A finer map by the paths a task touches (the first format; files that hold it still load). */
export const areaRowSchema = z.strictObject({
  area: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'an area is a short lower-case word (letters, digits, "-", "_")'),
  paths: z.array(areaPath).min(1).max(12),
  docs: docList,
});

export const loadingRowSchema = z.union([trackRowSchema, areaRowSchema]);
export type LoadingRow = z.infer<typeof loadingRowSchema>;

/** The mapper agent's answer: one JSON object. */
export const mapperAnswerSchema = z.strictObject({
  docs: z.strictObject(
    Object.fromEntries(LIVING_DOCS.map((d) => [d, docText])) as Record<LivingDocName, typeof docText>,
  ),
  loading_map: z.array(loadingRowSchema).min(1).max(20),
});
export type MapperAnswer = z.infer<typeof mapperAnswerSchema>;

/** The seven files as written: WORKFLOW.md gets the loading map block the runner renders. */
export function renderLivingDocs(answer: MapperAnswer): Record<LivingDocName, string> {
  const out = {} as Record<LivingDocName, string>;
  for (const name of LIVING_DOCS) out[name] = `${answer.docs[name].trim()}\n`;
  out['WORKFLOW.md'] =
    `${withoutMapBlock(answer.docs['WORKFLOW.md']).trim()}\n\n${renderLoadingMap(answer.loading_map)}`;
  return out;
}

export function totalTokens(files: Record<LivingDocName, string>): number {
  return LIVING_DOCS.reduce((sum, name) => sum + estimateTokens(files[name]), 0);
}

export function renderLoadingMap(rows: readonly LoadingRow[]): string {
  return [
    '## Loading map',
    '',
    "Which living docs a task loads: by its track's type (`track=*`: every track), and by the paths it touches (`paths=*`: every task). The runner reads this block.",
    '',
    MAP_START,
    ...rows.map((r) =>
      'track' in r
        ? `- track=${r.track} | docs=${r.docs.join(', ')}`
        : `- area=${r.area} | paths=${r.paths.join(', ')} | docs=${r.docs.join(', ')}`,
    ),
    MAP_END,
    '',
  ].join('\n');
}

function withoutMapBlock(text: string): string {
  const start = text.indexOf(MAP_START);
  const end = text.indexOf(MAP_END);
  if (start < 0 || end < start) return text;
  return text.slice(0, start) + text.slice(end + MAP_END.length);
}

/**
 * The loading map read back from WORKFLOW.md (a human may have edited it): rows that do not parse
 * are left out and named, never guessed at.
 */
export function parseLoadingMap(workflow: string): { rows: LoadingRow[]; rejected: string[] } {
  const start = workflow.indexOf(MAP_START);
  const end = workflow.indexOf(MAP_END);
  if (start < 0 || end < start) return { rows: [], rejected: [] };
  const rows: LoadingRow[] = [];
  const rejected: string[] = [];
  for (const line of workflow.slice(start + MAP_START.length, end).split('\n')) {
    if (line.trim() === '') continue;
    const parsed = parseRow(line);
    if (parsed) rows.push(parsed);
    else rejected.push(line.trim());
  }
  return { rows, rejected };
}

function parseRow(line: string): LoadingRow | null {
  const list = (s: string) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
  const byTrack = /^\s*-\s*track=([^|]*)\|\s*docs=(.*)$/.exec(line);
  if (byTrack) {
    const row = trackRowSchema.safeParse({ track: (byTrack[1] ?? '').trim(), docs: list(byTrack[2] ?? '') });
    return row.success ? row.data : null;
  }
  const byArea = /^\s*-\s*area=([^|]*)\|\s*paths=([^|]*)\|\s*docs=(.*)$/.exec(line);
  if (!byArea) return null;
  const row = areaRowSchema.safeParse({
    area: (byArea[1] ?? '').trim(),
    paths: list(byArea[2] ?? ''),
    docs: list(byArea[3] ?? ''),
  });
  return row.success ? row.data : null;
}

/** The docs the map names for a task touching `paths`, each with the areas that named it, in map order. */
export function docsForPaths(
  rows: readonly LoadingRow[],
  paths: readonly string[],
): { doc: LivingDocName; areas: string[] }[] {
  return docsForTask(rows, { trackType: null, paths });
}

/**
 * The docs the map names for a task of a track of `trackType` touching `paths`, in map order, each
 * with what named it: "track type bugfix", "every track", or a path area's name.
 */
export function docsForTask(
  rows: readonly LoadingRow[],
  task: { readonly trackType: TrackType | null; readonly paths: readonly string[] },
): { doc: LivingDocName; areas: string[] }[] {
  const found = new Map<LivingDocName, string[]>();
  for (const row of rows) {
    const label = rowLabel(row, task);
    if (label === null) continue;
    for (const doc of row.docs) found.set(doc, [...(found.get(doc) ?? []), label]);
  }
  return [...found].map(([doc, areas]) => ({ doc, areas }));
}

/** What a row says of this task when it applies to it, or null. */
function rowLabel(
  row: LoadingRow,
  task: { readonly trackType: TrackType | null; readonly paths: readonly string[] },
): string | null {
  if ('track' in row) {
    if (row.track === '*') return 'every track';
    return row.track === task.trackType ? `track type ${row.track}` : null;
  }
  const hit = row.paths.some((prefix) => prefix === '*' || task.paths.some((p) => underPrefix(p, prefix)));
  return hit ? row.area : null;
}

function underPrefix(path: string, prefix: string): boolean {
  if (prefix.endsWith('/')) return path.startsWith(prefix);
  return path === prefix || path.startsWith(`${prefix}/`);
}

const TRIM_NOTE = '(trimmed by the runner: the living docs are capped at 5,000 tokens)';

/**
 * The last resort when the mapper, asked again, still wrote too much: the longest doc loses lines
 * from its end until the seven fit. WORKFLOW.md's loading map block is never cut.
 */
export function trimToCap(
  files: Record<LivingDocName, string>,
  cap = LIVING_DOCS_TOKEN_CAP,
): Record<LivingDocName, string> {
  const out = { ...files };
  const note = `${TRIM_NOTE}\n`;
  for (let guard = 0; guard < 100_000 && totalTokens(out) > cap; guard++) {
    const candidates = LIVING_DOCS.filter((n) => n !== 'WORKFLOW.md' || workflowBody(out[n]).length > 0);
    const longest = candidates.reduce((a, b) => (cutLength(out[a]) >= cutLength(out[b]) ? a : b));
    const next = dropLastLine(out[longest], note);
    if (next === out[longest]) break;
    out[longest] = next;
  }
  return out;
}

function cutLength(text: string): number {
  return workflowBody(text).length;
}

function workflowBody(text: string): string {
  const at = text.indexOf('## Loading map');
  return at < 0 ? text : text.slice(0, at);
}

function dropLastLine(text: string, note: string): string {
  const at = text.indexOf('## Loading map');
  const body = (at < 0 ? text : text.slice(0, at)).replace(note, '').trimEnd();
  const tail = at < 0 ? '' : `\n\n${text.slice(at)}`;
  if (body.length === 0) return text;
  const cut = body.lastIndexOf('\n');
  // One long line left: halve it rather than stop over the cap.
  const kept = cut > 0 ? body.slice(0, cut) : body.slice(0, Math.floor(body.length / 2));
  return `${kept.trimEnd()}\n${note}${tail}`;
}
