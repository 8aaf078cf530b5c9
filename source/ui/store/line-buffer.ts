/**
 * A capped ring of lines, addressed by sequence number (the n-th line ever pushed has seq n). The
 * oldest lines are dropped first and counted, so memory stays bounded whatever an agent prints,
 * and a scroll position (a seq) stays meaningful while new lines arrive.
 */
export class LineBuffer<T> {
  private readonly slots: Array<T | undefined>;
  private pushed = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new Error(`capacity must be >= 1, got ${capacity}`);
    this.slots = new Array<T | undefined>(capacity);
  }

  push(line: T): void {
    this.slots[this.pushed % this.capacity] = line;
    this.pushed++;
  }

  /** Lines pushed since the start, kept or not. */
  get total(): number {
    return this.pushed;
  }

  /** Lines kept now (at most `capacity`). */
  get size(): number {
    return Math.min(this.pushed, this.capacity);
  }

  /** Lines dropped to respect the cap. */
  get dropped(): number {
    return this.pushed - this.size;
  }

  /** Seq of the oldest kept line (equals `total` when empty). */
  get firstSeq(): number {
    return this.dropped;
  }

  /** Seq of the newest line, or -1 when empty. */
  get lastSeq(): number {
    return this.pushed - 1;
  }

  at(seq: number): T | undefined {
    if (seq < this.firstSeq || seq > this.lastSeq) return undefined;
    return this.slots[seq % this.capacity];
  }

  /** The kept lines with seq in [from, to], oldest first. */
  range(from: number, to: number): T[] {
    const out: T[] = [];
    const start = Math.max(from, this.firstSeq);
    const end = Math.min(to, this.lastSeq);
    for (let seq = start; seq <= end; seq++) out.push(this.slots[seq % this.capacity] as T);
    return out;
  }
}
