// The log-aggregation streams: for each configured job, ListLogAggregations window by window
// into agg_histogram, agg_top_values and agg_windows (migrations/0004_aggregations.sql).
// Recent windows are fetched again on every run (their counts grow as logs arrive); a re-fetch
// supersedes the earlier one entirely, vanished buckets included.
import {
  listLogAggregationsResponseSchema,
  logsOverTimeDatetimeMs,
  topValueMembers,
  type LogBucket,
} from "../api/schemas/logs.js";
import {
  MAX_GROUP_BY_FIELDS,
  type AggregationJobConfig,
} from "../config/index.js";
import { describe } from "../sources/sessions.js";
import { floorSecond, planWindows, type Window } from "../sources/windows.js";
import {
  insertDeadLetters,
  type DeadLetter,
} from "../warehouse/bookkeeping.js";
import { qualified } from "../warehouse/client.js";
import { chTime, chTimeSeconds, fromChTime } from "../warehouse/format.js";
import { insertRows } from "../warehouse/insert.js";
import { parseDurationMs } from "../util/duration.js";
import { UsageError } from "../util/errors.js";
import { floorTo } from "../util/time.js";
import type { JobContext } from "./context.js";
import { advanceCheckpoint, backfillStreamOf, resolveRange } from "./range.js";
import { validationReason } from "./validation.js";

export function aggregationStream(job: AggregationJobConfig): string {
  return `aggregations.${job.name}`;
}

export interface AggregationSyncOptions {
  fromMs?: number | undefined;
  toMs?: number | undefined;
  nowMs?: number | undefined;
  /** First run without a checkpoint starts this far back (default: sessions.initialLookbackMs). */
  initialLookbackMs?: number | undefined;
}

export interface AggregationSyncResult {
  windows: number;
  startMs: number;
  endMs: number;
  rows: number;
  deadLetters: number;
}

interface HistogramRow {
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
  count: number;
  window_start: string;
  fetched_at: string;
}

interface TopValueRow {
  job: string;
  window_start: string;
  window_end: string;
  member: string;
  key: string;
  count: number;
  fetched_at: string;
}

/** Checks a job before any request: the service refuses what these rules refuse. */
export function checkJob(job: AggregationJobConfig): { intervalMs: number } {
  if (job.groupBy.length > MAX_GROUP_BY_FIELDS) {
    throw new UsageError(
      `aggregation job ${job.name} groups by ${job.groupBy.length} fields; the API allows at most ${MAX_GROUP_BY_FIELDS}`,
      {
        hint: "remove group-by fields from the job, or split it into two jobs",
      },
    );
  }
  const intervalMs = parseDurationMs(job.interval);
  if (intervalMs === undefined || intervalMs < 1000) {
    throw new UsageError(
      `aggregation job ${job.name}: interval "${job.interval}" is not a whole number of seconds`,
    );
  }
  if (job.windowMs % intervalMs !== 0) {
    throw new UsageError(
      `aggregation job ${job.name}: the window (${job.windowMs} ms) must be a multiple of the interval ${job.interval}`,
    );
  }
  return { intervalMs };
}

export function backfillAggregationStream(
  job: AggregationJobConfig,
  fromMs: number,
  toMs: number,
): string {
  return backfillStreamOf(aggregationStream(job), fromMs, toMs);
}

export async function syncAggregations(
  ctx: JobContext,
  job: AggregationJobConfig,
  options: AggregationSyncOptions = {},
): Promise<AggregationSyncResult> {
  const { intervalMs } = checkJob(job);
  const range = await resolveRange(ctx, {
    stream: aggregationStream(job),
    nowMs: floorSecond(options.nowMs ?? Date.now()),
    fromMs: options.fromMs,
    toMs: options.toMs,
    // A backfill starts on an interval boundary, an incremental sync on a window boundary.
    floorStart: (ms) =>
      floorTo(ms, options.fromMs === undefined ? job.windowMs : intervalMs),
    // Windows within the re-fetch period are fetched again: their numbers still change.
    incrementalStart: (cp, nowMs) =>
      cp === undefined
        ? nowMs -
          (options.initialLookbackMs ?? ctx.config.sessions.initialLookbackMs)
        : Math.min(cp, nowMs - job.refetchMs),
  });
  const { startMs, endMs } = range;
  const windows = planWindows(startMs, endMs, job.windowMs);
  const result: AggregationSyncResult = {
    windows: windows.length,
    startMs,
    endMs,
    rows: 0,
    deadLetters: 0,
  };
  let done = 0;
  // Windows are fetched one by one but stored in batches: one read of what earlier fetches
  // stored, one insert per table and one checkpoint per batch, which is what a backfill of
  // many small windows spends its time on otherwise.
  let batch: FetchedWindow[] = [];
  let batchRows = 0;
  const store = async () => {
    if (batch.length === 0) return;
    const r = await storeWindows(ctx, job, intervalMs, batch);
    const last = batch[batch.length - 1] as FetchedWindow;
    result.rows += r.rows;
    result.deadLetters += r.deadLetters;
    await advanceCheckpoint(ctx, range, last.window);
    done += batch.length;
    ctx.observer.onProgress?.({
      job: ctx.job,
      windowsDone: done,
      windowsTotal: windows.length,
      rows: result.rows,
      positionMs: last.window.endMs,
    });
    batch = [];
    batchRows = 0;
  };
  for (const window of windows) {
    ctx.signal.throwIfAborted();
    const fetched = await fetchWindow(ctx, job, intervalMs, window);
    batch.push(fetched);
    batchRows += fetched.rows;
    if (batch.length >= MAX_BATCH_WINDOWS || batchRows >= MAX_BATCH_ROWS)
      await store();
  }
  await store();
  return result;
}

