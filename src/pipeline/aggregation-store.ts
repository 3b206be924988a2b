// Stores fetched aggregation windows so that each re-fetch supersedes every earlier fetch of the
// same window: keys the earlier fetches stored that the new one lacks are written again with
// count 0 in the same insert. A re-fetch that reports fewer hits than stored (the service's own
// retention expired, or a wrong answer) supersedes nothing: the stored counts stay and the
// window's agg_windows row says `shrunk`. The warehouse is meant to outlive the service's logs.
import type { AggregationJobConfig } from "../config/index.js";
import { windowLabel } from "../sources/session-pages.js";
import type { Window } from "../sources/windows.js";
import {
  chTime,
  chTimeSeconds,
  fromChTime,
  insertRows,
  type PreviousFetch,
  readPreviousFetch,
  type StoredWindow,
  Tables,
} from "../warehouse/index.js";
import {
  countText,
  histogramRow,
  type FetchedWindow,
  type HistogramRow,
  type WindowData,
  type TopValueRow,
} from "./aggregation-rows.js";
import { storeRejected, type Rejected } from "./answer.js";
import type { JobContext } from "./context.js";
import type { WindowOutcome } from "./window-ledger.js";

export interface StoredBatch {
  rows: number;
  deadLetters: number;
  outcomes: Array<{ window: FetchedWindow["window"]; outcome: WindowOutcome }>;
}

/** One agg_windows row. */
interface WindowRow {
  job: string;
  window_start: string;
  window_end: string;
  query: string;
  interval_s: number;
  group_by: readonly string[];
  num_hits: string;
  histogram_rows: number | string;
  state: "stored" | "shrunk";
  refetched_num_hits: string;
  fetched_at: string;
}

/** The rows one batch inserts, and what became of each of its windows. */
interface BatchRows {
  histogram: HistogramRow[];
  top: TopValueRow[];
  windows: WindowRow[];
  rejected: Rejected[];
  outcomes: StoredBatch["outcomes"];
  shrunk: number;
  /** Windows whose fetch replaces what earlier fetches stored. */
  superseding: Window[];
}

/** What every row of one stored batch shares. */
interface BatchBase {
  job: AggregationJobConfig;
  intervalMs: number;
  fetchedAt: string;
}

/** A window's fetch that holds an answer. */
type Answered = Extract<FetchedWindow, { kind: "answered" }>;

export async function storeWindows(
  ctx: JobContext,
  job: AggregationJobConfig,
  intervalMs: number,
  batch: readonly FetchedWindow[],
): Promise<StoredBatch> {
  const { fromMs, toMs } = spanOf(batch);
  const previous = await readPreviousFetch(
    ctx.warehouse,
    job.name,
    fromMs,
    toMs,
  );
  // The new fetch must sort after every earlier one, even on a clock that stepped back.
  const fetchedAt = chTime(Math.max(Date.now(), previous.lastFetchMs + 1));
  const base: BatchBase = { job, intervalMs, fetchedAt };
  const rows: BatchRows = {
    histogram: [],
    top: [],
    windows: [],
    rejected: [],
    outcomes: [],
    shrunk: 0,
    superseding: [],
  };
  for (const f of batch) addFetched(ctx, base, previous, f, rows);
  // After every window is added: a key any fetched window holds is not zeroed.
  zeroVanishedHistogram(base, previous, rows);
  zeroVanishedTop(base, previous, rows);
  return insertBatch(ctx, rows);
}

/** [fromMs, toMs) covering every window of a non-empty batch. */
function spanOf(batch: readonly FetchedWindow[]): {
  fromMs: number;
  toMs: number;
} {
  const first = batch[0] as FetchedWindow;
  let fromMs = first.window.startMs;
  let toMs = first.window.endMs;
  for (const f of batch) {
    fromMs = Math.min(fromMs, f.window.startMs);
    toMs = Math.max(toMs, f.window.endMs);
  }
  return { fromMs, toMs };
}

