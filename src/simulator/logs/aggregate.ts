// The computation behind ListLogAggregations, over events already generated (events.ts) and
// a request already validated (handler.ts).
//
// Semantics, chosen to match a Quickwit/Elasticsearch terms + date_histogram aggregation:
// - An event with several distinct values in a field (multi-valued fields, MULTI_VALUED_FIELDS)
//   counts once in the bucket of each value. So at a level grouped by such a field the children
//   may add up to more than their parent; for single-valued fields they add up exactly.
// - An event lacking a group-by field falls in no bucket at that level (nor below it): children
//   may add up to less than their parent. Top-value members likewise skip events without the field.
// - Every key of every nested level is kept (no top-N cut), so the sums above are exact.
// - Top-value members keep the `topN` keys with the highest counts, ties broken by key.
// - logsOverTime holds every interval step, empty ones included (proto3: `count` and `buckets`
//   omitted when zero/empty); numHits equals the sum of its counts.

import { fieldValue, MEMBER_INDEX, MEMBERS, type FieldGroup, type FieldValue, type LogEvent, type LogField } from "./fields.js";
import { itemAt } from "./prng.js";
import type { EventPredicate } from "./query.js";

export { EXTRA_MEMBERS, LOG_FIELDS, MEMBER_OF_FIELD, MEMBERS, MULTI_VALUED_FIELDS } from "./fields.js";

export interface AggregationParams {
  /** Inclusive, epoch ms. */
  readonly startMs: number;
  /** Exclusive, epoch ms, already capped at the clock's now. */
  readonly endMs: number;
  readonly intervalMs: number;
  readonly groupBy: readonly LogField[];
  readonly predicate: EventPredicate;
  readonly fieldAggregations: boolean;
  readonly logsOverTime: boolean;
  readonly topN: number;
}

export interface TopValue {
  key: string;
  count: number;
}

export interface HistogramBucket {
  key: string;
  count: number;
  buckets?: HistogramBucket[];
}

export interface LogsOverTimeStep {
  datetime: string;
  count?: number;
  buckets?: HistogramBucket[];
}

export interface ListLogAggregationsResponse {
  aggregations: { logsOverTime?: LogsOverTimeStep[] } & { [member: string]: TopValue[] | LogsOverTimeStep[] | undefined };
  /** 64-bit on the wire, hence a string; omitted when zero (proto3). */
  numHits?: string;
}

/** The first step of the histogram: start rounded down to a multiple of the interval since the epoch. */
export function firstStepMs(startMs: number, intervalMs: number): number {
  return Math.floor(startMs / intervalMs) * intervalMs;
}

/** Steps whose start lies before endMs, from the one holding startMs; 0 for an empty window. */
export function stepCount(startMs: number, endMs: number, intervalMs: number): number {
  if (!(endMs > startMs)) return 0;
  return Math.ceil((endMs - firstStepMs(startMs, intervalMs)) / intervalMs);
}

class BucketNode {
  count = 0;
  children: Map<string, BucketNode> | undefined;

  child(key: string): BucketNode {
    this.children ??= new Map();
    let c = this.children.get(key);
    if (c === undefined) {
      c = new BucketNode();
      this.children.set(key, c);
    }
    return c;
  }
}

