// A private seeded PRNG so the log generator stays independent of the rest of the simulator:
// every value is a pure function of (seed, stable ids), never of call order across requests.

/** FNV-1a over the parts (with a separator, so ("ab","c") ≠ ("a","bc")), then murmur3's fmix32. */
export function hash32(...parts: readonly (string | number)[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    const s = typeof part === "number" ? part.toString(36) : part;
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    h ^= 0x1f;
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hex digits derived from the parts; stable ids and fingerprints. */
export function hexOf(
  length: number,
  ...parts: readonly (string | number)[]
): string {
  let out = "";
  for (let i = 0; out.length < length; i++)
    out += hash32(i, ...parts)
      .toString(16)
      .padStart(8, "0");
  return out.slice(0, length);
}

export class Rng {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** mulberry32: uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return itemAt(items, this.int(items.length));
  }

  /** Picks with the given relative weights (same length as items). */
  weighted<T>(items: readonly T[], weights: readonly number[]): T {
    let total = 0;
    for (const w of weights) total += w;
    let r = this.next() * total;
    for (let i = 0; i < items.length; i++) {
      r -= weights[i] ?? 0;
      if (r < 0) return itemAt(items, i);
    }
    return itemAt(items, items.length - 1);
  }

  /** k distinct items (k clamped to the length), in the catalog's order. */
  sample<T>(items: readonly T[], k: number): T[] {
    const idx = items.map((_, i) => i);
    for (let i = idx.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const a = itemAt(idx, i);
      idx[i] = itemAt(idx, j);
      idx[j] = a;
    }
    return idx
      .slice(0, Math.min(k, items.length))
      .sort((a, b) => a - b)
      .map((i) => itemAt(items, i));
  }
}

/** Weighted choice over a fixed list: cumulative weights and a binary search. */
export class WeightedList<T> {
  readonly items: readonly T[];
  readonly #cumulative: Float64Array;

  constructor(items: readonly T[], weights: readonly number[]) {
    if (items.length === 0) throw new RangeError("WeightedList needs items");
    this.items = items;
    this.#cumulative = new Float64Array(items.length);
    let total = 0;
    items.forEach((_, i) => {
      total += weights[i] ?? 0;
      this.#cumulative[i] = total;
    });
  }

  /** The same choice as Rng.weighted with the same weights, in O(log n). */
  pick(rng: Rng): T {
    const c = this.#cumulative;
    const r = rng.next() * (c[c.length - 1] ?? 0);
    let lo = 0;
    let hi = c.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (r < (c[mid] ?? 0)) hi = mid;
      else lo = mid + 1;
    }
    return itemAt(this.items, lo);
  }
}

/** Index access for arrays whose bounds the caller has already guaranteed. */
export function itemAt<T>(items: readonly T[], i: number): T {
  const v = items[i];
  if (v === undefined)
    throw new RangeError(`index ${i} out of range 0..${items.length - 1}`);
  return v;
}
