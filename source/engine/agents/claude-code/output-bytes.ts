/**
 * Seed 002 §6.1's output-size cap for Claude Code's stream-json. Everything the process writes
 * counts (stderr, lines that are not JSON, lines too long to parse, what the agent says), except
 * the `user` events: they only echo the results of tools the agent called, often whole files it
 * read, which the seed's plain `--print` output never showed. Counting them would stop an agent
 * that merely reads a codebase (a QA review) long before anything runs away.
 *
 * An overlong line (more than `maxLineBytes`, cut by the line splitter and never parsed) is
 * counted here as it streams, so a line that never ends still reaches the cap.
 */
export class StreamJsonOutputBytes {
  /** Bytes of the current, unfinished stdout line. */
  private open = 0;
  /** Of them, already reported (an overlong line counts as it streams). */
  private reported = 0;

  constructor(
    private readonly maxLineBytes: number,
    private readonly report: (bytes: number) => void,
  ) {}

  stderr(data: Buffer): void {
    this.report(data.length);
  }

  /** Every raw stdout chunk: only overlong lines are counted here. */
  stdoutChunk(data: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = data.indexOf(10, start);
      const end = newline === -1 ? data.length : newline + 1;
      this.open += end - start;
      if (this.open > this.maxLineBytes) {
        this.report(this.open - this.reported);
        this.reported = this.open;
      }
      if (newline === -1) return;
      this.open = 0;
      this.reported = 0;
      start = end;
    }
  }

  /** Every stdout line the splitter hands over: whole lines are counted here, echoes left out. */
  stdoutLine(line: string, truncated: boolean): void {
    if (truncated) return; // counted by stdoutChunk as it streamed
    const bytes = Buffer.byteLength(line) + 1;
    // Cut lines never reach here, so a line of up to maxLineBytes is counted once, by one side.
    if (bytes > this.maxLineBytes) return;
    if (TOOL_RESULT_ECHO.test(line.slice(0, 200))) return;
    this.report(bytes);
  }
}

/**
 * `{"type":"user","message":{"role":"user","content":[{"tool_use_id"…`: looked for near the start,
 * whatever the key order, since the line is not parsed here (it may be megabytes).
 */
const TOOL_RESULT_ECHO = /^\s*\{.*"type"\s*:\s*"user"/;
