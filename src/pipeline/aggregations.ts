// The log-aggregation streams: for each configured job, ListLogAggregations window by window
// into agg_histogram, agg_top_values and agg_windows (migrations/0004_aggregations.sql).
// Recent windows are fetched again on every run (their counts grow as logs arrive); a re-fetch
// supersedes the earlier one (aggregation-store.ts). Each window's state is kept in
// stream_windows (window-ledger.ts): the checkpoint moves only over the leading windows that are
// stored, shrunk or skipped, and a window whose answer was bad is fetched again on later runs.
import {
  MAX_GROUP_BY_FIELDS,
  type AggregationJobConfig,
} from "../config/index.js";
import { windowLabel } from "../sources/session-pages.js";
import { floorSecond, planWindows, type Window } from "../sources/windows.js";
import {
  type JobDefinition,
  readJobDefinition,
  recordJobDefinition,
} from "../warehouse/index.js";
import { parseDurationMs } from "../util/duration.js";
import { FatalError, UsageError } from "../util/errors.js";
import { floorTo } from "../util/time.js";
import { fetchWindow, type FetchedWindow } from "./aggregation-rows.js";
import { storeWindows } from "./aggregation-store.js";
import type { JobContext } from "./context.js";
import {
  advanceCheckpoint,
  resolveRange,
  settledPrefixEnd,
  type SyncRange,
} from "./range.js";
import { WindowLedger, type FailedWindow } from "./window-ledger.js";
import { aggregationName, SESSIONS_STREAM } from "./names.js";
import { forEachWindowInOrder } from "./window-pool.js";

export interface AggregationSyncOptions {
  fromMs?: number | undefined;
  toMs?: number | undefined;
  nowMs?: number | undefined;
  /** First run without a checkpoint starts this far back (default: sessions.initialLookbackMs). */
  initialLookbackMs?: number | undefined;
}

export interface AggregationSyncResult {
  /** Windows fetched. */
  windows: number;
  startMs: number;
  endMs: number;
  rows: number;
  deadLetters: number;
  /** Windows whose re-fetch reported fewer hits than stored; their counts were kept. */
  shrunk: number;
  /** Poisoned windows of the job: not fetched, and the checkpoint waits at the first one. */
  poisoned: Window[];
}

/** Checks a job before any request: the service refuses what these rules refuse. */
export function checkJob(job: AggregationJobConfig): { intervalMs: number } {
  // stream_windows keys an aggregation job's windows by its name, the sessions stream's by this.
  if (job.name === SESSIONS_STREAM)
    throw new UsageError(
      `aggregation job ${job.name}: the name "${SESSIONS_STREAM}" is the sessions stream's, whose windows share the window ledger with the aggregation jobs`,
      { hint: "give the aggregation job another name" },
    );
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
      `aggregation job ${job.name}: interval "${job.interval}" is not a whole number of seconds of at least 1s`,
      { hint: 'give the job an interval such as "5m" or "1h"' },
    );
  }
  if (!(job.windowMs > 0)) {
    throw new UsageError(
      `aggregation job ${job.name}: the window must be longer than 0`,
      { hint: 'give the job a windowMs such as "1h"' },
    );
  }
  if (job.windowMs % intervalMs !== 0) {
    throw new UsageError(
      `aggregation job ${job.name}: the window (${job.windowMs} ms) must be a multiple of the interval ${job.interval}`,
    );
  }
  return { intervalMs };
}

export async function syncAggregations(
  ctx: JobContext,
  job: AggregationJobConfig,
  options: AggregationSyncOptions = {},
): Promise<AggregationSyncResult> {
  const { intervalMs } = checkJob(job);
  await checkJobDefinition(ctx, job, intervalMs);
  const plan = await planSync(ctx, job, intervalMs, options);
  const sync = new WindowSync(ctx, job, intervalMs, plan);
  await sync.passSettledWindows();
  const concurrency = aggregationWindowConcurrency(ctx);
  await forEachWindowInOrder(
    plan.toFetch,
    // Fetched answers wait in memory for their turn: at most twice the windows in flight.
    { concurrency, maxAhead: 2 * concurrency },
    (window) => {
      ctx.signal.throwIfAborted();
      return fetchWindow(ctx, job, intervalMs, window);
    },
    (_window, fetched) => sync.add(fetched),
  );
  await sync.store();
  return sync.finish();
}

/**
 * Windows of one job fetched at once: aggregations.windowConcurrency, within the API's
 * connections (a window is one request; more would only wait for a connection, holding memory).
 * The request-rate ceiling and the service's X-Ratelimit budget are kept by the API client,
 * whatever the number of windows.
 */
