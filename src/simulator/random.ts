// Seeded randomness for the simulator. Every generated value must be a pure function of
// (seed, stable key) so that two simulators with the same seed serve identical data no matter
// when they started or in which order they were asked: hence no Math.random, no Date.now, and
// a fresh generator per key (hour, request number, …) instead of one long shared stream.

const TWO_POW_32 = 4294967296;

function mixWord(h: number, k: number): number {
  // murmur3 body step: cheap, and good enough avalanche for deriving sub-seeds.
  let x = Math.imul(k, 0xcc9e2d51);
  x = (x << 15) | (x >>> 17);
  x = Math.imul(x, 0x1b873593);
  let y = h ^ x;
  y = (y << 13) | (y >>> 19);
  return (Math.imul(y, 5) + 0xe6546b64) | 0;
}

function finalize(h: number): number {
  let x = h;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/**
 * 32-bit hash of the parts, used to derive sub-seeds: `hash32(seed, "hour", 481234)`.
 * A type tag per part keeps `hash32(1)` and `hash32("1")` apart, and a length keeps
 * `("ab","c")` apart from `("a","bc")`.
 */
export function hash32(...parts: (string | number)[]): number {
  let h = 0x9747b28c;
  for (const part of parts) {
    if (typeof part === "number" && Number.isSafeInteger(part)) {
      // Epoch milliseconds exceed 32 bits: mix the high word too.
      h = mixWord(h, 1);
      h = mixWord(h, part | 0);
      h = mixWord(h, Math.floor(part / TWO_POW_32) | 0);
    } else {
      const s = String(part);
      h = mixWord(h, 2);
      h = mixWord(h, s.length);
      for (let i = 0; i < s.length; i++) h = mixWord(h, s.charCodeAt(i));
    }
  }
  return finalize(h);
}

/** hash32 mapped to [0, 1). */
export function hashUnit(...parts: (string | number)[]): number {
  return hash32(...parts) / TWO_POW_32;
}

/**
 * sfc32: fast, passes PractRand far beyond what the simulator draws, 128-bit state so short
 * streams from neighbouring seeds do not correlate (mulberry32 streams of adjacent seeds do
 * start alike).
 */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    // splitmix32 spreads one 32-bit seed over the four state words.
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
      z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
      return (z ^ (z >>> 15)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / TWO_POW_32;
  }

  /** Uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Uniform integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Uniform real in [min, max). */
  uniform(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return pick(this, items);
  }

  /** One pick with the given relative weights (same length as items). */
  weighted<T>(items: readonly T[], weights: readonly number[]): T {
    return weightedPick(this, items, weights);
  }

  /** k distinct items (k clamped to the length), in the list's order. */
  sample<T>(items: readonly T[], k: number): T[] {
    const idx = items.map((_, i) => i);
    for (let i = idx.length - 1; i > 0; i--) {
      const j = this.below(i + 1);
      const a = itemAt(idx, i);
      idx[i] = itemAt(idx, j);
      idx[j] = a;
    }
    return idx
      .slice(0, Math.min(k, items.length))
      .sort((a, b) => a - b)
      .map((i) => itemAt(items, i));
  }

  /** Standard normal scaled: Box–Muller, one value per call to keep streams simple. */
  normal(mean = 0, sd = 1): number {
    const u = 1 - this.next(); // (0, 1]: log(0) would be -Infinity
    const v = this.next();
    return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Log-normal given its median (e^mu) and the sigma of the underlying normal. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  poisson(lambda: number): number {
    if (!(lambda > 0)) return 0;
    if (lambda < 30) {
      // Knuth: exact, and cheap for small rates.
      const limit = Math.exp(-lambda);
      let k = 0;
      let p = this.next();
      while (p > limit) {
        k++;
        p *= this.next();
      }
      return k;
    }
    // Normal approximation: for lambda >= 30 the error is far below what anyone can see in
    // traffic volumes, and Knuth's loop would cost O(lambda).
    return Math.max(0, Math.round(this.normal(lambda, Math.sqrt(lambda))));
  }
}

export function createRng(seed: number): Rng {
  return new Rng(seed);
}

function pick<T>(rng: Rng, items: readonly T[]): T {
  if (items.length === 0) throw new RangeError("pick from an empty list");
  return items[Math.floor(rng.next() * items.length)] as T;
}

/** One-off weighted pick; for repeated picks from the same list use WeightedTable. */
function weightedPick<T>(
  rng: Rng,
  items: readonly T[],
  weights: readonly number[],
): T {
  return new WeightedTable(items, weights).pick(rng);
}

/** Weighted choice in O(log n) per pick over a precomputed cumulative table. */
export class WeightedTable<T> {
  private readonly cumulative: Float64Array;
  readonly total: number;

  constructor(
    readonly items: readonly T[],
    weights: readonly number[],
  ) {
    if (items.length === 0 || items.length !== weights.length) {
      throw new RangeError(
        "WeightedTable needs as many weights as items (≥ 1)",
      );
    }
    this.cumulative = new Float64Array(items.length);
    let sum = 0;
    for (let i = 0; i < items.length; i++) {
      const w = weights[i] ?? 0;
      if (!(w >= 0)) throw new RangeError(`negative or NaN weight at ${i}`);
      sum += w;
      this.cumulative[i] = sum;
    }
    if (!(sum > 0)) throw new RangeError("WeightedTable weights sum to 0");
    this.total = sum;
  }

  pick(rng: Rng): T {
    const target = rng.next() * this.total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.cumulative[mid] ?? 0) > target) hi = mid;
      else lo = mid + 1;
    }
    return this.items[lo] as T;
  }
}

const ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

/** Hex digits derived from the parts; stable ids and fingerprints. */
export function hexOf(length: number, ...parts: (string | number)[]): string {
  let out = "";
  for (let i = 0; out.length < length; i++)
    out += hash32(i, ...parts)
      .toString(16)
      .padStart(8, "0");
  return out.slice(0, length);
}

/** Index access for arrays whose bounds the caller has already guaranteed. */
export function itemAt<T>(items: readonly T[], i: number): T {
  const v = items[i];
  if (v === undefined)
    throw new RangeError(`index ${i} out of range 0..${items.length - 1}`);
  return v;
}

/** Deterministic id body of `length` base32 characters derived from the parts. */
export function hashId(length: number, ...parts: (string | number)[]): string {
  let out = "";
  let round = 0;
  while (out.length < length) {
    let h = hash32(...parts, round++);
    // 6 characters of 5 bits from each 32-bit hash (30 bits used).
    for (let i = 0; i < 6 && out.length < length; i++) {
      out += ID_ALPHABET[h & 31] ?? "0";
      h >>>= 5;
    }
  }
  return out;
}
