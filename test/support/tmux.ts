import { spawnSync } from 'node:child_process';
import { type FSWatcher, readFileSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real terminal for the full-screen app: a private tmux server (its own socket), one window of a
 * fixed size. Everything the program writes to the terminal is also piped to a log file
 * (pipe-pane); each write wakes a waiter, which then reads the screen with capture-pane. No timer
 * decides anything but the deadline of a wait that failed.
 */
export class TmuxSession {
  private readonly socket: string;
  private readonly log: string;
  private watcher: FSWatcher | null = null;
  private readonly wakers = new Set<() => void>();

  constructor(
    name: string,
    readonly columns = 120,
    readonly rows = 40,
  ) {
    this.socket = `relais-test-${name}-${process.pid}`;
    this.log = join(tmpdir(), `${this.socket}.log`);
  }

  static available(): boolean {
    return spawnSync('tmux', ['-V']).status === 0;
  }

  start(command: string, env: Record<string, string | undefined>): void {
    const exports = Object.entries(env).map(([k, v]) =>
      v === undefined ? `unset ${k}` : `export ${k}=${shellQuote(v)}`,
    );
    const script = [...exports, command].join('; ');
    writeFileSync(this.log, '');
    this.watcher = watch(this.log, () => {
      for (const wake of [...this.wakers]) wake();
    });
    // The pane starts paused on `read`, so piping is in place before the program writes anything.
    this.tmux(
      'new-session',
      '-d',
      '-s',
      'main',
      '-x',
      String(this.columns),
      '-y',
      String(this.rows),
      'bash',
      '-c',
      `read -r _; ${script}`,
    );
    this.tmux('pipe-pane', '-o', '-t', 'main', `cat >> ${shellQuote(this.log)}`);
    this.tmux('send-keys', '-t', 'main', 'Enter');
  }

  screen(): string {
    return this.tmux('capture-pane', '-p', '-t', 'main');
  }

  /** Whether the app holds the alternate screen right now. */
  alternateScreen(): boolean {
    return this.tmux('display-message', '-p', '-t', 'main', '#{alternate_on}').trim() === '1';
  }

  /** Whether the terminal shows its cursor right now (the app hides it while it draws). */
  cursorVisible(): boolean {
    return this.tmux('display-message', '-p', '-t', 'main', '#{cursor_flag}').trim() === '1';
  }

  /** Everything the programs in the pane wrote to the terminal so far, escape codes included. */
  written(): string {
    return readFileSync(this.log, 'utf8');
  }

  /**
   * The pid of the program the pane's shell runs (its one child), for a test that signals it as a
   * `kill` from another shell would.
   */
  programPid(): number {
    const shell = this.tmux('display-message', '-p', '-t', 'main', '#{pane_pid}').trim();
    const children = readFileSync(`/proc/${shell}/task/${shell}/children`, 'utf8').trim().split(/\s+/);
    const pid = Number(children[0]);
    if (children.length !== 1 || !Number.isInteger(pid) || pid <= 0)
      throw new Error(`the pane's shell ${shell} runs ${children.length} programs, not one`);
    return pid;
  }

  keys(...keys: string[]): void {
    this.tmux('send-keys', '-t', 'main', ...keys);
  }

  /** Resolves with the screen once `predicate` holds, checked after every write to the terminal. */
  waitFor(predicate: (screen: string) => boolean, what: string, timeoutMs = 60_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = () => {
        let screen: string;
        try {
          screen = this.screen();
        } catch {
          return false; // between tmux ending and the deadline: nothing more will show
        }
        if (!predicate(screen)) return false;
        done();
        resolve(screen);
        return true;
      };
      const timer = setTimeout(() => {
        done();
        let last = '(the terminal is gone)';
        try {
          last = this.screen();
        } catch {
          // tmux already ended: the message says so
        }
        reject(new Error(`the terminal never showed ${what}; last screen:\n${last}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
      };
      const wake = () => void check();
      this.wakers.add(wake);
      check();
    });
  }

  kill(): void {
    this.watcher?.close();
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
  }

  private tmux(...args: string[]): string {
    const r = spawnSync('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tmux ${args[0]}: ${r.stderr}`);
    return r.stdout;
  }
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
