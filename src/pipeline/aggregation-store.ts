// Stores fetched aggregation windows so that each re-fetch supersedes every earlier fetch of the
// same window: keys the earlier fetches stored that the new one lacks are written again with
// count 0 in the same insert. A re-fetch that reports fewer hits than stored (the service's own
// retention expired, or a wrong answer) supersedes nothing: the stored counts stay and the
// window's agg_windows row says `shrunk`. The warehouse is meant to outlive the service's logs.
import type { AggregationJobConfig } from "../config/index.js";
import { describe } from "../sources/sessions.js";
import {
  insertDeadLetters,
  type DeadLetter,
} from "../warehouse/bookkeeping.js";
import { chTime, chTimeSeconds, fromChTime } from "../warehouse/format.js";
import { insertRows } from "../warehouse/insert.js";
import { readPreviousFetch } from "../warehouse/windows.js";
import {
  countText,
  type FetchedWindow,
  type HistogramRow,
  type TopValueRow,
} from "./aggregation-rows.js";
import type { JobContext } from "./context.js";
import type { WindowOutcome } from "./window-ledger.js";

function pathKey(
  bucketTime: string,
  level: number,
  k1: string,
  k2: string,
  k3: string,
): string {
  return JSON.stringify([bucketTime, level, k1, k2, k3]);
}

export interface StoredBatch {
  rows: number;
  deadLetters: number;
  outcomes: Array<{ window: FetchedWindow["window"]; outcome: WindowOutcome }>;
}

export async function storeWindows(
  ctx: JobContext,
  job: AggregationJobConfig,
  intervalMs: number,
  batch: readonly FetchedWindow[],
): Promise<StoredBatch> {
  const w = ctx.warehouse;
  const first = batch[0] as FetchedWindow;
  let fromMs = first.window.startMs;
  let toMs = first.window.endMs;
  for (const f of batch) {
    fromMs = Math.min(fromMs, f.window.startMs);
    toMs = Math.max(toMs, f.window.endMs);
  }
  const previous = await readPreviousFetch(w, job.name, fromMs, toMs);
  // The new fetch must sort after every earlier one, even on a clock that stepped back.
  const fetchedAt = chTime(Math.max(Date.now(), previous.lastFetchMs + 1));

  const histogram: HistogramRow[] = [];
  const top: TopValueRow[] = [];
  const windows: object[] = [];
  const dead: DeadLetter[] = [];
  const outcomes: StoredBatch["outcomes"] = [];
  const current = new Set<string>();
  const currentTop = new Set<string>();
  /** Windows whose fetch replaces what earlier fetches stored. */
  const superseding: FetchedWindow["window"][] = [];
  const supersedingStarts = new Set<string>();
  let shrunk = 0;
  for (const f of batch) {
    dead.push(...f.dead);
    if (!f.data) {
      outcomes.push({
        window: f.window,
        outcome: { kind: "failed", error: f.failure ?? "no usable answer" },
      });
      continue;
    }
    const ws = chTimeSeconds(f.window.startMs);
    const stored = previous.windows.get(ws);
    if (stored && BigInt(f.data.numHits) < BigInt(stored.numHits)) {
      shrunk++;
      ctx.logger.warn(
        {
          window: describe(f.window),
          storedNumHits: stored.numHits,
          fetchedNumHits: countText(f.data.numHits),
        },
        "aggregation window shrank on re-fetch; the stored counts are kept",
      );
      windows.push({
        job: job.name,
        window_start: ws,
        window_end: stored.we,
        query: job.query,
        interval_s: intervalMs / 1000,
        group_by: job.groupBy,
        num_hits: stored.numHits,
        histogram_rows: stored.histogramRows,
        state: "shrunk",
        refetched_num_hits: countText(f.data.numHits),
        fetched_at: fetchedAt,
      });
      outcomes.push({
        window: f.window,
        outcome:
          f.failure === undefined
            ? { kind: "shrunk" }
            : { kind: "failed", error: f.failure },
      });
      continue;
    }
    superseding.push(f.window);
    supersedingStarts.add(ws);
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
      num_hits: countText(f.data.numHits),
      histogram_rows: f.data.histogram.length,
      state: "stored",
      refetched_num_hits: countText(f.data.numHits),
      fetched_at: fetchedAt,
    });
    outcomes.push({
      window: f.window,
      outcome:
        f.failure === undefined
          ? { kind: "stored" }
          : { kind: "failed", error: f.failure },
    });
  }
  // A window that failed or shrank keeps what an earlier fetch stored: nothing newer replaces it.
  const supersededAt = (ms: number) =>
    superseding.some((x) => ms >= x.startMs && ms < x.endMs);
  const [f1 = "", f2 = "", f3 = ""] = job.groupBy;
  for (const p of previous.histogram) {
    if (!supersededAt(fromChTime(p.t))) continue;
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
      count: "0",
      window_start: p.ws,
      fetched_at: fetchedAt,
    });
  }
  for (const p of previous.top) {
    if (
      !supersedingStarts.has(p.ws) ||
      currentTop.has(`${p.ws}\u0000${p.member}\u0000${p.key}`)
    )
      continue;
    top.push({
      job: job.name,
      window_start: p.ws,
      window_end: p.we,
      member: p.member,
      key: p.key,
      count: "0",
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
  if (shrunk > 0)
    ctx.observer.onWindowsShrunk?.({ job: ctx.job, count: shrunk });
  const rows = histogram.length + top.length + windows.length;
  ctx.counters.rowsInserted += rows;
  for (const [table, n] of [
    ["agg_histogram", histogram.length],
    ["agg_top_values", top.length],
    ["agg_windows", windows.length],
  ] as const)
    ctx.observer.onRows?.({ job: ctx.job, table, rows: n });
  return { rows, deadLetters: dead.length, outcomes };
}