/** Adds one fetched window's rows and outcome: failed, shrunk (stored counts kept) or stored. */
function addFetched(
  ctx: JobContext,
  base: BatchBase,
  previous: PreviousFetch,
  f: FetchedWindow,
  rows: BatchRows,
): void {
  rows.rejected.push(...f.rejected);
  if (f.kind === "refused") {
    rows.outcomes.push({
      window: f.window,
      outcome: { kind: "failed", error: f.proof.problem },
    });
    return;
  }
  const stored = previous.windows.get(chTimeSeconds(f.window.startMs));
  if (stored && BigInt(f.data.numHits) < BigInt(stored.numHits))
    addShrunk(ctx, base, f, f.data, stored, rows);
  else {
    const fallen = stored && fallenStep(previous, f.window, f.data);
    if (fallen) {
      ctx.logger.warn(
        { window: windowLabel(f.window), problem: fallen },
        "aggregation answer refused: a step counts fewer hits than stored while numHits did not fall",
      );
      rows.outcomes.push({
        window: f.window,
        outcome: {
          kind: "failed",
          error: `ListLogAggregations response: the answer's parts disagree: ${fallen}`,
        },
      });
    } else addSuperseding(base, f, f.data, rows);
  }
}

/**
 * A step of the new answer (a level-0 bucket: the window's hits per interval) that counts fewer
 * hits than the one stored, in an answer whose numHits did not fall. Every hit of a window lies
 * in one step, so the steps only grow while the total does; such an answer disagrees with
 * itself or with the one before it, and replaces nothing.
 */
function fallenStep(
  previous: PreviousFetch,
  window: FetchedWindow["window"],
  data: WindowData,
): string | undefined {
  const ws = chTimeSeconds(window.startMs);
  const now = new Map<string, bigint>();
  for (const r of data.histogram)
    if (r.level === 0) now.set(r.bucket_time.slice(0, 19), BigInt(r.count));
  for (const s of previous.histogram) {
    if (s.ws !== ws || s.level !== 0) continue;
    const count = now.get(s.t.slice(0, 19)) ?? 0n;
    if (count < BigInt(s.stored_count))
      return `the step at ${s.t} counts ${count}, fewer than the ${s.stored_count} stored, while numHits did not fall (${countText(data.numHits)})`;
  }
  return undefined;
}

/** A re-fetch with fewer hits than stored: the stored counts stay, the window is marked shrunk. */
function addShrunk(
  ctx: JobContext,
  base: BatchBase,
  f: Answered,
  data: WindowData,
  stored: StoredWindow,
  rows: BatchRows,
): void {
  rows.shrunk++;
  ctx.logger.warn(
    {
      window: windowLabel(f.window),
      storedNumHits: stored.numHits,
      fetchedNumHits: countText(data.numHits),
    },
    "aggregation window shrank on re-fetch; the stored counts are kept",
  );
  rows.windows.push(windowRow(base, stored, "shrunk", data.numHits));
  rows.outcomes.push({ window: f.window, outcome: outcomeOf(f, "shrunk") });
}

/** A fetch that replaces what earlier fetches of its window stored. */
function addSuperseding(
  base: BatchBase,
  f: Answered,
  data: WindowData,
  rows: BatchRows,
): void {
  rows.superseding.push(f.window);
  for (const r of data.histogram) {
    r.fetched_at = base.fetchedAt;
    rows.histogram.push(r);
  }
  for (const t of data.top) {
    t.fetched_at = base.fetchedAt;
    rows.top.push(t);
  }
  const counts = {
    ws: chTimeSeconds(f.window.startMs),
    we: chTimeSeconds(f.window.endMs),
    numHits: countText(data.numHits),
    histogramRows: data.histogram.length,
  };
  rows.windows.push(windowRow(base, counts, "stored", data.numHits));
  rows.outcomes.push({ window: f.window, outcome: outcomeOf(f, "stored") });
}

function outcomeOf(f: Answered, kind: "stored" | "shrunk"): WindowOutcome {
  return f.proof.kind === "whole"
    ? { kind }
    : { kind: "failed", error: f.proof.problem };
}

