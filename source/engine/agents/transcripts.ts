import { randomBytes } from 'node:crypto';
import { appendFile, lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { stripControls } from '../events.js';
import { TRANSCRIPTS_FOLDER } from '../workspace/paths.js';
import { readUntrustedFile } from '../workspace/safe-read.js';
import { type AgentOutcome, type AgentRunner, prestartThrough } from './agent-run.js';

/**
 * Agent transcripts (issue 16 item 11): what an agent said in one run, as readable lines, kept in
 * `relais/history/agents/<start>-<role>.log` so a human can read a past run in full (the app's `l`,
 * or any pager). The bus carries at most 400 characters a line and 50 lines a message (it feeds a
 * live panel); a transcript keeps each line up to 4,000 characters, with every line of a message.
 *
 * Capped: 1 MB a run (past that the lines are counted, not kept) and the newest 60 runs (older
 * ones are deleted when a run starts). Writing is best effort: a transcript that cannot be written
 * never changes what the run does or how it is judged.
 */

export const TRANSCRIPT_MAX_BYTES = 1_000_000;
export const TRANSCRIPTS_KEPT = 60;
const LINE_MAX_CHARS = 4000;
/** `20260101T100000Z-a1b2c3-builder.log`, `…-builder-2.log` for a second attempt. */
const NAME = /^(\d{8}T\d{6}Z)-[0-9a-f]{6}-([a-z][a-z0-9_-]*?)(?:-(\d+))?\.log$/;

/** Transcripts being written now (this process): the app marks them as running. */
const open = new Set<string>();

export function transcriptsDir(historyDir: string): string {
  return join(historyDir, TRANSCRIPTS_FOLDER);
}

/** `runner`, each of whose runs leaves a transcript in `dir`. */
export function transcribedRunner(
  runner: AgentRunner,
  dir: string,
  now: () => Date = () => new Date(),
): AgentRunner {
  return {
    prestart: prestartThrough(() => runner),
    async run(request, bus) {
      const transcript = await Transcript.start(dir, request, now());
      try {
        const outcome = await runner.run(
          {
            ...request,
            onOutputLine: (line) => {
              request.onOutputLine?.(line);
              transcript?.line(line);
            },
          },
          bus,
        );
        transcript?.line(endLine(outcome));
        return outcome;
      } finally {
        await transcript?.close();
      }
    },
  };
}

function endLine(outcome: AgentOutcome): string {
  const seconds = (outcome.process.durationMs / 1000).toFixed(1);
  const cost = `$${outcome.costUsd.toFixed(4)}`;
  return outcome.failure === null
    ? `── finished in ${seconds}s · ${cost}`
    : `── failed after ${seconds}s · ${cost}: ${outcome.failure}`;
}

/** One run's transcript file: lines are queued and appended one write at a time, never awaited by the agent. */
class Transcript {
  private pending: string[] = [];
  private writing: Promise<void> | null = null;
  private bytes = 0;
  private notKept = 0;
  private failed = false;

  private constructor(private readonly path: string) {}

  static async start(
    dir: string,
    request: { readonly role: string; readonly attempt: number; readonly model: string },
    at: Date,
  ): Promise<Transcript | null> {
    try {
      await mkdir(dir, { recursive: true });
      await prune(dir, TRANSCRIPTS_KEPT - 1);
      const stamp = at
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d+Z$/, 'Z');
      const attempt = request.attempt > 1 ? `-${request.attempt}` : '';
      const path = join(dir, `${stamp}-${randomBytes(3).toString('hex')}-${request.role}${attempt}.log`);
      const transcript = new Transcript(path);
      open.add(path);
      transcript.line(
        `── ${request.role}${attempt ? ` · attempt ${request.attempt}` : ''} · model ${request.model} · started ${at.toISOString()}`,
      );
      return transcript;
    } catch {
      return null;
    }
  }

  line(raw: string): void {
    if (this.failed) return;
    const clean = stripControls(raw.replace(/\t/g, '  ')).slice(0, LINE_MAX_CHARS);
    const size = Buffer.byteLength(clean) + 1;
    if (this.bytes + size > TRANSCRIPT_MAX_BYTES) {
      this.notKept++;
      return;
    }
    this.bytes += size;
    this.pending.push(`${clean}\n`);
    this.writing ??= this.drain();
  }

  async close(): Promise<void> {
    if (this.notKept > 0) {
      this.pending.push(`… ${this.notKept} more line(s) not kept (a transcript keeps 1 MB a run)\n`);
      this.writing ??= this.drain();
    }
    await this.writing;
    open.delete(this.path);
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0 && !this.failed) {
      const chunk = this.pending.join('');
      this.pending = [];
      await appendFile(this.path, chunk, { mode: 0o600 }).catch(() => {
        this.failed = true;
      });
    }
    this.writing = null;
  }
}

/** Deletes the oldest transcripts beyond `keep` (a running one is never deleted). */
async function prune(dir: string, keep: number): Promise<void> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => NAME.test(n)).sort();
  const extra = names.length - keep;
  for (const name of names.slice(0, Math.max(0, extra))) {
    const path = join(dir, name);
    if (!open.has(path)) await rm(path, { force: true }).catch(() => undefined);
  }
}

export interface TranscriptEntry {
  /** The file's name: what `readTranscript` takes. */
  readonly id: string;
  readonly role: string;
  readonly attempt: number;
  /** When the run started, ISO 8601. */
  readonly startedAt: string;
  readonly bytes: number;
  /** Being written by this process now. */
  readonly running: boolean;
  /** Where it is, from the repository root (for a pager). */
  readonly path: string;
}

/** Every kept transcript in `dir`, newest first. */
export async function listTranscripts(dir: string, root: string): Promise<TranscriptEntry[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).sort().reverse();
  const entries: TranscriptEntry[] = [];
  for (const name of names) {
    const match = NAME.exec(name);
    if (!match) continue;
    const path = join(dir, name);
    const stat = await lstat(path).catch(() => null);
    if (!stat?.isFile()) continue;
    const stamp = match[1] ?? '';
    entries.push({
      id: name,
      role: match[2] ?? 'agent',
      attempt: Number(match[3] ?? 1),
      startedAt: `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}Z`,
      bytes: stat.size,
      running: open.has(path),
      path: relative(root, path),
    });
  }
  return entries;
}

/** One transcript's text; an id that is not a transcript's file name is refused. */
export async function readTranscript(dir: string, id: string): Promise<string> {
  if (!NAME.test(id)) throw new Error(`not a transcript: ${id}`);
  // A little over the cap: the closing "not kept" line comes after it.
  const read = await readUntrustedFile(join(dir, id), TRANSCRIPT_MAX_BYTES + 4096);
  if (!read.ok) throw new Error(`${id} ${read.reason}`);
  return read.text;
}
