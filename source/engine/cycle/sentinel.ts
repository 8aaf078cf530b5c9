import { NONCE_PATTERN } from './nonce.js';

/**
 * Seed 003 "Sentinel Parsing": the one strict reader of every block a model writes (TRACK, SPEC,
 * PLAN, VERDICT). Opener and closer stand alone on their own lines at column 0; exactly one block
 * may carry this cycle's nonce; blocks with another nonce (an echoed example, an old answer) are
 * not ours and are ignored when ours is there, and named in the error when it is not. Inside, every
 * line is `KEY=value` (bare token or quoted string), `KEY=` then 2-space indented lines, `KEY:`
 * then `- attr=value ...` items. A quoted value ends on its line, so a block written inside a
 * value never starts on a line of its own and is never read as a block. Errors carry line numbers.
 */

export type BlockKind = 'TRACK' | 'SPEC' | 'PLAN' | 'VERDICT';

export type SentinelErrorKind = 'missing' | 'wrong_nonce' | 'duplicate' | 'malformed';

export interface SentinelError {
  readonly kind: SentinelErrorKind;
  /** 1-based line of the raw text, or null when the error is about the whole answer. */
  readonly line: number | null;
  readonly message: string;
}

export type SentinelResult<T> = { ok: true; value: T } | { ok: false; error: SentinelError };

export function describeSentinelError(error: SentinelError): string {
  return `${error.line === null ? '' : `line ${error.line}: `}${error.message} [${error.kind}]`;
}

// ---------------------------------------------------------------------------------------------
// Block extraction

const SENTINEL_LINE = /^<<<.*>>>$/;
// The nonce part also takes an angle-bracket placeholder (`NONCE=<NONCE>>>`, `NONCE=<nonce>>>>`), so
// an echoed skeleton in that style is found and named as an example block, never reported missing.
const OPENER = /^<<<(TRACK|SPEC|PLAN|VERDICT):V1:(?:([^:<>]+):)?NONCE=(<?[^<>]*>?)>>>$/;
const CLOSER = /^<<<END_(TRACK|SPEC|PLAN|VERDICT):(?:([^:<>]+):)?NONCE=(<?[^<>]*>?)>>>$/;

interface Found {
  readonly line: number;
  readonly nonce: string;
  readonly criterion: string | null;
}

interface Body {
  readonly lines: readonly string[];
  /** Line number of the first body line. */
  readonly first: number;
  readonly opener: number;
  readonly closer: number;
}

function fail<T>(kind: SentinelErrorKind, line: number | null, message: string): SentinelResult<T> {
  return { ok: false, error: { kind, line, message } };
}

export function extractBlock(
  text: string,
  kind: BlockKind,
  nonce: string,
  criterion: string | null = null,
): SentinelResult<Body> {
  if (!NONCE_PATTERN.test(nonce)) throw new Error(`the cycle nonce ${nonce} is not ^[0-9A-F]{6}$`);
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  const openers: Found[] = [];
  lines.forEach((line, i) => {
    const m = OPENER.exec(line);
    if (m && m[1] === kind) openers.push({ line: i + 1, criterion: m[2] ?? null, nonce: m[3] ?? '' });
  });
  const wanted = `${kind}${criterion ? ` ${criterion}` : ''}`;
  const ours = openers.filter((o) => o.nonce === nonce);
  if (ours.length === 0) return noBlockOfOurs(openers, kind, nonce, criterion, wanted);
  const forCriterion = ours.filter((o) => o.criterion === criterion);
  if (forCriterion.length === 0) {
    const other = ours[0] as Found;
    return fail(
      'malformed',
      other.line,
      `the ${kind} block is for ${other.criterion === null ? 'no criterion' : `criterion ${other.criterion}`}, expected ${criterion ?? 'none'}`,
    );
  }
  if (forCriterion.length > 1) {
    return fail(
      'duplicate',
      (forCriterion[1] as Found).line,
      `${forCriterion.length} ${wanted} blocks carry nonce ${nonce} (lines ${forCriterion.map((o) => o.line).join(', ')}); exactly one is allowed`,
    );
  }
  return closeBlock(lines, forCriterion[0] as Found, kind);
}

