// One ListLogAggregations answer for one window, read into the rows of agg_histogram and
// agg_top_values (migrations/0004_aggregations.sql), or into the reason it cannot be.
import {
  listLogAggregationsResponseSchema,
  logsOverTimeDatetimeMs,
  topValueMembers,
  type TopValueMember,
} from "../api/schemas/logs.js";
import type { AggregationJobConfig } from "../config/index.js";
import { windowLabel } from "../sources/session-pages.js";
import type { Window } from "../sources/windows.js";
import { chTimeSeconds } from "../warehouse/index.js";
import type { Proof, Rejected } from "./answer.js";
import type { JobContext } from "./context.js";
import { answerDisagreement } from "./aggregation-checks.js";
import { windowFailure } from "./window-ledger.js";
import { validationReason } from "./validation.js";

/** A count as the API schemas give it: int64 values may be bigint. */
export type Count = number | bigint;

/** A UInt64 column value for JSONEachRow: a decimal string keeps every digit. */
export function countText(c: Count): string {
  return typeof c === "bigint" ? c.toString() : BigInt(c).toString();
}

export interface HistogramRow {
  job: string;
  bucket_time: string;
  interval_s: number;
  level: number;
  field1: string;
  key1: string;
  field2: string;
  key2: string;
  field3: string;
  key3: string;
  /** UInt64 as a decimal string. */
  count: string;
  window_start: string;
  fetched_at: string;
}

export interface TopValueRow {
  job: string;
  window_start: string;
  window_end: string;
  member: string;
  key: string;
  count: string;
  fetched_at: string;
}

/** A histogram bucket as read from the answer; `buckets` nest one level per group-by field. */
export interface BucketLike {
  key: string;
  count: Count;
  buckets: readonly BucketLike[];
}

/** What every histogram row of one window of a job shares. */
export interface HistogramBase {
  job: string;
  groupBy: readonly string[];
  intervalS: number;
  windowStart: string;
  fetchedAt: string;
}

/** One agg_histogram row: the group-by fields named up to `level`, the keys of its path. */
export function histogramRow(
  base: HistogramBase,
  bucketTime: string,
  level: number,
  keys: readonly string[],
  count: string,
): HistogramRow {
  const [f1 = "", f2 = "", f3 = ""] = base.groupBy;
  return {
    job: base.job,
    bucket_time: bucketTime,
    interval_s: base.intervalS,
    level,
    field1: level >= 1 ? f1 : "",
    key1: keys[0] ?? "",
    field2: level >= 2 ? f2 : "",
    key2: keys[1] ?? "",
    field3: level >= 3 ? f3 : "",
    key3: keys[2] ?? "",
    count,
    window_start: base.windowStart,
    fetched_at: base.fetchedAt,
  };
}

/** Flattens logsOverTime into rows: level 0 per step, then one row per nested group path. */
function flattenHistogram(
  entries: readonly {
    datetime: string;
    count: Count;
    buckets: readonly BucketLike[];
  }[],
  base: HistogramBase,
): HistogramRow[] {
  const rows: HistogramRow[] = [];
  const push = (
    bucketTime: string,
    level: number,
    keys: readonly string[],
    count: Count,
  ) => {
    if (BigInt(count) <= 0n) return;
    rows.push(histogramRow(base, bucketTime, level, keys, countText(count)));
  };
  const walk = (
    bucketTime: string,
    buckets: readonly BucketLike[],
    level: number,
    keys: readonly string[],
  ) => {
    if (level > base.groupBy.length) return;
    for (const b of buckets) {
      const path = [...keys, b.key];
      push(bucketTime, level, path, b.count);
      walk(bucketTime, b.buckets, level + 1, path);
    }
  };
  for (const entry of entries) {
    const t = chTimeSeconds(logsOverTimeDatetimeMs(entry.datetime));
    push(t, 0, [], entry.count);
    walk(t, entry.buckets, 1, []);
  }
  return rows;
}

/** What a usable answer of one window holds. */
export interface WindowData {
  histogram: HistogramRow[];
  top: TopValueRow[];
  numHits: Count;
}

/**
 * One window's fetch: an answer whose rows can be stored (`answered`; its proof "bad" with why
 * when a member of it was rejected), or none (`refused`: the request refused, failed for a
 * reason of the window's own, or an answer dead-lettered whole), with the problem.
 */
