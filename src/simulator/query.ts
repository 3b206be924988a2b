// The small part of the (likely Quickwit-style) session `query` the simulator honours:
// `field:value` terms joined by AND or spaces. Anything richer (OR, NOT, parentheses, ranges,
// wildcards) makes the whole query ignored rather than half-applied: a half-applied filter
// would return a subset that matches neither the real service nor "no filter", and a test
// could not tell. Unknown fields are ignored term by term: the service adds fields over time.

import type { SimSession, SimUser } from "./model.js";
import {
  statusAt,
  throughNativeUser,
  type SessionGenerator,
} from "./sessions.js";

export type SessionPredicate = (s: SimSession, nowMs: number) => boolean;

type Getter = (
  s: SimSession,
  gen: SessionGenerator,
  nowMs: number,
) => string | undefined;

/** The service's own user of a session; none when it was made through a native user. */
function brandUser(s: SimSession, g: SessionGenerator): SimUser | undefined {
  return throughNativeUser(g.seed, s)
    ? undefined
    : g.index.userById.get(s.userId);
}

const FIELDS: Readonly<Record<string, Getter>> = {
  "user.email": (s, g) => brandUser(s, g)?.email,
  "user.username": (s, g) =>
    throughNativeUser(g.seed, s)
      ? s.nativeUsername
      : g.index.userById.get(s.userId)?.username,
  "user.type": (s, g) =>
    throughNativeUser(g.seed, s)
      ? "native"
      : g.index.userById.get(s.userId)?.type,
  "user.id": (s, g) => brandUser(s, g)?.id,
  "resource.technology": (s, g) =>
    g.index.resourceById.get(s.resourceId)?.technology,
  "resource.name": (s, g) => g.index.resourceById.get(s.resourceId)?.name,
  "resource.type": (s, g) => g.index.resourceById.get(s.resourceId)?.type,
  "resource.id": (s) => s.resourceId,
  sessionStatus: (s, _g, now) => statusAt(s, now),
  id: (s) => s.id,
  parentSessionId: (s) => s.parentSessionId,
};

const TERM = /^([A-Za-z][\w.]*):(?:"([^"]*)"|([^\s"()]+))$/;

/**
 * The `field:value` terms of `query` on QUERY_FIELDS (unknown fields left out), or undefined
 * when the query is richer than this subset (then it is ignored as a whole).
 */
export function queryTerms(
  query: string,
): { field: string; value: string }[] | undefined {
  const tokens = query.match(/[^\s"]+:"[^"]*"|\S+/g) ?? [];
  const terms: { field: string; value: string }[] = [];
  for (const token of tokens) {
    if (token === "AND") continue;
    const m = TERM.exec(token);
    if (!m) return undefined; // OR, NOT, parentheses, bare words: not supported, ignore all
    const field = m[1] ?? "";
    if (FIELDS[field]) terms.push({ field, value: m[2] ?? m[3] ?? "" });
  }
  return terms;
}

/** Predicate for `query`, or undefined when nothing in it is applied. */
export function compileSessionQuery(
  query: string,
  gen: SessionGenerator,
): SessionPredicate | undefined {
  const checks = (queryTerms(query) ?? []).map((t) => ({
    get: FIELDS[t.field] as Getter,
    value: t.value,
  }));
  if (checks.length === 0) return undefined;
  return (s, nowMs) => checks.every((c) => c.get(s, gen, nowMs) === c.value);
}
