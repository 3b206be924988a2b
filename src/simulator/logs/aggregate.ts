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

import {
  fieldValue,
  HOME_OF_FIELD,
  intString,
  MEMBER_INDEX,
  MEMBERS,
  NUMBER_COLUMN,
  numberOf,
  type AggregationMember,
  type BatchVisitor,
  type EventBatch,
  type FieldGroup,
  type FieldValue,
  type LogField,
} from "./fields.js";
import { itemAt } from "../random.js";
import type { EventPredicate } from "./query.js";

export {
  EXTRA_MEMBERS,
  LOG_FIELDS,
  MEMBER_OF_FIELD,
  MEMBERS,
  MULTI_VALUED_FIELDS,
} from "./fields.js";

interface AggregationParams {
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

interface LogsOverTimeStep {
  datetime: string;
  count?: number;
  buckets?: HistogramBucket[];
}

type Aggregations = { logsOverTime?: LogsOverTimeStep[] } & Partial<
  Record<AggregationMember, TopValue[]>
>;

export interface ListLogAggregationsResponse {
  aggregations: Aggregations;
  /** 64-bit on the wire, hence a string; omitted when zero (proto3). */
  numHits?: string;
}

/** The first step of the histogram: start rounded down to a multiple of the interval since the epoch. */
function firstStepMs(startMs: number, intervalMs: number): number {
  return Math.floor(startMs / intervalMs) * intervalMs;
}

/** Steps whose start lies before endMs, from the one holding startMs; 0 for an empty window. */
export function stepCount(
  startMs: number,
  endMs: number,
  intervalMs: number,
): number {
  if (!(endMs > startMs)) return 0;
  return Math.ceil((endMs - firstStepMs(startMs, intervalMs)) / intervalMs);
}

/** Tags the scratch weights of FieldGroup with the request that wrote them. */
let requestStamp = 0;

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
  forEachInWindow: (
    startMs: number,
    endMs: number,
    visit: BatchVisitor,
  ) => void,
  p: AggregationParams,
): ListLogAggregationsResponse {
  const first = firstStepMs(p.startMs, p.intervalMs);
  const steps = p.logsOverTime
    ? stepCount(p.startMs, p.endMs, p.intervalMs)
    : 0;
  const stepCounts = new Float64Array(steps);
  const roots: (BucketNode | undefined)[] = [];
  const levels = p.groupBy.length;
  const ctxLevel = p.groupBy.map((f) => HOME_OF_FIELD[f] === "ctx");
  const counts = MEMBERS.map(() => new Map<string, Cell>());
  // Numbers are counted as numbers (cheaper keys) and turned into strings at the end.
  const rowsReceived = new Map<number, Cell>();
  const rowsSent = new Map<number, Cell>();
  const dataVolume = new Map<number, Cell>();
  const stamp = ++requestStamp;
  const touched: FieldGroup[] = [];
  let hits = 0;

  // A session's context is the same for all its events: its group-by values are read once.
  let levelValues: (FieldValue | undefined)[] = [];
  const addPath = (
    node: BucketNode,
    b: EventBatch,
    i: number,
    level: number,
  ): void => {
    if (level >= levels) return;
    const v = ctxLevel[level]
      ? levelValues[level]
      : fieldValue(b, i, itemAt(p.groupBy, level));
    if (v === undefined) return;
    if (typeof v === "string") {
      const c = node.child(v);
      c.count++;
      addPath(c, b, i, level + 1);
      return;
    }
    for (const key of v) {
      const c = node.child(key);
      c.count++;
      addPath(c, b, i, level + 1);
    }
  };
  const weigh = (g: FieldGroup | undefined): void => {
    if (g === undefined) return;
    if (g.stamp !== stamp) {
      g.stamp = stamp;
      g.weight = 0;
      touched.push(g);
    }
    g.weight++;
  };

  forEachInWindow(p.startMs, p.endMs, (b, from, to) => {
    if (levels > 0) {
      levelValues = p.groupBy.map((f, l) =>
        ctxLevel[l] ? b.ctx?.get(f) : undefined,
      );
    }
    for (let i = from; i < to; i++) {
      if (!p.predicate(b, i)) continue;
      hits++;
      if (p.logsOverTime) {
        const step = Math.floor(((b.ts[i] ?? 0) - first) / p.intervalMs);
        stepCounts[step] = (stepCounts[step] ?? 0) + 1;
        if (levels > 0) {
          let root = roots[step];
          if (root === undefined) roots[step] = root = new BucketNode();
          addPath(root, b, i, 0);
        }
      }
      if (p.fieldAggregations) {
        // Shared groups are counted once per request with a weight; see FieldGroup.
        weigh(b.ctx);
        weigh(b.detail[i]);
        weigh(b.policy[i]);
        if (b.numbers.length > 0) {
          bumpNumber(rowsReceived, numberOf(b, NUMBER_COLUMN.rowsReceived, i));
          bumpNumber(rowsSent, numberOf(b, NUMBER_COLUMN.rowsSent, i));
          bumpNumber(dataVolume, numberOf(b, NUMBER_COLUMN.dataVolume, i));
        }
      }
    }
  });

  const aggregations: ListLogAggregationsResponse["aggregations"] = {};
  if (p.logsOverTime && steps > 0) {
    const out: LogsOverTimeStep[] = [];
    for (let i = 0; i < steps; i++) {
      const step: LogsOverTimeStep = {
        datetime: rfc3339(first + i * p.intervalMs),
      };
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
    // A parent (resource, user) is counted once with the summed weight of its children.
    let pending = new Map(touched.map((g) => [g, g.weight]));
    while (pending.size > 0) {
      const parents = new Map<FieldGroup, number>();
      for (const [g, w] of pending) {
        for (const [m, v] of g.slots) addValue(itemAt(counts, m), v, w);
        for (const parent of g.parents)
          parents.set(parent, (parents.get(parent) ?? 0) + w);
      }
      pending = parents;
    }
    addNumbers(counts, "response.rows_received", rowsReceived);
    addNumbers(counts, "response.rows_sent", rowsSent);
    addNumbers(counts, "response.data_volume", dataVolume);
    for (let m = 0; m < MEMBERS.length; m++) {
      const top = topValues(itemAt(counts, m), p.topN);
      if (top.length > 0) aggregations[itemAt(MEMBERS, m)] = top;
    }
  }
  const response: ListLogAggregationsResponse = { aggregations };
  if (hits > 0) response.numHits = String(hits);
  return response;
}

/** A mutable count, so that a hit costs one map lookup instead of a get and a set. */
interface Cell {
  n: number;
}

function addValue(counts: Map<string, Cell>, v: FieldValue, w: number): void {
  if (typeof v === "string") {
    bump(counts, v, w);
    return;
  }
  for (const key of v) bump(counts, key, w);
}

function bump(counts: Map<string, Cell>, key: string, w: number): void {
  const cell = counts.get(key);
  if (cell === undefined) counts.set(key, { n: w });
  else cell.n += w;
}

function bumpNumber(counts: Map<number, Cell>, n: number): void {
  if (n < 0) return;
  const cell = counts.get(n);
  if (cell === undefined) counts.set(n, { n: 1 });
  else cell.n++;
}

function addNumbers(
  counts: readonly Map<string, Cell>[],
  field: LogField,
  numbers: ReadonlyMap<number, Cell>,
): void {
  const member = MEMBER_INDEX.get(field);
  if (member === undefined) return;
  const target = itemAt(counts, member);
  for (const [n, cell] of numbers) bump(target, intString(n), cell.n);
}

/** Count descending, then key ascending by code unit (locale-independent, hence deterministic). */
function before(
  aKey: string,
  aCount: number,
  bKey: string,
  bCount: number,
): boolean {
  return aCount > bCount || (aCount === bCount && aKey < bKey);
}

/** The n best entries without sorting the whole map: most keys lose to the current n-th. */
function topValues(counts: ReadonlyMap<string, Cell>, n: number): TopValue[] {
  const top: TopValue[] = [];
  if (n <= 0) return top;
  for (const [key, cell] of counts) {
    const count = cell.n;
    const last = top[top.length - 1];
    if (
      top.length >= n &&
      last !== undefined &&
      !before(key, count, last.key, last.count)
    )
      continue;
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
    before(ak, a.count, bk, b.count)
      ? -1
      : before(bk, b.count, ak, a.count)
        ? 1
        : 0,
  );
  return entries.map(([key, child]) => {
    const bucket: HistogramBucket = { key, count: child.count };
    const nested = serialize(child);
    if (nested.length > 0) bucket.buckets = nested;
    return bucket;
  });
}

/** RFC 3339 in UTC; whole seconds print without a fraction (`2026-11-02T10:05:00Z`). */
function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, "Z");
}
