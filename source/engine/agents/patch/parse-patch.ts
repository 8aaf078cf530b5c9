/**
 * Every path a unified diff names, from every header git honours, so nothing reaches `git apply`
 * unchecked (seed 001 PR4, which only looked at `---`/`+++`): `diff --git`, `---`/`+++`,
 * `rename from/to`, `rename old/new`, `copy from/to`. Also reports what makes a patch unsafe
 * regardless of paths: binary content in any of git's forms, non-regular file modes, a NUL byte.
 */

export interface PatchFile {
  /** Paths named for this file section, after stripping the a/ b/ prefix. */
  readonly paths: string[];
  /** The patch creates a file (--- /dev/null, new file mode, copy to, rename to). */
  readonly creates: string[];
}

type Section = { paths: string[]; creates: string[] };

export interface ParsedPatch {
  readonly files: PatchFile[];
  /** Reasons the patch is refused as a whole (binary, symlink mode, malformed header). */
  readonly problems: string[];
}

/** Header lines git reads between `diff --git` and the first hunk; anything else there is refused. */
const HEADER =
  /^(--- |\+\+\+ |rename from |rename to |rename old |rename new |copy from |copy to |new file mode |deleted file mode |old mode |new mode |index |similarity index |dissimilarity index )/;
/** Every form git accepts for binary content, including the short `Files X and Y differ`. */
const BINARY = /^(GIT binary patch|Binary files |Files )/;

/**
 * A small state machine over the lines: outside any file section (git ignores such lines, like a
 * commit message), in a section's header, or in a hunk. Stricter than git on purpose: an unknown
 * line in a header, or a header line after a hunk, refuses the patch.
 */
export function parsePatch(text: string): ParsedPatch {
  const parser: Parser = { files: [], current: null, state: 'outside', problems: [] };
  if (text.includes('\0')) parser.problems.push('the patch contains a NUL byte');
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  for (const [i, line] of lines.entries()) step(parser, line, lines[i + 1] ?? '', `line ${i + 1}`);
  if (parser.files.length === 0) parser.problems.push('the patch names no file');
  return { files: parser.files, problems: parser.problems };
}

interface Parser {
  readonly files: Section[];
  current: Section | null;
  state: 'outside' | 'header' | 'hunk';
  readonly problems: string[];
}

function startSection(parser: Parser): Section {
  parser.current = { paths: [], creates: [] };
  parser.files.push(parser.current);
  parser.state = 'header';
  return parser.current;
}

function step(parser: Parser, line: string, next: string, where: string): void {
  if (BINARY.test(line)) return void parser.problems.push(`${where}: binary patches are refused`);
  if (line.startsWith('diff --git ')) {
    const pair = parseGitPair(line.slice('diff --git '.length));
    if (!pair) parser.problems.push(`${where}: unreadable diff --git header`);
    else startSection(parser).paths.push(...pair);
    return;
  }
  if (line.startsWith('@@')) {
    if (parser.current === null) parser.problems.push(`${where}: hunk outside a file section`);
    parser.state = 'hunk';
    return;
  }
  // A traditional section starts with '---' directly followed by '+++' (inside a hunk, a lone
  // '--- ' line is a removed line that started with '-- ').
  if (line.startsWith('--- ') && next.startsWith('+++ ') && parser.state !== 'header') startSection(parser);
  if (parser.state === 'hunk') {
    if (HEADER.test(line) && !/^[ +-]/.test(line)) parser.problems.push(`${where}: header line after a hunk`);
    return;
  }
  if (parser.state === 'outside' || line.trim() === '') return;
  if (!HEADER.test(line) || parser.current === null) {
    parser.problems.push(`${where}: unknown header line ${JSON.stringify(line.slice(0, 60))}`);
    return;
  }
  readHeader(line, where, parser.current, parser.problems);
}

function readHeader(line: string, where: string, file: Section, problems: string[]): void {
  const problem = readFileLine(line, file) ?? readRenameOrCopy(line, file) ?? readMode(line, file) ?? null;
  if (problem) problems.push(`${where}: ${problem}`);
}