export type FetchedWindow =
  | {
      kind: "answered";
      window: Window;
      data: WindowData;
      rejected: Rejected[];
      rows: number;
      /** "whole", or "bad" with the first rejected member's reason. */
      proof: Proof;
    }
  | {
      kind: "refused";
      window: Window;
      rejected: Rejected[];
      rows: 0;
      proof: { kind: "bad"; problem: string };
    };

const bad = (problem: string) => ({ kind: "bad", problem }) as const;

/** A window without a usable answer: nothing of it is stored, it stays pending. */
function refused(
  window: Window,
  problem: string,
  rejected: Rejected[] = [],
): FetchedWindow {
  return { kind: "refused", window, rejected, rows: 0, proof: bad(problem) };
}

/**
 * Fetches one window; a failure of the window's own (windowFailure: a bad answer, a refusal or a
 * timeout of this request) is returned as a failure, any other error is thrown.
 */
export async function fetchWindow(
  ctx: JobContext,
  job: AggregationJobConfig,
  intervalMs: number,
  window: Window,
): Promise<FetchedWindow> {
  let raw: unknown;
  try {
    raw = await ctx.api.listLogAggregations(
      {
        query: job.query,
        histogramInterval: job.interval,
        histogramGroupByFields: [...job.groupBy],
        startMs: window.startMs,
        endMs: window.endMs,
      },
      { signal: ctx.signal, budget: ctx.budget },
    );
  } catch (err) {
    const failure = windowFailure(err, ctx.signal);
    if (failure === undefined) throw err;
    return refused(window, failure);
  }
  ctx.counters.pages++;
  return readAnswer(ctx, job, intervalMs, window, raw);
}

function readAnswer(
  ctx: JobContext,
  job: AggregationJobConfig,
  intervalMs: number,
  window: Window,
  raw: unknown,
): FetchedWindow {
  const letter = (reason: string, value: unknown): Rejected => ({
    recordId: `${job.name}@${new Date(window.startMs).toISOString()}`,
    reason,
    raw: JSON.stringify(value),
  });
  const parsed = listLogAggregationsResponseSchema.safeParse(raw);
  if (!parsed.success) {
    const reason = `ListLogAggregations response: ${validationReason(parsed.error)}`;
    ctx.logger.warn(
      { window: windowLabel(window), reason },
      "aggregation response dead-lettered",
    );
    return refused(window, reason, [letter(reason, raw)]);
  }
  const { aggregations, numHits } = parsed.data;
  const { members, rejected } = topValueMembers(aggregations);
  const disagreement = answerDisagreement({
    numHits,
    logsOverTime: aggregations.logsOverTime ?? [],
    members,
    levels: job.groupBy.length,
  });
  if (disagreement !== undefined) {
    const reason = `ListLogAggregations response: ${disagreement}`;
    ctx.logger.warn(
      { window: windowLabel(window), reason },
      "aggregation response dead-lettered",
    );
    return refused(window, reason, [letter(reason, raw)]);
  }
  // fetched_at is set when the batch is stored, after the previous fetches are known.
  const histogram = flattenHistogram(aggregations.logsOverTime ?? [], {
    job: job.name,
    groupBy: job.groupBy,
    intervalS: intervalMs / 1000,
    windowStart: chTimeSeconds(window.startMs),
    fetchedAt: "",
  });
  const letters = rejected.map((r) =>
    letter(
      `aggregation member ${r.member}: ${r.error.split("\n")[0] ?? "invalid"}`,
      { [r.member]: r.value },
    ),
  );
  const top = topValueRows(job.name, window, members);
  return {
    kind: "answered",
    window,
    data: { histogram, top, numHits },
    rejected: letters,
    rows: histogram.length + top.length,
    proof:
      letters[0] === undefined ? { kind: "whole" } : bad(letters[0].reason),
  };
}

/** The agg_top_values rows of one window; fetched_at is set when they are stored. */
function topValueRows(
  job: string,
  window: Window,
  members: readonly TopValueMember[],
): TopValueRow[] {
  const windowStart = chTimeSeconds(window.startMs);
  const windowEnd = chTimeSeconds(window.endMs);
  const top: TopValueRow[] = [];
  for (const m of members) {
    for (const v of m.values) {
      top.push({
        job,
        window_start: windowStart,
        window_end: windowEnd,
        member: m.member,
        key: v.key,
        count: countText(v.count),
        fetched_at: "",
      });
    }
  }
  return top;
}
