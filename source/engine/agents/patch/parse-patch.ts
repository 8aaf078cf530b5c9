/**
 * Every path a unified diff names, from every header git honours, so nothing reaches `git apply`
 * unchecked (seed 001 PR4, which only looked at `---`/`+++`): `diff --git`, `---`/`+++`,
 * `rename from/to`, `copy from/to`. Also reports what makes a patch unsafe regardless of paths:
 * binary hunks, symlink or submodule modes, a NUL byte.
 */

export interface PatchFile {
  /** Paths named for this file section, after stripping the a/ b/ prefix. */
  readonly paths: string[];
  /** The patch creates a file (--- /dev/null, new file mode, copy to, rename to). */
  readonly creates: string[];
}

export interface ParsedPatch {
  readonly files: PatchFile[];
  /** Reasons the patch is refused as a whole (binary, symlink mode, malformed header). */
  readonly problems: string[];
}

const HEADER =
  /^(diff --git |--- |\+\+\+ |rename from |rename to |copy from |copy to |new file mode |deleted file mode |old mode |new mode |index |similarity index |dissimilarity index )/;

export function parsePatch(text: string): ParsedPatch {
  const problems: string[] = [];
  if (text.includes('\0')) problems.push('the patch contains a NUL byte');
  const files: Array<{ paths: string[]; creates: string[] }> = [];
  let current: { paths: string[]; creates: string[] } | null = null;
  let inHunk = false;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').replace(/\r$/, '');
    if (line.startsWith('diff --git ')) {
      current = { paths: [], creates: [] };
      files.push(current);
      inHunk = false;
      const pair = parseGitPair(line.slice('diff --git '.length));
      if (!pair) problems.push(`line ${i + 1}: unreadable diff --git header`);
      else current.paths.push(...pair);
      continue;
    }
    if (line.startsWith('@@')) {
      inHunk = true;
      continue;
    }
    // Inside a hunk, '--- ' can be a removed line that starts with '-- ': only a '---' line that is
    // followed by '+++' starts a new (non-git) file section.
    if (inHunk && !(line.startsWith('--- ') && (lines[i + 1] ?? '').startsWith('+++ '))) {
      if (line.startsWith('GIT binary patch') || line.startsWith('Binary files '))
        problems.push(`line ${i + 1}: binary patches are refused`);
      continue;
    }
    if (line.startsWith('GIT binary patch') || line.startsWith('Binary files ')) {
      problems.push(`line ${i + 1}: binary patches are refused`);
      continue;
    }
    if (!HEADER.test(line)) continue;
    if (line.startsWith('--- ') && (current === null || inHunk)) {
      current = { paths: [], creates: [] };
      files.push(current);
      inHunk = false;
    }
    if (current === null) {
      problems.push(`line ${i + 1}: header outside a file section`);
      continue;
    }
    readHeader(line, i + 1, current, problems);
  }
  if (files.length === 0) problems.push('the patch names no file');
  return { files, problems };
}

type Section = { paths: string[]; creates: string[] };

function readHeader(line: string, lineNo: number, file: Section, problems: string[]): void {
  const problem =
    line.startsWith('--- ') || line.startsWith('+++ ')
      ? readFileLine(line, file)
      : (readRenameOrCopy(line, file) ?? readMode(line, file));
  if (problem) problems.push(`line ${lineNo}: ${problem}`);
}

/** `--- a/x` / `+++ b/x` (tab and timestamp allowed after the name); /dev/null means a new file. */
function readFileLine(line: string, file: Section): string | null {
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
  const prefix = ['rename from ', 'rename to ', 'copy from ', 'copy to '].find((p) => line.startsWith(p));
  if (!prefix) return undefined;
  const path = unquote(line.slice(prefix.length));
  if (path === null) return 'unreadable path';
  file.paths.push(path);
  if (prefix.endsWith('to ')) file.creates.push(path);
  return null;
}

/** Mode lines: a symlink (120000) or a submodule (160000) is never applied. */
function readMode(line: string, file: Section): string | null {
  const mode = /^(new file mode|deleted file mode|old mode|new mode) (\d+)/.exec(line);
  if (!mode) return null;
  if (mode[1] === 'new file mode') file.creates.push('(pending)');
  if (mode[2] === '120000') return 'symlinks are refused (mode 120000)';
  if (mode[2] === '160000') return 'submodules are refused (mode 160000)';
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
