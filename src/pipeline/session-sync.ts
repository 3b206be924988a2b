// The sessions stream: page ListSessionsV2 window by window into the `sessions` table, then
// re-read sessions still open from before the lookback. The checkpoint moves only after the
// rows of every window up to it were inserted, so a crash at any instant resumes without loss.
// A window that cannot be read for a reason of its own is recorded in stream_windows
// (window-ledger.ts) and fails the run; the checkpoint passes it only once it is read, or once
// an operator skipped it (`sessionhouse windows skip sessions`), and a skipped window is not read.
import {
  windowLabel,
  sessionWindowBatches,
  type RawRecord,
} from "../sources/session-pages.js";
import {
  floorSecond,
  planWindows,
  rangeLogFields,
  type Window,
} from "../sources/windows.js";
import type { JobContext } from "./context.js";
import { refreshOpenSessions } from "./open-sessions.js";
import { advanceCheckpoint, resolveRange, type SyncRange } from "./range.js";
import { SessionWriter } from "./session-writer.js";
import { WindowLedger, windowFailure } from "./window-ledger.js";
import { forEachWindowInOrder } from "./window-pool.js";
import { SESSIONS_STREAM } from "./names.js";

/**
 * Records parsed per step of a page's stream. Small steps keep what is live between two young
 * garbage collections small: at 2000 records a step, each step's parsed records survived a
 * collection and were copied: garbage collection took a quarter of the sync's JavaScript time
 * (CPU profile), and under a tenth at 250.
 */
const STREAM_BATCH_RECORDS = 250;
export interface SessionSyncOptions {
  /** Backfill from this instant (epoch ms); without it, continue from the checkpoint. */
  fromMs?: number | undefined;
  toMs?: number | undefined;
  /** The clock; tests and the demo pass the simulator's. */
  nowMs?: number | undefined;
  /** Skip the re-read of open sessions older than the synced range. */
  skipOpenRefresh?: boolean;
}

export interface SessionSyncResult {
  windows: number;
  startMs: number;
  endMs: number;
  rows: number;
  deadLetters: number;
  openRefreshed: number;
}

export async function syncSessions(
  ctx: JobContext,
  options: SessionSyncOptions = {},
): Promise<SessionSyncResult> {
  const cfg = ctx.config.sessions;
  const range = await resolveRange(ctx, {
    stream: SESSIONS_STREAM,
    nowMs: floorSecond(options.nowMs ?? Date.now()),
    fromMs: options.fromMs,
    toMs: options.toMs,
    floorStart: floorSecond,
    // Windows behind the checkpoint are re-read for late sessions.
    incrementalStart: (cp, nowMs) =>
      cp === undefined ? nowMs - cfg.initialLookbackMs : cp - cfg.lookbackMs,
  });
  const { startMs, endMs } = range;
  const windows = sessionWindows(ctx, startMs, endMs, "syncing sessions");
  const result: SessionSyncResult = {
    windows: windows.length,
    startMs,
    endMs,
    rows: 0,
    deadLetters: 0,
    openRefreshed: 0,
  };
  // One writer for every window, so that blocks fill across windows' edges. A window's
  // checkpoint waits for a mark of everything added until the window ended, chained in window
  // order, while the next windows are read: the checkpoint never passes a row not yet stored.
  const writer = new SessionWriter(ctx);
  const ledger = await WindowLedger.load(ctx, SESSIONS_STREAM, startMs);
  let checkpoints: Promise<void> = Promise.resolve();
  const pass: SessionPass = {
    range,
    ledger,
    writer,
    done: 0,
    total: windows.length,
  };
  try {
    await forEachWindowInOrder(
      windows,
      { concurrency: cfg.windowConcurrency },
      (window) =>
        ledger.skipped(window)
          ? Promise.resolve()
          : fillLedgerWindow(ctx, ledger, writer, window),
      (window) => {
        const stored = writer.mark();
        // Awaited in the chain once the checkpoints before it are written; a block that fails
        // sooner must not count as unobserved meanwhile.
        stored.catch(() => undefined);
        checkpoints = checkpoints.then(() =>
          windowStored(ctx, pass, window, stored),
        );
        // Observed below; a failed one stops the chain and surfaces there.
        checkpoints.catch(() => undefined);
        return Promise.resolve();
      },
    );
    await writer.drain();
    await checkpoints;
  } catch (err) {
    // Store what was read (the windows before the failure then reach their checkpoints) unless
    // storing is what failed, let what is under way finish, and the checkpoints follow.
    await writer.drain().catch(() => undefined);
    await writer.settle();
    await checkpoints.catch(() => undefined);
    throw err;
  }
  result.rows = writer.rows;
  result.deadLetters = writer.deadLetters;
  if (!options.skipOpenRefresh)
    result.openRefreshed = await refreshOpenSessions(ctx, {
      beforeMs: startMs,
    });
  return result;
}

