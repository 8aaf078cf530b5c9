// The git port spawns git itself: simple-git lacks stdin, -z bytes and pinned GIT_* (docs/performance.md).
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { pathOutside } from '../workspace/tool-path.js';

/**
 * The runner's own git. Every call is argv-only and hardened so nothing a builder planted in the
 * repository can run code here: hooks point at /dev/null, fsmonitor is off, no pager, no external
 * diff or textconv, pathspecs are literal (a file named `:(glob)*` is just a name). Config files
 * themselves are snapshotted and restored before the first post-build call (protected-files.ts).
 */

const HARDENING = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.pager=cat',
  '-c',
  'color.ui=never',
  '-c',
  'core.quotePath=false',
  '-c',
  'advice.detachedHead=false',
  // No background gc started by the runner: it would rewrite .git while a builder is judged.
  '-c',
  'gc.auto=0',
  '-c',
  'maintenance.auto=false',
  // Git's "unchanged" shortcut compares stat data; these keep every field in that comparison
  // (a write always moves ctime), whatever the user's config says. See touched-set.ts.
  '-c',
  'core.trustctime=true',
  '-c',
  'core.checkStat=default',
  '-c',
  'core.ignoreStat=false',
  '--no-pager',
  '--literal-pathspecs',
  // Replace refs would let a builder swap the content git shows for base_commit.
  '--no-replace-objects',
];

/** Variables that would point git at another repository, index or object store. */
const REDIRECTING_ENV = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_EXTERNAL_DIFF',
  'GIT_PAGER',
  'GIT_SSH_COMMAND',
  'GIT_ASKPASS',
  'GIT_EDITOR',
  'GIT_SEQUENCE_EDITOR',
];

export interface GitCall {
  readonly stdin?: string | Buffer;
  /** Extra variables (e.g. GIT_INDEX_FILE for the judge's temporary index). */
  readonly env?: Record<string, string>;
  /** Above this many stdout bytes the call fails instead of exhausting memory. */
  readonly maxStdoutBytes?: number;
}

export interface GitResult {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly result: GitResult,
  ) {
    super(`git ${args.join(' ')} failed (${result.code}): ${result.stderr.trim().slice(0, 500)}`);
  }
}

const DEFAULT_MAX_STDOUT = 512 * 1024 * 1024;

export class Git {
  private readonly baseEnv: NodeJS.ProcessEnv;

  constructor(
    readonly root: string,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const clean: NodeJS.ProcessEnv = { ...env };
    for (const name of REDIRECTING_ENV) delete clean[name];
    this.baseEnv = {
      ...clean,
      // git itself (and what it starts: ssh, git-lfs) is never found in a folder of the repository.
      ...(clean.PATH === undefined ? {} : { PATH: pathOutside(clean.PATH, root) }),
      GIT_TERMINAL_PROMPT: '0',
      GIT_NO_REPLACE_OBJECTS: '1',
      GIT_OPTIONAL_LOCKS: '0',
      LC_ALL: 'C',
      PAGER: 'cat',
    };
  }

  /**
   * After the repository is known, every later call names its git folders explicitly, so a
   * builder that rewrites `.git` (a `gitdir:` file) or `.git/commondir` cannot point the runner at
   * a repository of its own making.
   */
  pin(gitDir: string, commonDir: string): void {
    this.baseEnv.GIT_DIR = gitDir;
    this.baseEnv.GIT_COMMON_DIR = commonDir;
    this.baseEnv.GIT_WORK_TREE = this.root;
  }

  /** The shared git folder once `pin` named it (where refs live), else null. */
  get commonDir(): string | null {
    return this.baseEnv.GIT_COMMON_DIR ?? null;
  }

  /** The same git (pinned folders included) with more environment, e.g. without global config. */
  withEnv(extra: Record<string, string>): Git {
    const copy = new Git(this.root, {});
    Object.assign(copy.baseEnv, this.baseEnv, extra);
    return copy;
  }

