// The nearest of some names to one that is none of them, by edit distance: what a "did you
// mean …" names, and the names a refusal offers, nearest first.
import { UsageError } from "./errors.js";

/** Levenshtein distance (insertions, deletions, substitutions), ignoring case. */
function distance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  let row = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const next = [i];
    for (let j = 1; j <= t.length; j++)
      next[j] = Math.min(
        (row[j] ?? 0) + 1,
        (next[j - 1] ?? 0) + 1,
        (row[j - 1] ?? 0) + (s[i - 1] === t[j - 1] ? 0 : 1),
      );
    row = next;
  }
  return row[t.length] ?? 0;
}

/** A name to compare, what it names (`key`, the name itself when not given) and a cost beyond the distance. */
interface Candidate {
  name: string;
  key?: string;
  cost?: number;
}

/**
 * The key of the candidate whose name is nearest to `name` (distance plus cost; the first of
 * equals); undefined when there is no candidate.
 */
export function nearest(
  name: string,
  candidates: Iterable<string | Candidate>,
): string | undefined {
  let best: string | undefined;
  let bestScore = Infinity;
  for (const c of candidates) {
    const {
      name: other,
      key = other,
      cost = 0,
    } = typeof c === "string" ? { name: c } : c;
    const score = distance(name, other) + cost;
    if (score < bestScore) {
      best = key;
      bestScore = score;
    }
  }
  return best;
}

/** `names` ordered by their distance to `name`, nearest first (equals keep their order). */
export function byNearness(name: string, names: Iterable<string>): string[] {
  return [...names]
    .map((n, i) => ({ n, i, d: distance(name, n) }))
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .map((x) => x.n);
}

/** How many names a refusal offers at most (the nearest); the rest are counted. */
const OFFERED = 8;

/**
 * The refusal of a name that is none of `names` (exit 2): `no <kind> named "<name>"`, with the
 * names nearest first (at most OFFERED, the rest counted) and, after them, `more` (what else to
 * do, what was left as it was). `kind` is the noun, singular and plural.
 */
export function noSuchName(
  kind: readonly [one: string, many: string],
  name: string,
  names: Iterable<string>,
  more?: string,
): UsageError {
  const ranked = byNearness(name, new Set(names));
  const shown = ranked.slice(0, OFFERED);
  const rest = ranked.length - shown.length;
  const offered =
    ranked.length === 0
      ? `there are no ${kind[1]}`
      : `the ${kind[1]}, nearest first: ${shown.join(", ")}${rest > 0 ? ` (and ${rest} more)` : ""}`;
  return new UsageError(`no ${kind[0]} named ${JSON.stringify(name)}`, {
    hint: more === undefined ? offered : `${offered}; ${more}`,
  });
}
