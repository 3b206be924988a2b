// Rows in ClickHouse's RowBinary format gathered straight into one byte buffer, the body of the
// next insert. A row is its leading columns, already encoded, and a last String column copied
// as it is (a record as received): the engine reads the string by its length prefix, without
// scanning it for its end.

/** A block's bytes and where each of its rows is. */
export interface TakenRows {
  body: Buffer;
  /** Byte offset of each row in `body`; a row ends where the next begins. */
  starts: readonly number[];
  /** Byte offset of each row's last String value, after its length prefix. */
  tails: readonly number[];
}

/** The bytes of rows [from, to) of a taken block. */
export function rowsOf(block: TakenRows, from: number, to: number): Buffer {
  const start = block.starts[from] ?? block.body.length;
  const end = block.starts[to] ?? block.body.length;
  return block.body.subarray(start, end);
}

/** The last String value of a row, as UTF-8 bytes. */
export function lastValueOf(block: TakenRows, index: number): Buffer {
  const end = block.starts[index + 1] ?? block.body.length;
  return block.body.subarray(block.tails[index] ?? end, end);
}

/** A taken block as two: its rows before `at`, and the others. */
export function splitRows(
  block: TakenRows,
  at: number,
): [TakenRows, TakenRows] {
  const cut = block.starts[at] ?? block.body.length;
  const rebase = (offsets: readonly number[]) => offsets.map((o) => o - cut);
  return [
    {
      body: block.body.subarray(0, cut),
      starts: block.starts.slice(0, at),
      tails: block.tails.slice(0, at),
    },
    {
      body: block.body.subarray(cut),
      starts: rebase(block.starts.slice(at)),
      tails: rebase(block.tails.slice(at)),
    },
  ];
}

/** Bytes of a RowBinary length prefix (LEB128) for at most 2^35 - 1 bytes. */
const MAX_PREFIX = 5;

/** Writes a RowBinary length prefix at `p`; returns the position after it. */
function writeLength(buf: Buffer, p: number, length: number): number {
  let n = length;
  while (n >= 0x80) {
    buf[p++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 0x80);
  }
  buf[p++] = n;
  return p;
}

/** The RowBinary bytes of a String value. */
export function rowBinaryString(v: string): Buffer {
  const bytes = Buffer.from(v, "utf8");
  const out = Buffer.allocUnsafe(MAX_PREFIX + bytes.length);
  const p = writeLength(out, 0, bytes.length);
  out.set(bytes, p);
  return out.subarray(0, p + bytes.length);
}

/**
 * Each row is written as it comes, so the record it copies dies young: no array of live rows
 * for the garbage collector to copy between generations, no join and no second encoding of the
 * block. A taken block's storage can be handed back (`reuse`) once its insert is done: a fresh
 * buffer of tens of megabytes costs a page fault per 4 KB on its first write, and its
 * allocation tells the garbage collector to run a full collection.
 */
export class RowBlock {
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

  /**
   * Appends a row: `leading`, the RowBinary bytes of every column but the last (one row's
   * serve many), then `last` as a RowBinary String: given as text it is encoded as UTF-8, given
   * as bytes it is copied as it is.
   */
  push(leading: Uint8Array, last: string | Uint8Array): void {
    const size =
      typeof last === "string" ? Buffer.byteLength(last, "utf8") : last.length;
    const need = this.#len + leading.length + MAX_PREFIX + size;
    if (need > this.#buf.length) this.#grow(need);
    const buf = this.#buf;
    this.#starts.push(this.#len);
    let p = this.#len;
    // A few bytes: copied one by one, cheaper than a call of set for each row.
    for (let i = 0; i < leading.length; i++) buf[p++] = leading[i] as number;
    p = writeLength(buf, p, size);
    this.#tails.push(p);
    if (typeof last === "string") p += buf.write(last, p, size, "utf8");
    else {
      buf.set(last, p);
      p += size;
    }
    this.#len = p;
  }

  #grow(need: number): void {
    const next = Buffer.allocUnsafe(Math.max(need, 2 * this.#buf.length));
    this.#buf.copy(next, 0, 0, this.#len);
    this.#buf = next;
  }

  /** The block's rows; the block starts over empty, sized for one like it. */
  take(): TakenRows {
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
   * Hands back the storage of a block this RowBlock gave out, for a later block to be written
   * into: the caller guarantees that nothing reads `taken` (nor a part of its body) any more.
   */
  reuse(taken: TakenRows): void {
    const storage = this.#lent.get(taken.body);
    this.#lent.delete(taken.body);
    if (storage !== undefined && this.#spare.length < this.#keep)
      this.#spare.push(storage);
  }
}