  /**
   * Runs git; resolves with the exit code whatever it is (spawn failures become code 127).
   * Hand-rolled, not simple-git: simple-git takes no stdin, no byte cap, no binary stdout and no
   * stream to a file, drops GIT_* variables it was not told about, and costs 1.65x this spawn's
   * CPU per call (bench/git-port.mjs; docs/performance.md).
   */
  run(args: readonly string[], call: GitCall = {}): Promise<GitResult> {
    return new Promise((resolve) => {
      const child = spawn('git', [...HARDENING, ...args], {
        cwd: this.root,
        env: { ...this.baseEnv, ...call.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
      });
      const max = call.maxStdoutBytes ?? DEFAULT_MAX_STDOUT;
      const out: Buffer[] = [];
      let outSize = 0;
      let overflow = false;
      let err = '';
      child.stdout.on('data', (d: Buffer) => {
        if (overflow) return;
        outSize += d.length;
        if (outSize > max) {
          overflow = true;
          child.kill('SIGKILL');
          return;
        }
        out.push(d);
      });
      child.stderr.on('data', (d: Buffer) => {
        if (err.length < 64 * 1024) err += d.toString('utf8');
      });
      child.stdin.on('error', () => undefined);
      child.stdin.end(call.stdin);
      child.on('error', (e) => resolve({ code: 127, stdout: Buffer.alloc(0), stderr: e.message }));
      child.on('close', (code) => {
        if (overflow) resolve({ code: 1, stdout: Buffer.alloc(0), stderr: `output above ${max} bytes` });
        else resolve({ code: code ?? 1, stdout: Buffer.concat(out), stderr: err });
      });
    });
  }

  /**
   * The argv and environment of a call, hardening and pinned folders included, for a caller that
   * runs it through the process port instead (patch apply, inside the sandbox).
   */
  command(args: readonly string[]): { cmd: string; args: string[]; env: NodeJS.ProcessEnv } {
    return { cmd: 'git', args: [...HARDENING, ...args], env: { ...this.baseEnv } };
  }

  /** Runs git and throws GitError on a non-zero exit. */
  async ok(args: readonly string[], call: GitCall = {}): Promise<Buffer> {
    const result = await this.run(args, call);
    if (result.code !== 0) throw new GitError(args, result);
    return result.stdout;
  }

  async text(args: readonly string[], call: GitCall = {}): Promise<string> {
    return (await this.ok(args, call)).toString('utf8').trim();
  }

  /** Streams stdout into a file (diff patches can be large); returns bytes written. */
  toFile(
    args: readonly string[],
    path: string,
    call: GitCall = {},
  ): Promise<{ code: number; bytes: number; stderr: string }> {
    return new Promise((resolve) => {
      const file = createWriteStream(path);
      // A full disk (or a folder the builder replaced) must be a result, never an uncaught crash.
      let writeError: string | null = null;
      file.on('error', (e) => {
        writeError = e.message;
        child.kill('SIGKILL');
      });
      const child = spawn('git', [...HARDENING, ...args], {
        cwd: this.root,
        env: { ...this.baseEnv, ...call.env },
        stdio: ['ignore', 'pipe', 'pipe'],
        shell: false,
      });
      let bytes = 0;
      let err = '';
      child.stdout.on('data', (d: Buffer) => {
        bytes += d.length;
      });
      child.stdout.pipe(file);
      child.stderr.on('data', (d: Buffer) => {
        if (err.length < 64 * 1024) err += d.toString('utf8');
      });
      child.on('error', (e) => resolve({ code: 127, bytes: 0, stderr: e.message }));
      child.on('close', (code) => {
        if (writeError) resolve({ code: 1, bytes, stderr: writeError });
        else file.end(() => resolve({ code: code ?? 1, bytes, stderr: writeError ?? err }));
      });
    });
  }
}

/** Splits `-z` output into its NUL-terminated fields. */
export function splitNul(buffer: Buffer): string[] {
  const text = buffer.toString('utf8');
  const parts = text.split('\0');
  if (parts.at(-1) === '') parts.pop();
  return parts;
}
