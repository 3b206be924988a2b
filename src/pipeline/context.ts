// What every job run is handed: configuration, the API, the warehouse, a logger, one
// AbortSignal for everything it starts, and counters that end up in the `runs` table.
import { randomUUID } from "node:crypto";
import type { ControlPlaneApi } from "../api/control-plane.js";
import { RetryBudget } from "../api/retry.js";
import { secretsOf, type Config } from "../config/index.js";
import {
  type InsertOptions,
  recordRun,
  type RunStatus,
  type Warehouse,
} from "../warehouse/index.js";
import { errorMessage } from "../util/errors.js";
import { thisProcess } from "../util/process.js";
import { rememberedSecrets, scrubber, type Logger } from "../util/logger.js";

export interface RunCounters {
  pages: number;
  rowsInserted: number;
  deadLetters: number;
  retries: number;
}

export interface Progress {
  job: string;
  windowsDone: number;
  windowsTotal: number;
  rows: number;
  /** Position the data is complete up to (epoch ms). */
  positionMs?: number;
}

/** Observers of a run (metrics, progress bars). All optional. */
export interface RunObserver {
  onProgress?(p: Progress): void;
  onRows?(e: { job: string; table: string; rows: number }): void;
  onDeadLetters?(e: { job: string; count: number }): void;
  onCheckpoint?(e: { stream: string; positionMs: number }): void;
  /** Aggregation windows whose re-fetch reported fewer hits than stored (counts kept). */
  onWindowsShrunk?(e: { job: string; count: number }): void;
  /** Aggregation windows that reached their last allowed attempt and were poisoned. */
  onWindowsPoisoned?(e: { job: string; count: number }): void;
  /** Open sessions marked vanished: GetSession answered not_found too many times in a row. */
  onSessionsVanished?(e: { job: string; count: number }): void;
  /** Sessions a reconciliation found listed but not stored before, and stored. */
  onReconcileMissing?(e: { job: string; count: number }): void;
  /** Runs found `running` with their process gone, marked abandoned (abandonOrphanedRuns). */
  onRunsAbandoned?(e: { job: string; count: number }): void;
  /** Windows whose listed and stored session counts differ after a reconciliation pass. */
  onReconcileWindowsDiffering?(e: { job: string; count: number }): void;
  onRunEnd?(e: {
    job: string;
    status: RunStatus;
    ms: number;
    counters: RunCounters;
  }): void;
}

export interface JobContext {
  readonly config: Config;
  readonly api: ControlPlaneApi;
  readonly warehouse: Warehouse;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  readonly runId: string;
  readonly job: string;
  readonly budget: RetryBudget;
  readonly counters: RunCounters;
  readonly observer: RunObserver;
  /** Insert options for this run (retries, abort, retry counting). */
  readonly insert: InsertOptions;
}

export interface RunDeps {
  config: Config;
  api: ControlPlaneApi;
  warehouse: Warehouse;
  logger: Logger;
  signal?: AbortSignal | undefined;
  observer?: RunObserver | undefined;
}

/**
 * Runs one job with its bookkeeping: a `runs` row when it starts and when it ends, a child
 * logger, a retry budget. The job's own errors are rethrown after they are recorded.
 */
export async function withRun<T>(
  deps: RunDeps,
  job: string,
  fn: (ctx: JobContext) => Promise<T>,
): Promise<T> {
  const ctx = jobContext(deps, job);
  const startedAtMs = Date.now();
  // The bookkeeping writes must not be aborted with the run, or an aborted run stays "running".
  const bookkeeping: InsertOptions = {
    retries: deps.config.clickhouse.insertRetries,
    logger: ctx.logger,
  };
  await recordRun(
    deps.warehouse,
    {
      runId: ctx.runId,
      job,
      startedAtMs,
      status: "running",
      ...ctx.counters,
      error: "",
      owner: thisProcess(),
    },
    bookkeeping,
  );
  ctx.logger.info("run started");
  let status: RunStatus = "succeeded";
  let error = "";
  try {
    return await fn(ctx);
  } catch (err) {
    status = ctx.signal.aborted ? "aborted" : "failed";
    // Stored, and shown by `status`: a service that echoes the key must not put it there.
    error = scrubber([...secretsOf(deps.config), ...rememberedSecrets()])(
      errorMessage(err),
    );
    throw err;
  } finally {
    await endRun(ctx, bookkeeping, { startedAtMs, status, error });
  }
}

/** A fresh context for one run of `job`: its id, child logger, counters and retry budget. */
function jobContext(deps: RunDeps, job: string): JobContext {
  const runId = randomUUID();
  const logger = deps.logger.child({ job, runId });
  const counters: RunCounters = {
    pages: 0,
    rowsInserted: 0,
    deadLetters: 0,
    retries: 0,
  };
  const signal = deps.signal ?? new AbortController().signal;
  const insert: InsertOptions = {
    retries: deps.config.clickhouse.insertRetries,
    signal,
    logger,
    onRetry: () => {
      counters.retries++;
    },
  };
  return {
    config: deps.config,
    api: deps.api,
    warehouse: deps.warehouse,
    logger,
    signal,
    runId,
    job,
    budget: new RetryBudget(deps.config.api.runRetryBudget),
    counters,
    observer: deps.observer ?? {},
    insert,
  };
}

/** Records, reports and logs the end of a run; a failure to record it is logged, not thrown. */
async function endRun(
  ctx: JobContext,
  bookkeeping: InsertOptions,
  run: { startedAtMs: number; status: RunStatus; error: string },
): Promise<void> {
  const { job, logger, counters } = ctx;
  const { startedAtMs, status, error } = run;
  counters.retries += ctx.budget.spent;
  const finishedAtMs = Date.now();
  try {
    await recordRun(
      ctx.warehouse,
      {
        runId: ctx.runId,
        job,
        startedAtMs,
        finishedAtMs,
        status,
        ...counters,
        error,
        owner: thisProcess(),
      },
      bookkeeping,
    );
  } catch (err) {
    logger.error(
      { err: errorMessage(err) },
      "could not record the end of the run",
    );
  }
  const ms = finishedAtMs - startedAtMs;
  ctx.observer.onRunEnd?.({ job, status, ms, counters });
  const fields = { status, ms, ...counters };
  if (status === "succeeded") logger.info(fields, "run finished");
  else if (status === "aborted")
    logger.warn({ ...fields, reason: error }, "run stopped");
  else logger.error({ ...fields, error }, "run failed");
}
