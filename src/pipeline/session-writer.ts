// The writer of session rows: records in, validated and range-checked, passed on as received in
// bounded blocks with at most one in flight, the engine building the rows; records that cannot be stored and rows ClickHouse refuses
// become dead letters with their reason. `drain()` returns only when everything is stored, so
// a checkpoint written after it never runs ahead of the data.
import { randomUUID } from "node:crypto";
import { parseSession, type Session } from "../api/schemas/session.js";
import { recordIdOf, type RawRecord } from "../sources/sessions.js";
import {
  insertDeadLetters,
  type DeadLetter,
} from "../warehouse/bookkeeping.js";
import { activeHolds, holdMatcher } from "../warehouse/holds.js";
import { insertBlock } from "../warehouse/insert.js";
import { RowBlock } from "../warehouse/row-block.js";
import { Tables } from "../warehouse/tables.js";
import {
  rejectedSessionRow,
  SESSION_ROWS,
  SessionInputs,
  sessionTimesFit,
  sessionValueProblem,
} from "../warehouse/sessions.js";
import type { JobContext } from "./context.js";
import { validationReason } from "./validation.js";

/**
 * While no block is in flight, the engine is idle: a block is sent once it has this share of
 * `insertBatchRows`, so that the engine starts early on the first rows of a page instead of
 * waiting for a whole block to be read (a tenth of every page's time at 100000 a page).
 */
const IDLE_BLOCK_SHARE = 0.2;

/**
 * Blocks sent and not yet stored, at most. The engine stores a block mostly on one thread; with
 * a second one in flight it keeps both cores busy while the exporter waits for a block to be
 * stored.
 */
const MAX_IN_FLIGHT = 2;

/** A block is sent at this size even before it has `insertBatchRows` rows (large records). */
const MAX_BLOCK_BYTES = 64 * 2 ** 20;

/** What the writer needs of a record, or why it cannot be stored. */
type RecordRead =
  { brandMember: string | undefined; held: boolean } | { reason: string };

function readRecord(
  r: RawRecord,
  held: ((s: Session) => boolean) | undefined,
  fetchedAtMs: number,
): RecordRead {
  const scan = r.scan;
  if (scan !== undefined && "ambiguous" in scan)
    return {
      reason: `${scan.ambiguous}: the record names this member twice, and JSON readers disagree on which one counts`,
    };
  // The common case: the scan accepted the record, its times fit, and no legal hold has to be
  // matched against it. It is never parsed in JavaScript; the engine reads it.
  if (
    scan !== undefined &&
    held === undefined &&
    sessionTimesFit(scan.startMs, scan.endMs, fetchedAtMs)
  )
    return { brandMember: scan.brandMember, held: false };
  // Anything else is parsed, checked by the schema, and its values named when they do not fit.
  if (r.parseError !== undefined) return { reason: r.parseError };
  const parsed = parseSession(r.value);
  if (!parsed.success) return { reason: validationReason(parsed.error) };
  const s = parsed.data;
  const reason = sessionValueProblem(s, fetchedAtMs);
  if (reason !== undefined) return { reason };
  return {
    brandMember: s.user.brandMember,
    held: held !== undefined && held(s),
  };
}

/**
 * Buffers rows and dead letters and inserts them in bounded blocks. Up to MAX_IN_FLIGHT blocks
 * may be in flight while the next one is read (the engine works on its own threads), never
 * more, so memory stays bounded; `drain()` waits for everything before a checkpoint is written.
 */
export class SessionWriter {
  readonly #ctx: JobContext;
  readonly #block = new RowBlock(1 << 20, MAX_IN_FLIGHT);
  #dead: DeadLetter[] = [];
  /** Blocks sent, oldest first, until their outcome was awaited. */
  #inflight: Promise<void>[] = [];
  /** Blocks sent that are still being stored. */
  #storing = 0;
  /** Sessions an active legal hold names; undefined without holds (read once, at the first add). */
  #held: ((s: Session) => boolean) | undefined;
  #holdsRead = false;
  rows = 0;
  deadLetters = 0;

  constructor(ctx: JobContext) {
    this.#ctx = ctx;
  }

  async add(records: readonly RawRecord[], fetchedAtMs: number): Promise<void> {
    if (!this.#holdsRead) {
      this.#held = holdMatcher(
        await activeHolds(this.#ctx.warehouse, Date.now()),
      );
      this.#holdsRead = true;
    }
    const held = this.#held;
    const inputs = new SessionInputs(fetchedAtMs);
    for (const r of records) {
      const read = readRecord(r, held, fetchedAtMs);
      if ("reason" in read) {
        this.#dead.push(this.#letter(r, read.reason));
        continue;
      }
      inputs.push(this.#block, r.bytes ?? r.text, read.held, read.brandMember);
    }
    const full = this.#ctx.config.sessions.insertBatchRows;
    if (
      this.#block.rows >= full ||
      (this.#storing === 0 && this.#block.rows >= full * IDLE_BLOCK_SHARE) ||
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

  /**
   * Waits for the oldest block in flight when MAX_IN_FLIGHT are (its failure surfaces here),
   * then sends the buffered rows.
   */
  async #startInsert(): Promise<void> {
    while (this.#inflight.length >= MAX_IN_FLIGHT) await this.#inflight.shift();
    const rows = this.#block.rows;
    if (rows === 0) return;
    const ctx = this.#ctx;
    // Each block carries fetch times of its own, so no other block can have its content: a
    // token drawn once per block serves its retries as well as a digest would, without hashing
    // 25 MB on the hot path.
    const block = this.#block.take();
    const insert = insertBlock(
      ctx.warehouse,
      Tables.sessions,
      block,
      `sessions:${randomUUID()}`,
      ctx.insert,
      SESSION_ROWS,
    ).then((rejected) => {
      // A refused row is a dead letter with the engine's words; the others are stored.
      for (const { index, message } of rejected) {
        const { recordId, raw } = rejectedSessionRow(block, index);
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
      ctx.observer.onRows?.({
        job: ctx.job,
        table: Tables.sessions,
        rows: stored,
      });
    });
    this.#storing++;
    // Observed when it is awaited; this only keeps Node from calling it unhandled. A stored
    // block's storage takes the next block; a failed one's is left to the garbage collector, as
    // a request that was given up may still be sending it.
    insert.then(
      () => {
        this.#storing--;
        this.#block.reuse(block);
      },
      () => {
        this.#storing--;
      },
    );
    this.#inflight.push(insert);
  }

  /** After a failure: lets the blocks in flight finish, so nothing is closed under them. */
  async settle(): Promise<void> {
    const inflight = this.#inflight;
    this.#inflight = [];
    await Promise.allSettled(inflight);
  }

  /** Inserts everything buffered and waits until it is stored. */
  async drain(): Promise<void> {
    await this.#startInsert();
    while (this.#inflight.length > 0) await this.#inflight.shift();
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
