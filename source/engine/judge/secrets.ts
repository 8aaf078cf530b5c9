/**
 * Credentials in text about to leave the machine (a comment posted on a public issue): the
 * well-known token shapes, private keys, passwords in URLs, and `.env`- or config-style
 * assignments of secret-named settings. A finding says what and on which line, never the value.
 * Tuned to refuse rather than leak: a false positive only holds a text back for a human to read.
 */

export interface SecretFinding {
  readonly kind: string;
  /** 1-based. */
  readonly line: number;
}

/** Well-known credential shapes: one list for every scan (planner comments, cycle diffs). */
export const SECRET_SHAPES: ReadonlyArray<readonly [string, RegExp]> = [
  ['private key', /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/],
  ['AWS access key id', /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/],
  ['GitHub token', /\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}/],
  ['API key (sk-…)', /\bsk-(?:ant-|proj-|live-)?[A-Za-z0-9_-]{20,}/],
  ['Stripe key', /\b[rs]k_live_[A-Za-z0-9]{16,}/],
  ['Slack token', /\bxox[abposr]-[A-Za-z0-9-]{10,}/],
  ['Google API key', /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/],
  ['JSON Web Token', /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/],
  ['password in a URL', /\b[a-z][a-z0-9+.-]*:\/\/[^\s:@/]+:(?![$<{*])[^\s@/]+@/i],
];

/** `NAME=value`, `name: value`, `"name": "value"`: a setting, then what it is set to. */
const ASSIGNMENT = /(?:^|[\s{,;(])["']?([A-Za-z_][A-Za-z0-9_.-]*)["']?\s*[:=]\s*["']?([^\s"'`<>{}()$,;]+)/g;
const SECRET_WORDS = new Set([
  'password',
  'passwd',
  'pwd',
  'secret',
  'token',
  'apikey',
  'credential',
  'credentials',
]);
const SECRET_PAIRS = new Set(['api key', 'access key', 'private key', 'secret key', 'auth token']);
const PLACEHOLDER = /your|here|placeholder|changeme|redacted|x{4,}|\*{3,}|\.{3}/i;

export function secretsIn(text: string): SecretFinding[] {
  const findings: SecretFinding[] = [];
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    const shape = SECRET_SHAPES.find(([, pattern]) => pattern.test(line));
    if (shape) findings.push({ kind: shape[0], line: index + 1 });
    else if (assignsSecret(line)) findings.push({ kind: 'assigned secret', line: index + 1 });
  }
  return findings;
}

function assignsSecret(line: string): boolean {
  for (const match of line.matchAll(ASSIGNMENT)) {
    const [, name = '', value = ''] = match;
    if (secretName(name) && secretValue(value)) return true;
  }
  return false;
}

function secretName(name: string): boolean {
  const parts = name.toLowerCase().split(/[_.-]+/);
  return parts.some((p, i) => SECRET_WORDS.has(p) || SECRET_PAIRS.has(`${p} ${parts[i + 1] ?? ''}`));
}

/** Long enough, and not plain words: a digit, mixed case or a symbol (prose rarely has them). */
function secretValue(value: string): boolean {
  if (value.length < 8 || PLACEHOLDER.test(value)) return false;
  return /\d/.test(value) || (/[a-z]/.test(value) && /[A-Z]/.test(value)) || /[-_/+=.!@#%^&]/.test(value);
}
