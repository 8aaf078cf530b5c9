import micromatch from 'micromatch';

/**
 * Issue 19: two tasks may run in parallel lanes only when no path could match a glob of both
 * scopes. Deciding that exactly for arbitrary globs is hard, so this errs one way only: it may say
 * "overlap" for globs that cannot meet (the tasks then serialise, which costs time), never "apart"
 * for globs that can (which would let two lanes edit the same file). Braces are expanded first,
 * then the globs are walked segment by segment: literal segments must match the other side's
 * segment (micromatch), a `**` can swallow any number of segments, and two wildcard segments are
 * taken as meeting.
 */
export function scopesOverlap(a: readonly string[], b: readonly string[]): boolean {
  const left = a.flatMap(expand);
  const right = b.flatMap(expand);
  return left.some((x) => right.some((y) => globsOverlap(x, y)));
}

export function globsOverlap(a: string, b: string): boolean {
  return segmentsMeet(segments(a), segments(b));
}

function expand(glob: string): string[] {
  const expanded = micromatch.braces(glob.trim(), { expand: true });
  return expanded.length > 0 ? expanded : [glob.trim()];
}

function segments(glob: string): string[] {
  return glob
    .replace(/^\.\//, '')
    .split('/')
    .filter((s) => s.length > 0);
}

function segmentsMeet(a: readonly string[], b: readonly string[]): boolean {
  const [x, ...restA] = a;
  const [y, ...restB] = b;
  if (x === undefined && y === undefined) return true;
  // A trailing `**` matches the folder itself and everything below it.
  if (x === undefined) return b.every((s) => s === '**');
  if (y === undefined) return a.every((s) => s === '**');
  if (x === '**') return segmentsMeet(restA, b) || segmentsMeet(a, restB);
  if (y === '**') return segmentsMeet(a, restB) || segmentsMeet(restA, b);
  return segmentMeets(x, y) && segmentsMeet(restA, restB);
}

function segmentMeets(x: string, y: string): boolean {
  const xGlob = micromatch.scan(x).isGlob;
  const yGlob = micromatch.scan(y).isGlob;
  if (!xGlob && !yGlob) return x === y;
  if (!xGlob) return micromatch.isMatch(x, y, { dot: true });
  if (!yGlob) return micromatch.isMatch(y, x, { dot: true });
  // Two wildcard segments (`*.ts` and `a*`): assume they can name the same file.
  return true;
}
