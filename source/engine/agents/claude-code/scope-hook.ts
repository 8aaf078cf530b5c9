import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import micromatch from 'micromatch';
import { scratchPrefix } from '../../sandbox/leftover-scratch.js';

/**
 * Scope enforced BEFORE the write, inside Claude Code itself (issue 14: "out-of-scope
 * Edit/Write/NotebookEdit are refused by Claude Code itself ... so the model sees the refusal and
 * can adapt; the judge still checks after, as the second fence"). Permission deny rules cannot say
 * "anything but these globs", so the runner installs a PreToolUse hook for the run through
 * `--settings`: it resolves the tool's target (symlinks included) and refuses, with exit 2 and a
 * reason Claude Code hands back to the model, any path outside the fence.
 *
 * The globs come from the task (a model wrote them): they are never put in the hook's shell
 * command. The runner compiles them to regular expressions with the judge's own matcher
 * (micromatch, `dot: true`) into a JSON file; the command holds only runner-made paths.
 */

/** Where a write is allowed: inside the root, matching a glob of EVERY allowed set, and no forbidden glob. */
export interface WriteFence {
  readonly allowed: readonly (readonly string[])[];
  readonly forbidden: readonly string[];
  /**
   * What each allowed set is, in the refusal's words ("the config's scope.default_allowed_globs"):
   * a refusal names the set the path is outside of, never another one that allows it (the
   * newcomer's pass, defect 10: "package.json is outside ... (src/**, package.json)").
   */
  readonly names?: readonly string[];
}

/** The allowed set's name when the fence gives none. */
const ALLOWED_SET = "this task's allowed paths";

/** How every refusal of the hook begins (the tick finds them in the agent's output by it). */
export const REFUSED_BY_HOOK = 'Relais refused this write before it happened';

/**
 * The hook's refusal in one line the builder's run said (run-claude.ts passes tool errors and the
 * agent's text, never a successful tool result, so a file the agent read cannot fake one): the
 * reason after the hook's words, or null.
 */
export function hookRefusalIn(line: string): string | null {
  const at = line.indexOf(REFUSED_BY_HOOK);
  if (at < 0) return null;
  const why = line.slice(at + REFUSED_BY_HOOK.length).replace(/^[:\s]+/, '');
  return why.trim().slice(0, 300) || null;
}

/** The path a refusal names ("package.json is outside ..."), or the refusal itself. */
export function refusedPathOf(refusal: string): string {
  return /^(.+?) is (?:outside|a forbidden path)/.exec(refusal)?.[1] ?? refusal.slice(0, 120);
}

/** The tools that write files, and where each names its target. */
export const WRITE_TOOLS = ['Edit', 'Write', 'MultiEdit', 'NotebookEdit'] as const;

export interface InstalledHook {
  /** The JSON given to `claude --settings`. */
  readonly settings: string;
  readonly dispose: () => void;
}

export function installScopeHook(fence: WriteFence, root: string, node = process.execPath): InstalledHook {
  // Named for this runner: one killed before it could remove the folder leaves it to the next
  // runner's sweep (sandbox/leftover-scratch.ts, started with the first sandboxed process).
  const dir = mkdtempSync(join(tmpdir(), scratchPrefix('scope-hook')));
  const re = (glob: string) => {
    const made = micromatch.makeRe(glob, { dot: true });
    return { source: made.source, flags: made.flags };
  };
  const rules = {
    root: realpathSync(root),
    // Each set with its globs and name, shown to the model with a refusal: where it may write.
    allowed: fence.allowed.map((set, index) => ({
      res: set.map(re),
      shown: set,
      name: fence.names?.[index] ?? ALLOWED_SET,
    })),
    forbidden: fence.forbidden.map(re),
  };
  writeFileSync(join(dir, 'fence.json'), JSON.stringify(rules));
  writeFileSync(join(dir, 'scope-hook.mjs'), HOOK_SCRIPT);
  const command = [node, join(dir, 'scope-hook.mjs'), join(dir, 'fence.json')].map(shellQuote).join(' ');
  const settings = JSON.stringify({
    hooks: {
      PreToolUse: [{ matcher: WRITE_TOOLS.join('|'), hooks: [{ type: 'command', command }] }],
    },
  });
  return { settings, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Single-quoted for sh (the hook command is run by a shell); only runner-made paths reach it. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The hook itself: self-contained (it runs with the CLI's node, from a temp folder), reads the
 * PreToolUse event on stdin. Exit 0 lets the tool run; exit 2 refuses it and Claude Code gives
 * stderr to the model. Anything it cannot read is refused (fail closed).
 */
export const HOOK_SCRIPT = `import { readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

const refuse = (why) => {
  process.stderr.write('Relais refused this write before it happened: ' + why + '\\n');
  process.exit(2);
};
let rules;
let event;
try {
  rules = JSON.parse(readFileSync(process.argv[2], 'utf8'));
  event = JSON.parse(readFileSync(0, 'utf8'));
} catch (error) {
  refuse('the scope hook could not read its input (' + error.message + ')');
}
const input = event.tool_input ?? {};
const target = input.file_path ?? input.notebook_path;
if (typeof target !== 'string' || target === '') refuse('the tool call names no file path');
const absolute = resolve(typeof event.cwd === 'string' ? event.cwd : rules.root, target);
// Symlinks resolved on the nearest existing ancestor (the file itself when it exists).
const missing = [];
let existing = absolute;
let real = null;
while (real === null) {
  try {
    real = realpathSync(existing);
  } catch {
    const parent = dirname(existing);
    if (parent === existing) refuse('no part of ' + target + ' exists');
    missing.unshift(basename(existing));
    existing = parent;
  }
}
const full = join(real, ...missing);
const rel = relative(rules.root, full);
if (rel === '' || rel === '..' || rel.startsWith('..' + sep) || isAbsolute(rel))
  refuse(target + ' is outside the repository (' + rules.root + ').');
const path = rel.split(sep).join('/');
const matches = (re) => new RegExp(re.source, re.flags).test(path);
if (rules.forbidden.some(matches))
  refuse(path + ' is a forbidden path for this task (git internals, relais/ and the scope\\'s forbidden globs are never written by the builder).');
const outside = rules.allowed.find((set) => !set.res.some(matches));
if (outside)
  refuse(path + ' is outside ' + outside.name + ' (' + outside.shown.join(', ') + '). Stay inside them, or say in your result that the task needs a wider scope.');
process.exit(0);
`;