/**
 * Each reader returns undefined for lines that are not its kind, null when the line is fine, or a
 * problem. `--- a/x` / `+++ b/x`: tab and timestamp allowed after the name; /dev/null is a new file.
 */
function readFileLine(line: string, file: Section): string | null | undefined {
  if (!line.startsWith('--- ') && !line.startsWith('+++ ')) return undefined;
  const raw = line.slice(4).replace(/\t.*$/, '');
  if (raw === '/dev/null') {
    if (line.startsWith('--- ')) file.creates.push('(pending)');
    return null;
  }
  const path = unquote(raw);
  if (path === null) return 'unreadable path';
  const stripped = stripPrefix(path);
  file.paths.push(stripped);
  const pending = file.creates.indexOf('(pending)');
  if (line.startsWith('+++ ') && pending >= 0) file.creates.splice(pending, 1, stripped);
  return null;
}

/** `rename from/to`, `copy from/to`: full paths, no a/ b/ prefix. Returns undefined for other lines. */
function readRenameOrCopy(line: string, file: Section): string | null | undefined {
  const prefix = ['rename from ', 'rename to ', 'rename old ', 'rename new ', 'copy from ', 'copy to '].find(
    (p) => line.startsWith(p),
  );
  if (!prefix) return undefined;
  const path = unquote(line.slice(prefix.length));
  if (path === null) return 'unreadable path';
  file.paths.push(path);
  if (prefix.endsWith('to ') || prefix === 'rename new ') file.creates.push(path);
  return null;
}

/**
 * Mode lines: only regular files. Git reads the mode as octal and keeps its file-type bits, so
 * `0120000` or `120644` is a symlink too: the type is checked, not the spelling.
 */
function readMode(line: string, file: Section): string | null | undefined {
  if (!/^(new file mode|deleted file mode|old mode|new mode) /.test(line)) return undefined;
  const mode = /^(new file mode|deleted file mode|old mode|new mode) ([0-7]+)\s*$/.exec(line);
  if (!mode) return `unreadable mode line ${JSON.stringify(line.slice(0, 60))}`;
  if (mode[1] === 'new file mode') file.creates.push('(pending)');
  const type = Number.parseInt(mode[2] as string, 8) & 0o170000;
  if (type !== 0o100000)
    return `only regular files may be patched (mode ${mode[2]} is a symlink, submodule or other type)`;
  return null;
}

/** `a/x b/y`, either side possibly C-quoted. Unquoted names with spaces: split at " b/". */
function parseGitPair(rest: string): string[] | null {
  if (rest.startsWith('"')) {
    const end = closingQuote(rest, 0);
    if (end < 0) return null;
    const first = unquote(rest.slice(0, end + 1));
    const second = unquote(rest.slice(end + 2));
    return first !== null && second !== null ? [stripPrefix(first), stripPrefix(second)] : null;
  }
  const split = rest.lastIndexOf(' b/') >= 0 ? rest.lastIndexOf(' b/') : rest.lastIndexOf(' "');
  if (split < 0) return null;
  const second = unquote(rest.slice(split + 1));
  return second === null ? null : [stripPrefix(rest.slice(0, split)), stripPrefix(second)];
}

function closingQuote(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\u0007',
  b: '\b',
  f: '\f',
  v: '\v',
  '"': '"',
  '\\': '\\',
};

/** Git's C-style quoting: "a/na\\303\\257ve\\tname". Returns null on a broken quote. */
export function unquote(text: string): string | null {
  if (!text.startsWith('"')) return text;
  if (!text.endsWith('"') || text.length < 2) return null;
  const bytes: number[] = [];
  const body = text.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const next = body[++i];
    if (next === undefined) return null;
    if (/[0-7]/.test(next)) {
      const octal = body.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(octal)) return null;
      bytes.push(Number.parseInt(octal, 8));
      i += 2;
    } else if (next in ESCAPES) {
      bytes.push(...Buffer.from(ESCAPES[next] as string, 'utf8'));
    } else {
      return null;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** git apply's default -p1: drop the first path component (a/, b/). */
function stripPrefix(path: string): string {
  const slash = path.indexOf('/');
  return slash >= 0 ? path.slice(slash + 1) : path;
}