function aggregationWindowConcurrency(ctx: JobContext): number {
  return Math.max(
    1,
    Math.min(
      ctx.config.aggregations.windowConcurrency,
      ctx.config.api.connections,
    ),
  );
}

/** The windows of one sync of a job: those of its range, and those it fetches. */
interface SyncPlan {
  range: SyncRange;
  ledger: WindowLedger;
  /** The windows of the range, in order; the checkpoint moves over them. */
  planned: Window[];
  toFetch: Window[];
}

async function planSync(
  ctx: JobContext,
  job: AggregationJobConfig,
  intervalMs: number,
  options: AggregationSyncOptions,
): Promise<SyncPlan> {
  const nowMs = floorSecond(options.nowMs ?? Date.now());
  const range = await resolveRange(ctx, {
    stream: aggregationName(job),
    nowMs,
    fromMs: options.fromMs,
    toMs: options.toMs,
    // A backfill starts on an interval boundary, an incremental sync on a window boundary.
    floorStart: (ms) =>
      floorTo(ms, options.fromMs === undefined ? job.windowMs : intervalMs),
    // Windows within the re-fetch period are fetched again: their numbers still change.
    incrementalStart: (cp, now) =>
      cp === undefined
        ? now -
          (options.initialLookbackMs ?? ctx.config.sessions.initialLookbackMs)
        : Math.min(cp, now - job.refetchMs),
  });
  const { startMs, endMs } = range;
  const ledger = await WindowLedger.load(ctx, job.name, startMs);
  const planned = planWindows(startMs, endMs, job.windowMs);
  const refetchFromMs = nowMs - job.refetchMs;
  // Pending windows behind the range are fetched on their own by the incremental sync.
  const toFetch = [
    ...(options.fromMs === undefined ? ledger.pendingBefore(startMs) : []),
    ...planned.filter((w) => ledger.needsFetch(w, refetchFromMs)),
  ];
  return { range, ledger, planned, toFetch };
}

/** Bounds of one stored batch of windows. */
const MAX_BATCH_WINDOWS = 24;
const MAX_BATCH_ROWS = 200_000;

/**
 * Takes the fetched windows of a plan in order and stores them in batches of adjacent windows: one
 * read of what earlier fetches stored, one insert per table and one checkpoint per batch, which
 * is what a backfill of many small windows spends its time on otherwise.
 */
class WindowSync {
  readonly #ctx: JobContext;
  readonly #job: AggregationJobConfig;
  readonly #intervalMs: number;
  readonly #plan: SyncPlan;
  readonly #result: AggregationSyncResult;
  readonly #failed: FailedWindow[] = [];
  /** Leading planned windows that are settled: the checkpoint stands at their end. */
  #settledCount = 0;
  #done = 0;
  #batch: FetchedWindow[] = [];
  #batchRows = 0;

