/**
 * Seed 003, "Acceptance criteria prefix convention": "DET criteria MUST map to one of verify.sh's
 * 6 checks" (tests pass, lint passes, diff within 3x ESTIMATED_DIFF, no blocked paths, no secrets,
 * clean git tree); "File existence and content checks are `LLM:`, not `DET:`". A DET: criterion
 * that names none of them would be auto-passed by stage 1 without anything checking it, so the
 * plan is refused instead.
 */
export const DETERMINISTIC_CHECKS = [
  { id: 'tests', name: 'tests pass', words: /\btests?\b|\bspecs?\b|\btest suite\b/i },
  { id: 'lint', name: 'lint passes', words: /\blint(s|er|ing)?\b|\blint errors?\b/i },
  {
    id: 'diff',
    name: 'diff within budget',
    words: /\bdiff\b|\bestimated_diff\b|\blines? (changed|added)\b/i,
  },
  {
    id: 'paths',
    name: 'no blocked paths',
    words: /\bblocked paths?\b|\bforbidden paths?\b|\bpath validation\b/i,
  },
  { id: 'secrets', name: 'no secrets', words: /\bsecrets?\b|\bcredentials?\b/i },
  {
    id: 'clean',
    name: 'clean tree',
    words: /\bclean (git )?(tree|worktree|working tree)\b|\buncommitted\b/i,
  },
] as const;

export type DeterministicCheck = (typeof DETERMINISTIC_CHECKS)[number]['id'];

/** Words that make a criterion about a file's contents or existence: an LLM: judgement. */
const ABOUT_CONTENT = /\b(file|exists?|exports?|contains?|defines?|function|class|method|README)\b/i;

/** Which of the six checks a `DET:` criterion maps to, or null when it maps to none. */
export function deterministicCheckOf(text: string): DeterministicCheck | null {
  const body = text.replace(/^DET:\s*/, '');
  const found = DETERMINISTIC_CHECKS.find((check) => check.words.test(body));
  if (!found) return null;
  // "File src/a.test.ts exists" names a test but checks a file: the seed says that is LLM:.
  if (
    found.id === 'tests' &&
    ABOUT_CONTENT.test(body) &&
    !/\b(pass|passes|passing|green|exit 0)\b/i.test(body)
  )
    return null;
  return found.id;
}