function noBlockOfOurs(
  openers: readonly Found[],
  kind: BlockKind,
  nonce: string,
  criterion: string | null,
  wanted: string,
): SentinelResult<Body> {
  const wellFormed = openers.filter((o) => NONCE_PATTERN.test(o.nonce));
  if (wellFormed.length > 0) {
    const first = wellFormed[0] as Found;
    return fail(
      'wrong_nonce',
      first.line,
      `the ${kind} block carries nonce ${first.nonce}, but this cycle's nonce is ${nonce}`,
    );
  }
  if (openers.length > 0) {
    const first = openers[0] as Found;
    return fail(
      'malformed',
      first.line,
      `the ${kind} opener's nonce "${placeholder(first.nonce)}" is not 6 hex digits (an example block?); write <<<${kind}:V1:${criterion ? `${criterion}:` : ''}NONCE=${nonce}>>>`,
    );
  }
  return fail(
    'missing',
    null,
    `no ${wanted} block: expected a line <<<${kind}:V1:${criterion ? `${criterion}:` : ''}NONCE=${nonce}>>>`,
  );
}

/** `<NONCE>>>` ends the placeholder with the line's own `>`: show it whole. */
function placeholder(nonce: string): string {
  return nonce.startsWith('<') && !nonce.endsWith('>') ? `${nonce}>` : nonce;
}

function closeBlock(lines: readonly string[], opener: Found, kind: BlockKind): SentinelResult<Body> {
  const crit = opener.criterion ? `${opener.criterion}:` : '';
  const expected = `<<<END_${kind}:${crit}NONCE=${opener.nonce}>>>`;
  for (let i = opener.line; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line === expected) {
      return {
        ok: true,
        value: {
          lines: lines.slice(opener.line, i),
          first: opener.line + 1,
          opener: opener.line,
          closer: i + 1,
        },
      };
    }
    if (CLOSER.test(line))
      return fail(
        'malformed',
        i + 1,
        `closer ${line} does not match the opener at line ${opener.line} (expected ${expected})`,
      );
    if (SENTINEL_LINE.test(line) || OPENER.test(line))
      return fail(
        'malformed',
        i + 1,
        `a new block starts before the block opened at line ${opener.line} is closed`,
      );
  }
  return fail('malformed', opener.line, `the block opened at line ${opener.line} has no closer ${expected}`);
}

// ---------------------------------------------------------------------------------------------
// Fields

export interface Value {
  readonly text: string;
  readonly quoted: boolean;
}

export type Entry =
  | { type: 'scalar'; key: string; value: Value; line: number }
  | { type: 'multiline'; key: string; text: string; line: number }
  | { type: 'list'; key: string; items: Array<{ attrs: Map<string, Value>; line: number }>; line: number };

const KEY = '[A-Z][A-Z0-9_]*';
const SCALAR = new RegExp(`^(${KEY})=(.+)$`);
const MULTI = new RegExp(`^(${KEY})=$`);
const LIST = new RegExp(`^(${KEY}):$`);

export function parseFields(body: Body): SentinelResult<Entry[]> {
  const entries: Entry[] = [];
  let open: Entry | null = null;
  for (let i = 0; i < body.lines.length; i++) {
    const step = readLine(body, i, open);
    if (!step.ok) return step;
    if (step.value.started) entries.push(step.value.started);
    open = step.value.open;
  }
  for (const entry of entries) {
    if (entry.type === 'multiline' && entry.text.trim() === '')
      return fail('malformed', entry.line, `the multi-line field ${entry.key} has no indented lines`);
  }
  return { ok: true, value: entries };
}

type LineStep = SentinelResult<{ open: Entry | null; started: Entry | null }>;

/** One body line: it continues the open field, ends it, or starts a new one. */
function readLine(body: Body, i: number, open: Entry | null): LineStep {
  const raw = body.lines[i] as string;
  const line = body.first + i;
  const keep: LineStep = { ok: true, value: { open, started: null } };
  if (raw.trim() === '' && !(open?.type === 'multiline' && raw.startsWith('  '))) {
    const next = body.lines.slice(i + 1).find((l) => l.trim() !== '');
    if (open?.type === 'multiline' && next?.startsWith('  '))
      return fail(
        'malformed',
        line,
        `blank line inside the multi-line field ${open.key}; indent every line of it by two spaces`,
      );
    if (open?.type === 'list' && next?.startsWith('- '))
      return fail('malformed', line, `blank line inside the list ${open.key}`);
    return { ok: true, value: { open: null, started: null } };
  }
  if (raw.startsWith('  ')) {
    if (open?.type !== 'multiline')
      return fail(
        'malformed',
        line,
        'an indented line belongs only to a multi-line field (KEY= on the line before)',
      );
    open.text = open.text === '' ? raw.slice(2) : `${open.text}\n${raw.slice(2)}`;
    return keep;
  }
  if (raw.startsWith('- ')) {
    if (open?.type !== 'list') return fail('malformed', line, 'a list item belongs only under a KEY: line');
    const attrs = parseAttrs(raw.slice(2), line);
    if (!attrs.ok) return attrs;
    open.items.push({ attrs: attrs.value, line });
    return keep;
  }
  return startField(raw, line);
}

