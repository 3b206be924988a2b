// The sessions stream: page ListSessionsV2 window by window into the `sessions` table, then
// re-read sessions still open from before the lookback. The checkpoint moves only after the
// rows of every window up to it were inserted, so a crash at any instant resumes without loss.
import { randomUUID } from "node:crypto";
import { parseSession } from "../api/schemas/session.js";
import {
  describe,
  recordIdOf,
  sessionWindowBatches,
  type RawRecord,
} from "../sources/sessions.js";
import { floorSecond, planWindows, type Window } from "../sources/windows.js";
import {
  insertDeadLetters,
  type DeadLetter,
} from "../warehouse/bookkeeping.js";
import { insertBlock } from "../warehouse/insert.js";
import { LineBlock } from "../warehouse/line-block.js";
import {
  pushSessionLine,
  rejectedSessionLine,
  SESSION_LINE_COLUMNS,
  sessionValueProblem,
} from "../warehouse/sessions.js";
import { chTime } from "../warehouse/format.js";
import type { JobContext } from "./context.js";
import { refreshOpenSessions } from "./open-sessions.js";
import { advanceCheckpoint, backfillStreamOf, resolveRange } from "./range.js";
import { validationReason } from "./validation.js";

export const SESSIONS_STREAM = "sessions";

/**
 * Records parsed per step of a page's stream. Small steps keep what is live between two young
 * garbage collections small: at 2000 records a step, each step's parsed records survived a
 * collection and were copied: garbage collection took a quarter of the sync's JavaScript time
 * (CPU profile), and under a tenth at 250.
 */
const STREAM_BATCH_RECORDS = 250;
/** A block is sent at this size even before it has `insertBatchRows` rows (large records). */
const MAX_BLOCK_BYTES = 64 * 2 ** 20;
export const SESSIONS_JOB = "sessions";

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

export function backfillStream(fromMs: number, toMs: number): string {
  return backfillStreamOf(SESSIONS_STREAM, fromMs, toMs);
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
  const windows = planWindows(startMs, endMs, cfg.windowMs);
  const result: SessionSyncResult = {
    windows: windows.length,
    startMs,
    endMs,
    rows: 0,
    deadLetters: 0,
    openRefreshed: 0,
  };
  ctx.logger.info(
    {
      from: new Date(startMs).toISOString(),
      to: new Date(endMs).toISOString(),
      windows: windows.length,
    },
    "syncing sessions",
  );
  let done = 0;
  for (const window of windows) {
    const { rows, deadLetters } = await syncWindow(ctx, window);
    result.rows += rows;
    result.deadLetters += deadLetters;
    await advanceCheckpoint(ctx, range, window);
    done++;
    ctx.observer.onProgress?.({
      job: ctx.job,
      windowsDone: done,
      windowsTotal: windows.length,
      rows: result.rows,
      positionMs: window.endMs,
    });
  }
  if (!options.skipOpenRefresh)
    result.openRefreshed = await refreshOpenSessions(ctx, {
      beforeMs: startMs,
    });
  return result;
}

/**
 * Buffers rows and dead letters and inserts them in bounded blocks. One block may be in flight
 * while the next one is parsed (the engine works on its own threads), never more, so memory
 * stays bounded; `drain()` waits for everything before a checkpoint is written.
 */
export class SessionWriter {
  readonly #ctx: JobContext;
  readonly #block = new LineBlock();
  #dead: DeadLetter[] = [];
  #inflight: Promise<void> | undefined;
  rows = 0;
  deadLetters = 0;

  constructor(ctx: JobContext) {
    this.#ctx = ctx;
  }