/** Bounds of one stored batch of windows. */
const MAX_BATCH_WINDOWS = 24;
const MAX_BATCH_ROWS = 200_000;

function pathKey(
  bucketTime: string,
  level: number,
  k1: string,
  k2: string,
  k3: string,
): string {
  return JSON.stringify([bucketTime, level, k1, k2, k3]);
}

/** Flattens logsOverTime into rows: level 0 per step, then one row per nested group path. */
export function flattenHistogram(
  entries: readonly { datetime: string; count: number; buckets: LogBucket[] }[],
  base: {
    job: string;
    groupBy: readonly string[];
    intervalS: number;
    windowStart: string;
    fetchedAt: string;
  },
): HistogramRow[] {
  const [f1 = "", f2 = "", f3 = ""] = base.groupBy;
  const rows: HistogramRow[] = [];
  const push = (
    bucketTime: string,
    level: number,
    keys: readonly string[],
    count: number,
  ) => {
    if (count <= 0) return;
    rows.push({
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
    });
  };
  const walk = (
    bucketTime: string,
    buckets: readonly LogBucket[],
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

interface FetchedWindow {
  window: Window;
  /** Undefined when the response was dead-lettered. */
  data:
    | { histogram: HistogramRow[]; top: TopValueRow[]; numHits: number }
    | undefined;
  dead: DeadLetter[];
  rows: number;
}

async function fetchWindow(
  ctx: JobContext,
  job: AggregationJobConfig,
  intervalMs: number,
  window: Window,
): Promise<FetchedWindow> {
  const raw = await ctx.api.listLogAggregations(
    {
      query: job.query,
      histogramInterval: job.interval,
      histogramGroupByFields: [...job.groupBy],
      startMs: window.startMs,
      endMs: window.endMs,
    },
    { signal: ctx.signal, budget: ctx.budget },
  );
  ctx.counters.pages++;
  const letter = (reason: string, value: unknown): DeadLetter => ({
    job: ctx.job,
    recordId: `${job.name}@${new Date(window.startMs).toISOString()}`,
    reason,
    raw: JSON.stringify(value),
    runId: ctx.runId,
  });
  const parsed = listLogAggregationsResponseSchema.safeParse(raw);
  if (!parsed.success) {
    const dead = [
      letter(
        `ListLogAggregations response: ${validationReason(parsed.error)}`,
        raw,
      ),
    ];
    ctx.logger.warn(
      { window: describe(window), reason: dead[0]?.reason },
      "aggregation response dead-lettered",
    );
    return { window, data: undefined, dead, rows: 0 };
  }
  const windowStart = chTimeSeconds(window.startMs);
  const windowEnd = chTimeSeconds(window.endMs);
  // fetched_at is set when the batch is stored, after the previous fetches are known.
  const histogram = flattenHistogram(
    parsed.data.aggregations.logsOverTime ?? [],
    {
      job: job.name,
      groupBy: job.groupBy,
      intervalS: intervalMs / 1000,
      windowStart,
      fetchedAt: "",
    },
  );
  const { members, rejected } = topValueMembers(parsed.data.aggregations);
  const dead = rejected.map((r) =>
    letter(
      `aggregation member ${r.member}: ${r.error.split("\n")[0] ?? "invalid"}`,
      { [r.member]: r.value },
    ),
  );
  const top: TopValueRow[] = [];
  for (const m of members) {
    for (const v of m.values) {
      top.push({
        job: job.name,
        window_start: windowStart,
        window_end: windowEnd,
        member: m.member,
        key: v.key,
        count: v.count,
        fetched_at: "",
      });
    }
  }
  return {
    window,
    data: { histogram, top, numHits: parsed.data.numHits },
    dead,
    rows: histogram.length + top.length,
  };
}

/**
 * Stores fetched windows so that each supersedes every earlier fetch of the same window:
 * keys the earlier fetches stored that the new one lacks are written again with count 0.
 */
async function storeWindows(
  ctx: JobContext,
  job: AggregationJobConfig,
  intervalMs: number,
  batch: readonly FetchedWindow[],
): Promise<{ rows: number; deadLetters: number }> {
  const w = ctx.warehouse;
  const first = batch[0] as FetchedWindow;
  const last = batch[batch.length - 1] as FetchedWindow;
  const fromS = chTimeSeconds(first.window.startMs);
  const toS = chTimeSeconds(last.window.endMs);
  const previous = await w.client.query({
    query: `SELECT toString(bucket_time) AS t, level, key1, key2, key3, toString(window_start) AS ws,
                   toUnixTimestamp64Milli(fetched_at) AS f
            FROM ${qualified(w, "agg_histogram")} FINAL
            WHERE job = {job:String} AND bucket_time >= {from:DateTime('UTC')} AND bucket_time < {to:DateTime('UTC')} AND count > 0`,
    query_params: { job: job.name, from: fromS, to: toS },
    format: "JSONEachRow",
  });
  const prevRows = await previous.json<{
    t: string;
    level: number;
    key1: string;
    key2: string;
    key3: string;
    ws: string;
    f: string | number;
  }>();
  const previousTop = await w.client.query({
    query: `SELECT toString(window_start) AS ws, toString(window_end) AS we, member, key, toUnixTimestamp64Milli(fetched_at) AS f
            FROM ${qualified(w, "agg_top_values")} FINAL
            WHERE job = {job:String} AND window_start >= {from:DateTime('UTC')} AND window_start < {to:DateTime('UTC')} AND count > 0`,
    query_params: { job: job.name, from: fromS, to: toS },
    format: "JSONEachRow",
  });
  const prevTop = await previousTop.json<{
    ws: string;
    we: string;
    member: string;
    key: string;
    f: string | number;
  }>();
  // The new fetch must sort after every earlier one, even on a clock that stepped back.
  const lastFetch = Math.max(
    0,
    ...prevRows.map((r) => Number(r.f)),
    ...prevTop.map((r) => Number(r.f)),
  );
  const fetchedAt = chTime(Math.max(Date.now(), lastFetch + 1));

  const histogram: HistogramRow[] = [];
  const top: TopValueRow[] = [];
  const windows: object[] = [];
  const dead: DeadLetter[] = [];
  const current = new Set<string>();
  const currentTop = new Set<string>();
  const fetchedStarts = new Set<string>();
  for (const f of batch) {
    dead.push(...f.dead);
    if (!f.data) continue;
    const ws = chTimeSeconds(f.window.startMs);
    fetchedStarts.add(ws);
    for (const r of f.data.histogram) {
      r.fetched_at = fetchedAt;
      histogram.push(r);
      current.add(pathKey(r.bucket_time, r.level, r.key1, r.key2, r.key3));
    }
    for (const t of f.data.top) {
      t.fetched_at = fetchedAt;
      top.push(t);
      currentTop.add(`${t.window_start}\u0000${t.member}\u0000${t.key}`);
    }
    windows.push({
      job: job.name,
      window_start: ws,
      window_end: chTimeSeconds(f.window.endMs),
      query: job.query,
      interval_s: intervalMs / 1000,
      group_by: job.groupBy,
      num_hits: f.data.numHits,
      histogram_rows: f.data.histogram.length,
      fetched_at: fetchedAt,
    });
  }
  const fetchedRange = (ms: number) =>
    batch.some((f) => f.data && ms >= f.window.startMs && ms < f.window.endMs);
  const [f1 = "", f2 = "", f3 = ""] = job.groupBy;
  for (const p of prevRows) {
    // A dead-lettered window keeps what an earlier fetch stored: nothing newer replaces it.
    if (!fetchedRange(fromChTime(p.t))) continue;
    if (current.has(pathKey(p.t, p.level, p.key1, p.key2, p.key3))) continue;
    histogram.push({
      job: job.name,
      bucket_time: p.t,
      interval_s: intervalMs / 1000,
      level: p.level,
      field1: p.level >= 1 ? f1 : "",
      key1: p.key1,
      field2: p.level >= 2 ? f2 : "",
      key2: p.key2,
      field3: p.level >= 3 ? f3 : "",
      key3: p.key3,
      count: 0,
      window_start: p.ws,
      fetched_at: fetchedAt,
    });
  }
  for (const p of prevTop) {
    if (
      !fetchedStarts.has(p.ws) ||
      currentTop.has(`${p.ws}\u0000${p.member}\u0000${p.key}`)
    )
      continue;
    top.push({
      job: job.name,
      window_start: p.ws,
      window_end: p.we,
      member: p.member,
      key: p.key,
      count: 0,
      fetched_at: fetchedAt,
    });
  }

  await insertRows(w, "agg_histogram", histogram, ctx.insert);
  await insertRows(w, "agg_top_values", top, ctx.insert);
  await insertRows(w, "agg_windows", windows, ctx.insert);
  if (dead.length > 0) {
    await insertDeadLetters(w, dead, ctx.insert);
    ctx.counters.deadLetters += dead.length;
    ctx.observer.onDeadLetters?.({ job: ctx.job, count: dead.length });
  }
  const rows = histogram.length + top.length + windows.length;
  ctx.counters.rowsInserted += rows;
  ctx.observer.onRows?.({
    job: ctx.job,
    table: "agg_histogram",
    rows: histogram.length,
  });
  ctx.observer.onRows?.({
    job: ctx.job,
    table: "agg_top_values",
    rows: top.length,
  });
  ctx.observer.onRows?.({
    job: ctx.job,
    table: "agg_windows",
    rows: windows.length,
  });
  return { rows, deadLetters: dead.length };
}