function startField(raw: string, line: number): LineStep {
  const multi = MULTI.exec(raw);
  if (multi) {
    const entry: Entry = { type: 'multiline', key: multi[1] as string, text: '', line };
    return { ok: true, value: { open: entry, started: entry } };
  }
  const list = LIST.exec(raw);
  if (list) {
    const entry: Entry = { type: 'list', key: list[1] as string, items: [], line };
    return { ok: true, value: { open: entry, started: entry } };
  }
  const scalar = SCALAR.exec(raw);
  if (!scalar)
    return fail(
      'malformed',
      line,
      `not a field: "${raw.slice(0, 80)}" (expected KEY=value, KEY=, KEY: or a list item)`,
    );
  const value = parseValue(scalar[2] as string, line, scalar[1] as string);
  if (!value.ok) return value;
  return {
    ok: true,
    value: { open: null, started: { type: 'scalar', key: scalar[1] as string, value: value.value, line } },
  };
}

/** A whole value: one quoted string (escapes \" \\ \n \t) or one bare token, nothing after it. */
function parseValue(text: string, line: number, key: string): SentinelResult<Value> {
  if (text.startsWith('"')) {
    const quoted = readQuoted(text, 0, line);
    if (!quoted.ok) return quoted;
    if (quoted.value.end !== text.length)
      return fail(
        'malformed',
        line,
        `${key}: text after the closing quote: "${text.slice(quoted.value.end, quoted.value.end + 40)}"`,
      );
    return { ok: true, value: { text: quoted.value.text, quoted: true } };
  }
  if (/[\s"]/.test(text))
    return fail(
      'malformed',
      line,
      `${key}: a bare value has no spaces or quotes; quote it ("...") if it is text`,
    );
  return { ok: true, value: { text, quoted: false } };
}

function readQuoted(
  text: string,
  start: number,
  line: number,
): SentinelResult<{ text: string; end: number }> {
  let out = '';
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"') return { ok: true, value: { text: out, end: i + 1 } };
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = text[i + 1];
    const decoded = next === undefined ? undefined : ESCAPES[next];
    if (decoded === undefined)
      return fail(
        'malformed',
        line,
        `unknown escape \\${next ?? ''} in a quoted value (allowed: \\" \\\\ \\n \\t)`,
      );
    out += decoded;
    i++;
  }
  return fail('malformed', line, 'a quoted value is not closed on its line');
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', n: '\n', t: '\t' };

function parseAttrs(text: string, line: number): SentinelResult<Map<string, Value>> {
  const attrs = new Map<string, Value>();
  let i = 0;
  while (i < text.length) {
    const m = /^([a-z_]+)=/.exec(text.slice(i));
    if (!m) return fail('malformed', line, `expected attr=value at "${text.slice(i, i + 40)}"`);
    const name = m[1] as string;
    if (attrs.has(name)) return fail('malformed', line, `attribute ${name} given twice`);
    i += m[0].length;
    if (text[i] === '"') {
      const quoted = readQuoted(text, i, line);
      if (!quoted.ok) return quoted;
      attrs.set(name, { text: quoted.value.text, quoted: true });
      i = quoted.value.end;
    } else {
      const end = text.indexOf(' ', i);
      const bare = text.slice(i, end === -1 ? text.length : end);
      if (bare === '' || bare.includes('"'))
        return fail('malformed', line, `attribute ${name}: a bare value has no spaces or quotes`);
      attrs.set(name, { text: bare, quoted: false });
      i += bare.length;
    }
    if (i < text.length) {
      if (text[i] !== ' ' || text[i + 1] === undefined || text[i + 1] === ' ')
        return fail('malformed', line, `attributes are separated by exactly one space (at column ${i + 3})`);
      i++;
    }
  }
  return { ok: true, value: attrs };
}