  constructor(
    ctx: JobContext,
    job: AggregationJobConfig,
    intervalMs: number,
    plan: SyncPlan,
  ) {
    this.#ctx = ctx;
    this.#job = job;
    this.#intervalMs = intervalMs;
    this.#plan = plan;
    this.#result = {
      windows: plan.toFetch.length,
      startMs: plan.range.startMs,
      endMs: plan.range.endMs,
      rows: 0,
      deadLetters: 0,
      shrunk: 0,
      poisoned: [],
    };
  }

  /**
   * Adds a fetched window to the batch, in window order; a window not adjacent to the batch
   * stores it first.
   */
  async add(fetched: FetchedWindow): Promise<void> {
    const previous = this.#batch[this.#batch.length - 1];
    if (previous && previous.window.endMs !== fetched.window.startMs)
      await this.store();
    this.#batch.push(fetched);
    this.#batchRows += fetched.rows;
    if (
      this.#batch.length >= MAX_BATCH_WINDOWS ||
      this.#batchRows >= MAX_BATCH_ROWS
    )
      await this.store();
  }

  /** Stores the batch, records its windows' states and moves the checkpoint. */
  async store(): Promise<void> {
    if (this.#batch.length === 0) return;
    const ctx = this.#ctx;
    const result = this.#result;
    const r = await storeWindows(ctx, this.#job, this.#intervalMs, this.#batch);
    result.rows += r.rows;
    result.deadLetters += r.deadLetters;
    result.shrunk += r.outcomes.filter(
      (o) => o.outcome.kind === "shrunk",
    ).length;
    const now = await this.#plan.ledger.record(ctx, r.outcomes);
    this.#failed.push(...now);
    const poisoned = now.filter((f) => f.state === "poisoned").length;
    if (poisoned > 0)
      ctx.observer.onWindowsPoisoned?.({ job: ctx.job, count: poisoned });
    await this.passSettledWindows();
    this.#done += this.#batch.length;
    ctx.observer.onProgress?.({
      job: ctx.job,
      windowsDone: this.#done,
      windowsTotal: this.#plan.toFetch.length,
      rows: result.rows,
      positionMs: this.#plan.range.positionMs,
    });
    this.#batch = [];
    this.#batchRows = 0;
  }

  /**
   * Passes the leading planned windows that are settled (settledPrefixEnd) and moves the
   * checkpoint to the end of the last of them (advanceCheckpoint), and no further.
   */
  async passSettledWindows(): Promise<void> {
    const { planned, ledger, range } = this.#plan;
    const end = settledPrefixEnd(planned, this.#settledCount, (w) =>
      ledger.settled(w),
    );
    if (end === this.#settledCount) return;
    this.#settledCount = end;
    await advanceCheckpoint(this.#ctx, range, planned[end - 1] as Window);
  }

  /** The result once every window was stored; throws when some could not be. */
  finish(): AggregationSyncResult {
    const result = this.#result;
    result.poisoned = this.#plan.ledger
      .poisoned()
      .map((r) => ({ startMs: r.startMs, endMs: r.endMs }));
    if (this.#failed.length > 0)
      throw windowsFailed(this.#job, this.#failed, this.#ctx);
    if (result.poisoned.length > 0)
      this.#ctx.logger.warn(
        { poisoned: result.poisoned.map(windowLabel) },
        "poisoned aggregation windows hold the checkpoint until an operator skips them",
      );
    return result;
  }
}

function windowsFailed(
  job: AggregationJobConfig,
  failed: readonly FailedWindow[],
  ctx: JobContext,
): FatalError {
  const max = ctx.config.aggregations.maxWindowAttempts;
  const lines = failed.map(
    (f) =>
      `${windowLabel(f.window)} attempt ${f.attempts} of ${max}, now ${f.state}: ${f.error}`,
  );
  const poisoned = failed.some((f) => f.state === "poisoned");
  return new FatalError(
    "AGGREGATION_WINDOWS_FAILED",
    `aggregation job ${job.name}: ${failed.length} window(s) could not be stored; the checkpoint stays before them:\n  ${lines.join("\n  ")}`,
    {
      hint: poisoned
        ? `a poisoned window is no longer fetched: see \`sessionhouse windows list --job ${job.name}\`, and once you know why, \`sessionhouse windows skip ${job.name} --window <start> --reason "..."\` lets the checkpoint pass it`
        : `pending windows are fetched again on the next run; after ${max} failed attempts (aggregations.maxWindowAttempts) they are poisoned. \`sessionhouse windows list\` shows them`,
    },
  );
}

/** What a job's stored rows depend on; a change under the same name would mix old and new rows. */
function definitionOf(
  job: AggregationJobConfig,
  intervalMs: number,
): JobDefinition {
  return {
    job: job.name,
    query: job.query,
    intervalS: intervalMs / 1000,
    windowMs: job.windowMs,
    groupBy: job.groupBy,
  };
}

/**
 * Refuses a job whose query, interval, window or group-by fields differ from those its stored
 * rows were made with; records the definition on the job's first run.
 */
async function checkJobDefinition(
  ctx: JobContext,
  job: AggregationJobConfig,
  intervalMs: number,
): Promise<void> {
  const want = definitionOf(job, intervalMs);
  const stored = await readJobDefinition(ctx.warehouse, job.name);
  if (!stored) {
    await recordJobDefinition(ctx.warehouse, want, ctx.insert);
    return;
  }
  const changes: string[] = [];
  if (stored.query !== want.query)
    changes.push(`query "${stored.query}" → "${want.query}"`);
  if (stored.intervalS !== want.intervalS)
    changes.push(`interval ${stored.intervalS}s → ${want.intervalS}s`);
  if (stored.windowMs !== want.windowMs)
    changes.push(`windowMs ${stored.windowMs} → ${want.windowMs}`);
  if (stored.groupBy.join(",") !== want.groupBy.join(","))
    changes.push(
      `groupBy [${stored.groupBy.join(", ")}] → [${want.groupBy.join(", ")}]`,
    );
  if (changes.length === 0) return;
  throw new UsageError(
    `aggregation job ${job.name} changed since its rows were stored (${changes.join("; ")}); old and new rows would mix`,
    {
      hint: `give the changed job a new name (e.g. ${job.name}_v2) and keep the old rows under the old one, or drop the old rows with \`sessionhouse windows forget ${job.name} --yes\` and sync again`,
    },
  );
}
