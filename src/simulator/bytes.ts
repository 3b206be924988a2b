// A growable byte buffer for response bodies. Pages of 100000 sessions are written straight
// into bytes: building them as JS strings first (ropes of short pieces, then flattened and
// encoded) costs several times more, mostly in garbage collection.

const MIN_CAPACITY = 1 << 12;

export class ByteSink {
  private buf: Buffer;
  private off = 0;

  constructor(initialCapacity = 1 << 16) {
    this.buf = Buffer.allocUnsafe(Math.max(MIN_CAPACITY, initialCapacity));
  }

  get length(): number {
    return this.off;
  }

  private ensure(extra: number): void {
    const need = this.off + extra;
    if (need <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const next = Buffer.allocUnsafe(cap);
    this.buf.copy(next, 0, 0, this.off);
    this.buf = next;
  }

  byte(c: number): void {
    this.ensure(1);
    this.buf[this.off++] = c;
  }

  /** Text known to be ASCII (timestamps, generated ids, constants). */
  ascii(text: string): void {
    const n = text.length;
    this.ensure(n);
    if (n > 48) {
      this.off += this.buf.write(text, this.off, "latin1");
      return;
    }
    // A JS loop beats the native call for the short strings that dominate.
    const buf = this.buf;
    let off = this.off;
    for (let i = 0; i < n; i++) buf[off++] = text.charCodeAt(i);
    this.off = off;
  }

  utf8(text: string): void {
    this.ensure(text.length * 3);
    this.off += this.buf.write(text, this.off, "utf8");
  }

  bytes(chunk: Uint8Array): void {
    this.ensure(chunk.length);
    this.buf.set(chunk, this.off);
    this.off += chunk.length;
  }

  /** Non-negative integer in decimal. */
  uint(n: number): void {
    if (n < 10) {
      this.byte(48 + n);
      return;
    }
    this.ascii(String(n));
  }

  /** `n` as exactly `width` decimal digits (n < 10^width). */
  digits(n: number, width: number): void {
    this.ensure(width);
    let v = n;
    for (let i = this.off + width - 1; i >= this.off; i--) {
      this.buf[i] = 48 + (v % 10);
      v = Math.floor(v / 10);
    }
    this.off += width;
  }

  /** The written bytes (a view on the internal buffer: copy it if the sink is reused). */
  result(): Buffer {
    return this.buf.subarray(0, this.off);
  }

  toString(): string {
    return this.buf.toString("utf8", 0, this.off);
  }
}