/** What the windows of one sessions pass share while their checkpoints follow in order. */
interface SessionPass {
  range: SyncRange;
  ledger: WindowLedger;
  writer: SessionWriter;
  /** Windows whose checkpoint is written, of `total`. */
  done: number;
  total: number;
}

/** Once `stored` (a mark of the window's rows) resolves: its checkpoint, its ledger entry, progress. */
async function windowStored(
  ctx: JobContext,
  pass: SessionPass,
  window: Window,
  stored: Promise<void>,
): Promise<void> {
  await stored;
  await advanceCheckpoint(ctx, pass.range, window);
  await settleStored(ctx, pass.ledger, pass.range.startMs, window.endMs);
  pass.done++;
  ctx.observer.onProgress?.({
    job: ctx.job,
    windowsDone: pass.done,
    windowsTotal: pass.total,
    rows: pass.writer.rows,
    positionMs: window.endMs,
  });
}

/**
 * Pages one window into a writer; a failure of the window's own (windowFailure) is recorded in
 * the ledger as a failed attempt before it fails the run, so that `windows list` shows the window
 * and `windows skip` can let the checkpoint pass it.
 */
async function fillLedgerWindow(
  ctx: JobContext,
  ledger: WindowLedger,
  writer: SessionWriter,
  window: Window,
): Promise<void> {
  try {
    await fillWindow(ctx, writer, window);
  } catch (err) {
    const failure = windowFailure(err, ctx.signal);
    if (failure === undefined) throw err;
    const [failed] = await ledger.record(ctx, [
      { window, outcome: { kind: "failed", error: failure } },
    ]);
    ctx.logger.warn(
      {
        window: windowLabel(window),
        attempts: failed?.attempts,
        state: failed?.state,
      },
      "sessions window could not be read; the checkpoint waits before it: `sessionhouse windows list` shows it, `sessionhouse windows skip sessions` lets the checkpoint pass it",
    );
    throw err;
  }
}

/**
 * Marks stored the failed windows that this run read in full: those within [fromMs, toMs), the
 * span from the run's start to where its checkpoint now stands.
 */
async function settleStored(
  ctx: JobContext,
  ledger: WindowLedger,
  fromMs: number,
  toMs: number,
): Promise<void> {
  const stored = ledger
    .unsettledWithin(fromMs, toMs)
    .filter((w) => !ledger.skipped(w));
  if (stored.length > 0)
    await ledger.record(
      ctx,
      stored.map((window) => ({ window, outcome: { kind: "stored" } })),
    );
}

/** The windows a pass over the sessions of [startMs, endMs) reads, announced in one log line. */
export function sessionWindows(
  ctx: JobContext,
  startMs: number,
  endMs: number,
  message: string,
): Window[] {
  const windows = planWindows(startMs, endMs, ctx.config.sessions.windowMs);
  ctx.logger.info(rangeLogFields(startMs, endMs, windows.length), message);
  return windows;
}

/** Pages one window into `sessions`, alone: its rows are stored when this returns. */
export async function syncWindow(
  ctx: JobContext,
  window: Window,
  onRecords?: (records: readonly RawRecord[]) => void,
): Promise<{ rows: number; deadLetters: number }> {
  const writer = new SessionWriter(ctx);
  try {
    await fillWindow(ctx, writer, window, onRecords);
    await writer.drain();
  } finally {
    await writer.settle();
  }
  return { rows: writer.rows, deadLetters: writer.deadLetters };
}

/**
 * Pages one window into a writer; `onRecords` sees every batch of records as listed. Its rows
 * are stored once a mark taken after it resolves (or the writer is drained).
 */
async function fillWindow(
  ctx: JobContext,
  writer: SessionWriter,
  window: Window,
  onRecords?: (records: readonly RawRecord[]) => void,
): Promise<void> {
  const cfg = ctx.config.sessions;
  const batches = sessionWindowBatches(ctx.api, window, {
    pageSize: cfg.pageSize,
    // Records are handed over in small batches whatever the page size, so that what is held
    // between the socket and the insert buffer does not grow with the page.
    batchSize: Math.min(
      STREAM_BATCH_RECORDS,
      cfg.insertBatchRows,
      cfg.pageSize,
    ),
    maxStalledPages: cfg.maxStalledPages,
    maxPagesPerWindow: cfg.maxPagesPerWindow,
    signal: ctx.signal,
    budget: ctx.budget,
    logger: ctx.logger,
  });
  let listed = 0;
  for await (const batch of batches) {
    ctx.signal.throwIfAborted();
    onRecords?.(batch.records);
    listed += batch.records.length;
    await writer.add(batch.records, Date.now());
    if (batch.endOfPage) ctx.counters.pages++;
  }
  ctx.logger.debug({ window: windowLabel(window), listed }, "window read");
}
