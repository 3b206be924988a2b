// Serialized rows gathered straight into one byte buffer, the body of the next insert.

/** A block's bytes and where each of its lines is. */
export interface TakenLines {
  body: Buffer;
  /** Byte offset of each line in `body`; lines are separated by one "\n". */
  starts: readonly number[];
  /**
   * For a line pushed with `pushArrayWith`, the byte offset of its last element; -1 for a
   * line pushed whole.
   */
  tails: readonly number[];
}

/** The bytes of lines [from, to) of a taken block, without the separator after the last. */
export function linesOf(block: TakenLines, from: number, to: number): Buffer {
  const start = block.starts[from] ?? block.body.length;
  const end =
    to < block.starts.length
      ? (block.starts[to] as number) - 1
      : block.body.length;
  return block.body.subarray(start, end);
}

/**
 * Each line is encoded as it comes, so its string dies young: no array of 50000 live lines for
 * the garbage collector to copy between generations, no join and no second encoding of the
 * block (that churn was a third of the sessions sync's JavaScript time). A taken block's storage
 * can be handed back (`reuse`) once its insert is done: a fresh buffer of tens of megabytes costs
 * a page fault per 4 KB on its first write, and its allocation tells the garbage collector to
 * run a full collection.
 */
export class LineBlock {
  #buf: Buffer;
  #len = 0;
  #starts: number[] = [];
  #tails: number[] = [];
  /** Storage of taken blocks handed back, at most `#keep` of them. */
  readonly #spare: Buffer[] = [];
  /** The storage of each body given out, by body. */
  readonly #lent = new WeakMap<Buffer, Buffer>();
  readonly #keep: number;

  /**
   * `keep`: how many taken blocks' storage is kept for reuse (the blocks that can be in flight
   * at once).
   */
  constructor(capacity = 1 << 20, keep = 0) {
    this.#buf = Buffer.allocUnsafe(capacity);
    this.#keep = keep;
  }

  get bytes(): number {
    return this.#len;
  }

  get rows(): number {
    return this.#starts.length;
  }

  push(line: string): void {
    // UTF-8 takes at most three bytes per UTF-16 code unit.
    const need = this.#len + 1 + 3 * line.length;
    if (need > this.#buf.length) this.#grow(need);
    this.#startLine();
    this.#tails.push(-1);
    this.#len += this.#buf.write(line, this.#len);
  }

  /**
   * Pushes a JSON array line: `opening`, the bytes of the array up to and including the comma
   * before its last element (one line's opening serves many), then `last`, as text or as its
   * UTF-8 bytes (copied as they are), then the closing bracket.
   */
  pushArrayWith(opening: Uint8Array, last: string | Uint8Array): void {
    const lastBytes = typeof last === "string" ? 3 * last.length : last.length;
    const need = this.#len + 2 + opening.length + lastBytes;
    if (need > this.#buf.length) this.#grow(need);
    const buf = this.#buf;
    this.#startLine();
    buf.set(opening, this.#len);
    this.#len += opening.length;
    this.#tails.push(this.#len);
    if (typeof last === "string") this.#len += buf.write(last, this.#len);
    else {
      buf.set(last, this.#len);
      this.#len += last.length;
    }
    buf[this.#len++] = 0x5d;
  }

  #startLine(): void {
    if (this.#starts.length > 0) this.#buf[this.#len++] = 0x0a;
    this.#starts.push(this.#len);
  }

  #grow(need: number): void {
    const next = Buffer.allocUnsafe(Math.max(need, 2 * this.#buf.length));
    this.#buf.copy(next, 0, 0, this.#len);
    this.#buf = next;
  }

  /** The block's lines; the block starts over empty, sized for one like it. */
  take(): TakenLines {
    const taken = {
      body: this.#buf.subarray(0, this.#len),
      starts: this.#starts,
      tails: this.#tails,
    };
    this.#lent.set(taken.body, this.#buf);
    const size = this.#buf.length;
    let next = this.#spare.pop();
    while (next !== undefined && next.length < size) next = this.#spare.pop();
    this.#buf = next ?? Buffer.allocUnsafe(size);
    this.#len = 0;
    this.#starts = [];
    this.#tails = [];
    return taken;
  }

  /**
   * Hands back the storage of a block this LineBlock gave out, for a later block to be written
   * into: the caller guarantees that nothing reads `taken` (nor a part of its body) any more.
   */
  reuse(taken: TakenLines): void {
    const storage = this.#lent.get(taken.body);
    this.#lent.delete(taken.body);
    if (storage !== undefined && this.#spare.length < this.#keep)
      this.#spare.push(storage);
  }
}
