// A set of ids kept as 64-bit hashes in typed arrays (open addressing, linear probing): twelve
// bytes a slot, nothing for the garbage collector to trace, so a window of millions of sessions
// costs tens of megabytes. Each id carries a tag (the page it was first seen on). Two ids
// sharing a 64-bit hash are taken as one; at a million ids the odds are about 1 in 10^7.

const INITIAL_SLOTS = 1024;

/** Two independent 32-bit FNV-1a hashes of the UTF-16 code units (different offset bases). */
function hashes(id: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  return [a >>> 0, b >>> 0];
}

export class IdHashSet {
  #hi = new Uint32Array(INITIAL_SLOTS);
  #lo = new Uint32Array(INITIAL_SLOTS);
  /** 0 marks an empty slot; tags are 1 or more. */
  #tag = new Uint32Array(INITIAL_SLOTS);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /**
   * Adds `id` with `tag` (≥ 1) unless present; returns the tag it was first added with (`tag`
   * itself when it is new).
   */
  add(id: string, tag: number): number {
    if (tag < 1) throw new RangeError("IdHashSet tags start at 1");
    if ((this.#size + 1) * 2 > this.#tag.length) this.#grow();
    const [h, l] = hashes(id);
    return this.#insert(h, l, tag);
  }

  /** The tag `id` was added with, or 0 when absent. */
  tagOf(id: string): number {
    const [h, l] = hashes(id);
    const mask = this.#tag.length - 1;
    for (let i = (l ^ Math.imul(h, 0x9e3779b1)) & mask; ; i = (i + 1) & mask) {
      const t = this.#tag[i] as number;
      if (t === 0) return 0;
      if (this.#hi[i] === h && this.#lo[i] === l) return t;
    }
  }

  clear(): void {
    this.#hi = new Uint32Array(INITIAL_SLOTS);
    this.#lo = new Uint32Array(INITIAL_SLOTS);
    this.#tag = new Uint32Array(INITIAL_SLOTS);
    this.#size = 0;
  }

  #insert(h: number, l: number, tag: number): number {
    const mask = this.#tag.length - 1;
    for (let i = (l ^ Math.imul(h, 0x9e3779b1)) & mask; ; i = (i + 1) & mask) {
      const t = this.#tag[i] as number;
      if (t === 0) {
        this.#hi[i] = h;
        this.#lo[i] = l;
        this.#tag[i] = tag;
        this.#size++;
        return tag;
      }
      if (this.#hi[i] === h && this.#lo[i] === l) return t;
    }
  }

  #grow(): void {
    const hi = this.#hi;
    const lo = this.#lo;
    const tag = this.#tag;
    const slots = tag.length * 2;
    this.#hi = new Uint32Array(slots);
    this.#lo = new Uint32Array(slots);
    this.#tag = new Uint32Array(slots);
    this.#size = 0;
    for (let i = 0; i < tag.length; i++) {
      const t = tag[i] as number;
      if (t !== 0) this.#insert(hi[i] as number, lo[i] as number, t);
    }
  }
}
