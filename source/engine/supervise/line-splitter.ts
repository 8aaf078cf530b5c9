/**
 * Splits a byte stream into lines with a hard cap per line: a 50 MB line costs at most `maxLineBytes`
 * of memory, and the caller learns it was cut. Works on bytes so a cap never splits a UTF-8
 * sequence into garbage before decoding (the decoder replaces a cut sequence at the very end).
 */
export class LineSplitter {
  private chunks: Buffer[] = [];
  private size = 0;
  private truncated = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: string, truncated: boolean) => void,
  ) {}

  push(data: Buffer): void {
    let start = 0;
    while (start < data.length) {
      const newline = data.indexOf(10, start);
      const end = newline === -1 ? data.length : newline;
      if (newline !== -1 && this.size === 0 && !this.truncated && end - start <= this.maxLineBytes) {
        // Common case: a whole line inside one chunk, decoded without copying.
        this.onLine(stripCr(data.toString('utf8', start, end)), false);
        start = newline + 1;
        continue;
      }
      this.append(data.subarray(start, end));
      if (newline === -1) return;
      this.emit();
      start = newline + 1;
    }
  }

  /** Emits a last line that had no trailing newline. */
  end(): void {
    if (this.size > 0 || this.truncated) this.emit();
  }

  private append(part: Buffer): void {
    const room = this.maxLineBytes - this.size;
    if (part.length > room) {
      this.truncated = true;
      if (room > 0) this.keep(part.subarray(0, room));
      return;
    }
    this.keep(part);
  }

  private keep(part: Buffer): void {
    if (part.length === 0) return;
    // Copy: the stream may reuse its buffer after we return.
    this.chunks.push(Buffer.from(part));
    this.size += part.length;
  }

  private emit(): void {
    const line = stripCr(Buffer.concat(this.chunks, this.size).toString('utf8'));
    const truncated = this.truncated;
    this.chunks = [];
    this.size = 0;
    this.truncated = false;
    this.onLine(line, truncated);
  }
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** Keeps the last `capacity` bytes of a stream, for error messages and logs. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  total = 0;

  constructor(private readonly capacity: number) {}

  push(data: Buffer): void {
    this.total += data.length;
    if (this.capacity === 0) return;
    const part = data.length > this.capacity ? data.subarray(data.length - this.capacity) : data;
    this.chunks.push(Buffer.from(part));
    this.size += part.length;
    while (this.size > this.capacity && this.chunks.length > 0) {
      const first = this.chunks[0] as Buffer;
      const excess = this.size - this.capacity;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
      }
    }
  }

  text(): string {
    return Buffer.concat(this.chunks, this.size).toString('utf8');
  }
}
