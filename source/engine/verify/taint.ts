import type { RelaisConfig } from '../protocol/config.js';
import { resolvesUnderRoot } from '../workspace/safe-path.js';

/**
 * Parameter taint checks (seed 000 §11, A5 row 2). Values reach a program as one argv word, never
 * through a shell, and still must be plain tokens: bounded length, no whitespace, no "..", no shell
 * metacharacters, no leading "-" (a value must not turn into an option of the command), and a
 * `path` must resolve under the repository root once symlinks are followed.
 */

export type ParamKind = 'string_token' | 'path';

export async function taintReason(
  value: unknown,
  kind: ParamKind,
  maxLen: number,
  rules: RelaisConfig['verification'],
  root: string,
): Promise<string | null> {
  if (value === null || value === undefined) return 'no value given';
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
    return 'not a string, number or boolean';
  const text = String(value);
  if (text.length === 0) return 'empty';
  if (text.length > maxLen) return `longer than ${maxLen} characters`;
  if (rules.reject_whitespace_in_params && /\s/.test(text)) return 'contains whitespace';
  if (rules.reject_dotdot && text.includes('..')) return 'contains ".."';
  if (new RegExp(rules.reject_metachars_regex).test(text)) return 'contains a shell metacharacter';
  if (text.includes('\0')) return 'contains a NUL byte';
  if (text.startsWith('-')) return 'starts with "-" (would be read as an option)';
  if (kind === 'path' && !(await resolvesUnderRoot(root, text)))
    return 'path resolves outside the repository';
  return null;
}