  async add(records: readonly RawRecord[], fetchedAtMs: number): Promise<void> {
    const fetchedAt = chTime(fetchedAtMs);
    for (const r of records) {
      const reason = r.parseError;
      const parsed = reason === undefined ? parseSession(r.value) : undefined;
      if (parsed?.success) {
        const problem = sessionValueProblem(parsed.data, fetchedAtMs);
        if (problem !== undefined) {
          this.#dead.push(this.#letter(r, problem));
          continue;
        }
        pushSessionLine(
          this.#block,
          parsed.data,
          r.text,
          fetchedAtMs,
          fetchedAt,
        );
      } else {
        this.#dead.push(
          this.#letter(r, reason ?? validationReason(parsed?.error)),
        );
      }
    }
    if (
      this.#block.rows >= this.#ctx.config.sessions.insertBatchRows ||
      this.#block.bytes >= MAX_BLOCK_BYTES
    )
      await this.#startInsert();
  }

  #letter(r: RawRecord, reason: string): DeadLetter {
    return {
      job: this.#ctx.job,
      recordId: recordIdOf(r),
      reason,
      raw: r.text,
      runId: this.#ctx.runId,
    };
  }

  /** Waits for the block in flight (its failure surfaces here), then sends the buffered rows. */
  async #startInsert(): Promise<void> {
    await this.#inflight;
    this.#inflight = undefined;
    const rows = this.#block.rows;
    if (rows === 0) return;
    const ctx = this.#ctx;
    // Each block carries fetch times of its own, so no other block can have its content: a
    // token drawn once per block serves its retries as well as a digest would, without hashing
    // 25 MB on the hot path.
    const block = this.#block.take();
    const insert = insertBlock(
      ctx.warehouse,
      "sessions",
      block,
      `sessions:${randomUUID()}`,
      ctx.insert,
      { format: "JSONCompactEachRow", columns: SESSION_LINE_COLUMNS },
    ).then((rejected) => {
      // A refused row is a dead letter with the engine's words; the others are stored.
      for (const { index, message } of rejected) {
        const { recordId, raw } = rejectedSessionLine(block, index);
        this.#dead.push({
          job: ctx.job,
          recordId,
          reason: `refused by ClickHouse: ${message}`,
          raw,
          runId: ctx.runId,
        });
      }
      const stored = rows - rejected.length;
      this.rows += stored;
      ctx.counters.rowsInserted += stored;
      ctx.observer.onRows?.({ job: ctx.job, table: "sessions", rows: stored });
    });
    // Observed at the next await of #inflight; this only keeps Node from calling it unhandled.
    insert.catch(() => undefined);
    this.#inflight = insert;
  }

  /** After a failure: lets the block in flight finish, so nothing is closed under it. */
  async settle(): Promise<void> {
    await this.#inflight?.catch(() => undefined);
    this.#inflight = undefined;
  }

  /** Inserts everything buffered and waits until it is stored. */
  async drain(): Promise<void> {
    await this.#startInsert();
    await this.#inflight;
    this.#inflight = undefined;
    const ctx = this.#ctx;
    if (this.#dead.length > 0) {
      const dead = this.#dead;
      this.#dead = [];
      await insertDeadLetters(ctx.warehouse, dead, ctx.insert);
      this.deadLetters += dead.length;
      ctx.counters.deadLetters += dead.length;
      ctx.observer.onDeadLetters?.({ job: ctx.job, count: dead.length });
      ctx.logger.warn(
        {
          count: dead.length,
          reasons: [...new Set(dead.map((d) => d.reason))].slice(0, 3),
        },
        "records dead-lettered",
      );
    }
  }
}

/** Pages one window into `sessions`; `onRecords` sees every batch of records as listed. */
export async function syncWindow(
  ctx: JobContext,
  window: Window,
  onRecords?: (records: readonly RawRecord[]) => void,
): Promise<{ rows: number; deadLetters: number }> {
  const cfg = ctx.config.sessions;
  const writer = new SessionWriter(ctx);
  const batches = sessionWindowBatches(ctx.api, window, {
    pageSize: cfg.pageSize,
    // Records are handed over in small batches whatever the page size, so that what is held
    // between the socket and the insert buffer does not grow with the page (issue "Fast and flat").
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
  try {
    for await (const batch of batches) {
      ctx.signal.throwIfAborted();
      onRecords?.(batch.records);
      await writer.add(batch.records, Date.now());
      if (batch.endOfPage) ctx.counters.pages++;
    }
    await writer.drain();
  } finally {
    await writer.settle();
  }
  ctx.logger.debug(
    { window: describe(window), rows: writer.rows },
    "window synced",
  );
  return { rows: writer.rows, deadLetters: writer.deadLetters };
}
