// The writer of session rows: records in, validated and range-checked, passed on as received in
// bounded blocks, at most two in flight, the engine building the rows; records that cannot be
// stored and rows ClickHouse refuses become dead letters with their reason. A `mark()` resolves,
// and `drain()` returns, only when everything added before it is stored, so a checkpoint
// written after either never runs ahead of the data.
import { randomUUID } from "node:crypto";
import { parseSession, type Session } from "../api/schemas/session.js";
import { recordIdOf, type RawRecord } from "../sources/session-pages.js";
import {
  activeHolds,
  holdMatcher,
  insertBlock,
  rejectedSessionRow,
  retireSupersededKeys,
  RowBlock,
  SESSION_ROWS,
  SessionInputs,
  sessionTimesFit,
  sessionValueProblem,
  splitRows,
  Tables,
  type TakenRows,
} from "../warehouse/index.js";
import { storeRejected, type Rejected } from "./answer.js";
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

/** The last block of a drain is split in halves when each has at least this many rows. */
const MIN_HALF_ROWS = 10_000;

/** A block is sent at this size even before it has `insertBatchRows` rows (large records). */
const MAX_BLOCK_BYTES = 64 * 2 ** 20;

/** A mark's promise, settled with the block being filled when it is stored (see mark). */
interface Mark {
  resolve: () => void;
  reject: (err: unknown) => void;
}

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
  #dead: Rejected[] = [];
  /** Blocks sent, oldest first, until their outcome was awaited. */
  #inflight: Promise<void>[] = [];
  /** Blocks sent that are still being stored. */
  #storing = 0;
  /** Marks waiting for the block being filled (see mark). */
  #marks: Mark[] = [];
  /** Sessions an active legal hold names; undefined without holds (read once, at the first add). */
  #held: ((s: Session) => boolean) | undefined;
  #holdsRead = false;
  /** The earliest fetch time of the records added (epoch ms): where drain looks for new keys. */
  #firstFetchMs: number | undefined;
  rows = 0;
  deadLetters = 0;
  /** Keys of sessions retired by a tombstone at drain (see session-keys.ts). */
  keysRetired = 0;

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
    if (this.#firstFetchMs === undefined || fetchedAtMs < this.#firstFetchMs)
      this.#firstFetchMs = fetchedAtMs;
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

  #letter(r: RawRecord, reason: string): Rejected {
    return { recordId: recordIdOf(r), reason, raw: r.text };
  }

  /**
   * Waits for the oldest block in flight when MAX_IN_FLIGHT are (its failure surfaces here),
   * then sends the buffered rows. The `last` block of a drain is sent in two halves, each as
   * soon as an insert can start: nothing follows it to overlap with, and two halves are stored
   * side by side in about half the time one block takes alone.
   */
  async #startInsert(last = false): Promise<void> {
    await this.#slot();
    const rows = this.#block.rows;
    if (rows === 0) return;
    const block = this.#block.take();
    const marks = this.#marks;
    this.#marks = [];
    const parts =
      last && rows >= 2 * MIN_HALF_ROWS
        ? splitRows(block, Math.ceil(rows / 2))
        : [block];
    const sent: Promise<void>[] = [];
    try {
      for (const [i, part] of parts.entries()) {
        if (i > 0) await this.#slot();
        sent.push(this.#send(part));
      }
    } finally {
      // The block's marks settle with its parts; a part never sent fails them.
      const stored = Promise.all(sent).then(() => {
        if (sent.length < parts.length)
          throw new Error("a part of the block was not sent");
      });
      stored.then(
        () => {
          this.#block.reuse(block);
          for (const m of marks) m.resolve();
        },
        (err: unknown) => {
          for (const m of marks) m.reject(err);
        },
      );
    }
  }

  /** Waits until fewer than MAX_IN_FLIGHT blocks are in flight. */
  async #slot(): Promise<void> {
    while (this.#inflight.length >= MAX_IN_FLIGHT) await this.#inflight.shift();
  }

  /** Starts storing a block; the promise of its insert (also kept in #inflight). */
  #send(block: TakenRows): Promise<void> {
    const ctx = this.#ctx;
    const rows = block.starts.length;
    // Each block carries fetch times of its own, so no other block can have its content: a
    // token drawn once per block serves its retries as well as a digest would, without hashing
    // 25 MB on the hot path.
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
          recordId,
          reason: `refused by ClickHouse: ${message}`,
          raw,
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
    // block's storage takes the next block (see #startInsert); a failed one's is left to the
    // garbage collector, as a request that was given up may still be sending it.
    insert.then(
      () => {
        this.#storing--;
      },
      () => {
        this.#storing--;
      },
    );
    this.#inflight.push(insert);
    return insert;
  }

  /** After a failure: lets the blocks in flight finish, so nothing is closed under them. */
  async settle(): Promise<void> {
    const inflight = this.#inflight;
    this.#inflight = [];
    const marks = this.#marks;
    this.#marks = [];
    for (const m of marks)
      m.reject(
        new Error("the sessions writer stopped before this block was sent"),
      );
    await Promise.allSettled(inflight);
  }

  /**
   * A promise that every record added so far is stored: its row in `sessions` or its dead
   * letter. It does not send the block being filled; that block goes out when it is full or at
   * `drain()`, so a sync that marks where each window ends keeps filling whole blocks across
   * windows. Rejects when a block it waits for fails, or when the writer is settled after a
   * failure before that block was sent.
   */
  mark(): Promise<void> {
    const waits: Promise<void>[] = [...this.#inflight];
    if (this.#block.rows > 0)
      waits.push(
        new Promise<void>((resolve, reject) =>
          this.#marks.push({ resolve, reject }),
        ),
      );
    return Promise.all(waits).then(() => this.#storeDeadLetters());
  }

  /**
   * Inserts everything buffered and waits until it is stored; then retires the keys that the
   * sessions read by this writer are no longer stored under (one query over `session_keys`
   * for every record added, not one per record).
   */
  async drain(): Promise<void> {
    await this.#startInsert(true);
    while (this.#inflight.length > 0) await this.#inflight.shift();
    await this.#storeDeadLetters();
    await this.#retireSupersededKeys();
  }

  async #retireSupersededKeys(): Promise<void> {
    const since = this.#firstFetchMs;
    if (since === undefined) return;
    this.#firstFetchMs = undefined;
    const retired = await retireSupersededKeys(this.#ctx.warehouse, since);
    if (retired === 0) return;
    this.keysRetired += retired;
    this.#ctx.logger.info(
      { keys: retired },
      "sessions read under another start time than before: their earlier rows retired",
    );
  }

  async #storeDeadLetters(): Promise<void> {
    const dead = this.#dead;
    this.#dead = [];
    await storeRejected(this.#ctx, dead);
    this.deadLetters += dead.length;
  }
}

/** Pages one window into `sessions`; `onRecords` sees every batch of records as listed. */