export function aggregateLogs(
  forEachEvent: (startMs: number, endMs: number, visit: (ev: LogEvent) => void) => void,
  p: AggregationParams,
): ListLogAggregationsResponse {
  const first = firstStepMs(p.startMs, p.intervalMs);
  const steps = p.logsOverTime ? stepCount(p.startMs, p.endMs, p.intervalMs) : 0;
  const stepCounts = new Float64Array(steps);
  const roots: (BucketNode | undefined)[] = [];
  const grouped = p.groupBy.length > 0;
  const counts = MEMBERS.map(() => new Map<string, number>());
  const weights = new Map<FieldGroup, number>();
  let hits = 0;

  const addPath = (node: BucketNode, ev: LogEvent, level: number): void => {
    if (level >= p.groupBy.length) return;
    const v = fieldValue(ev, itemAt(p.groupBy, level));
    if (v === undefined) return;
    if (typeof v === "string") {
      const c = node.child(v);
      c.count++;
      addPath(c, ev, level + 1);
      return;
    }
    for (const key of v) {
      const c = node.child(key);
      c.count++;
      addPath(c, ev, level + 1);
    }
  };

  forEachEvent(p.startMs, p.endMs, (ev) => {
    if (!p.predicate(ev)) return;
    hits++;
    if (p.logsOverTime) {
      const i = Math.floor((ev.ts - first) / p.intervalMs);
      stepCounts[i] = (stepCounts[i] ?? 0) + 1;
      if (grouped) {
        let root = roots[i];
        if (root === undefined) roots[i] = root = new BucketNode();
        addPath(root, ev, 0);
      }
    }
    if (p.fieldAggregations) {
      // Shared groups are counted once per request with a weight; see FieldGroup.
      for (const g of ev.shared) weights.set(g, (weights.get(g) ?? 0) + 1);
      for (const field in ev.own) {
        const m = MEMBER_INDEX.get(field);
        const v = ev.own[field as LogField];
        if (m !== undefined && v !== undefined) addValue(itemAt(counts, m), v, 1);
      }
    }
  });

  const aggregations: ListLogAggregationsResponse["aggregations"] = {};
  if (p.logsOverTime && steps > 0) {
    const out: LogsOverTimeStep[] = [];
    for (let i = 0; i < steps; i++) {
      const step: LogsOverTimeStep = { datetime: rfc3339(first + i * p.intervalMs) };
      const count = stepCounts[i] ?? 0;
      if (count > 0) step.count = count;
      const root = roots[i];
      if (root !== undefined) {
        const buckets = serialize(root);
        if (buckets.length > 0) step.buckets = buckets;
      }
      out.push(step);
    }
    aggregations.logsOverTime = out;
  }
  if (p.fieldAggregations) {
    for (const [g, w] of weights) {
      for (const [m, v] of g.slots) addValue(itemAt(counts, m), v, w);
    }
    for (let m = 0; m < MEMBERS.length; m++) {
      const top = topValues(itemAt(counts, m), p.topN);
      if (top.length > 0) aggregations[itemAt(MEMBERS, m)] = top;
    }
  }
  const response: ListLogAggregationsResponse = { aggregations };
  if (hits > 0) response.numHits = String(hits);
  return response;
}

function addValue(counts: Map<string, number>, v: FieldValue, w: number): void {
  if (typeof v === "string") {
    counts.set(v, (counts.get(v) ?? 0) + w);
    return;
  }
  for (const key of v) counts.set(key, (counts.get(key) ?? 0) + w);
}

/** Count descending, then key ascending by code unit (locale-independent, hence deterministic). */
function before(aKey: string, aCount: number, bKey: string, bCount: number): boolean {
  return aCount > bCount || (aCount === bCount && aKey < bKey);
}

/** The n best entries without sorting the whole map: most keys lose to the current n-th. */
export function topValues(counts: ReadonlyMap<string, number>, n: number): TopValue[] {
  const top: TopValue[] = [];
  if (n <= 0) return top;
  for (const [key, count] of counts) {
    const last = top[top.length - 1];
    if (top.length >= n && last !== undefined && !before(key, count, last.key, last.count)) continue;
    let i = top.length;
    while (i > 0) {
      const prev = itemAt(top, i - 1);
      if (!before(key, count, prev.key, prev.count)) break;
      i--;
    }
    top.splice(i, 0, { key, count });
    if (top.length > n) top.pop();
  }
  return top;
}

function serialize(node: BucketNode): HistogramBucket[] {
  if (node.children === undefined) return [];
  const entries = [...node.children].sort(([ak, a], [bk, b]) =>
    before(ak, a.count, bk, b.count) ? -1 : before(bk, b.count, ak, a.count) ? 1 : 0,
  );
  return entries.map(([key, child]) => {
    const bucket: HistogramBucket = { key, count: child.count };
    const nested = serialize(child);
    if (nested.length > 0) bucket.buckets = nested;
    return bucket;
  });
}

/** RFC 3339 in UTC; whole seconds print without a fraction (`2026-11-02T10:05:00Z`). */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, "Z");
}