function windowRow(
  base: BatchBase,
  counts: {
    ws: string;
    we: string;
    numHits: string;
    histogramRows: number | string;
  },
  state: WindowRow["state"],
  refetchedNumHits: WindowData["numHits"],
): WindowRow {
  return {
    job: base.job.name,
    window_start: counts.ws,
    window_end: counts.we,
    query: base.job.query,
    interval_s: base.intervalMs / 1000,
    group_by: base.job.groupBy,
    num_hits: counts.numHits,
    histogram_rows: counts.histogramRows,
    state,
    refetched_num_hits: countText(refetchedNumHits),
    fetched_at: base.fetchedAt,
  };
}

/** One key scheme for the rows of either table: the columns that identify a row, in order. */
function keyOf(...columns: ReadonlyArray<string | number>): string {
  return JSON.stringify(columns);
}

/**
 * Histogram rows earlier fetches stored at a bucket time the superseding windows cover, and the
 * new fetch lacks, written again with count 0. A window that failed or shrank keeps what an
 * earlier fetch stored: nothing newer replaces it.
 */
function zeroVanishedHistogram(
  base: BatchBase,
  previous: PreviousFetch,
  rows: BatchRows,
): void {
  const fetched = new Set(
    rows.histogram.map((r) =>
      keyOf(r.bucket_time, r.level, r.key1, r.key2, r.key3),
    ),
  );
  const supersededAt = (ms: number) =>
    rows.superseding.some((x) => ms >= x.startMs && ms < x.endMs);
  for (const p of previous.histogram) {
    if (!supersededAt(fromChTime(p.t))) continue;
    if (fetched.has(keyOf(p.t, p.level, p.key1, p.key2, p.key3))) continue;
    const rowBase = {
      job: base.job.name,
      groupBy: base.job.groupBy,
      intervalS: base.intervalMs / 1000,
      windowStart: p.ws,
      fetchedAt: base.fetchedAt,
    };
    rows.histogram.push(
      histogramRow(rowBase, p.t, p.level, [p.key1, p.key2, p.key3], "0"),
    );
  }
}

/** Top values earlier fetches stored for a superseding window that the new fetch lacks, at count 0. */
function zeroVanishedTop(
  base: BatchBase,
  previous: PreviousFetch,
  rows: BatchRows,
): void {
  const fetched = new Set(
    rows.top.map((t) => keyOf(t.window_start, t.member, t.key)),
  );
  const superseded = new Set(
    rows.superseding.map((x) => chTimeSeconds(x.startMs)),
  );
  for (const p of previous.top) {
    if (!superseded.has(p.ws)) continue;
    if (fetched.has(keyOf(p.ws, p.member, p.key))) continue;
    rows.top.push({
      job: base.job.name,
      window_start: p.ws,
      window_end: p.we,
      member: p.member,
      key: p.key,
      count: "0",
      fetched_at: base.fetchedAt,
    });
  }
}

/** One insert per table, then the dead letters; counts the rows. */
async function insertBatch(
  ctx: JobContext,
  rows: BatchRows,
): Promise<StoredBatch> {
  const w = ctx.warehouse;
  const tables = [
    [Tables.aggHistogram, rows.histogram],
    [Tables.aggTopValues, rows.top],
    [Tables.aggWindows, rows.windows],
  ] as const;
  for (const [table, tableRows] of tables)
    await insertRows(w, table, tableRows, ctx.insert);
  await storeRejected(ctx, rows.rejected);
  if (rows.shrunk > 0)
    ctx.observer.onWindowsShrunk?.({ job: ctx.job, count: rows.shrunk });
  const inserted =
    rows.histogram.length + rows.top.length + rows.windows.length;
  ctx.counters.rowsInserted += inserted;
  for (const [table, tableRows] of tables)
    ctx.observer.onRows?.({ job: ctx.job, table, rows: tableRows.length });
  return {
    rows: inserted,
    deadLetters: rows.rejected.length,
    outcomes: rows.outcomes,
  };
}
