// Every insert goes through here: JSONEachRow or RowBinary, a deduplication token fixed
// per block (a digest of its content, or one the caller drew for it) so that a retried block is
// never stored twice, and retries with backoff while ClickHouse is unreachable. The checkpoint
// code relies on "returned = stored".
import { createHash } from "node:crypto";
import { rm } from "node:fs/promises";
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { configSchema } from "../config/index.js";
import type { Logger } from "../util/logger.js";
import { backoffMs } from "../util/backoff.js";
import { writeBlockFile } from "./block-files.js";
import { clickHouseCode, insertFailure } from "./clickhouse-codes.js";
import type { ClickHouseClient } from "@clickhouse/client";
import type { Warehouse } from "./client.js";
import { chTime } from "./format.js";
import { quoteIdent, quoteString } from "./sql.js";
import { clusterInsertSettings, SINGLE } from "./cluster.js";
import { SinkError } from "./errors.js";
import { rowsOf, type TakenRows } from "./row-block.js";

export interface InsertOptions {
  retries: number;
  signal?: AbortSignal | undefined;
  logger?: Logger | undefined;
  onRetry?: (() => void) | undefined;
  /** Base of the backoff between tries (default: api.retryBaseMs's, INSERT_BACKOFF). */
  retryBaseMs?: number;
}

/**
 * The backoff between two tries of an insert: the defaults the configuration schema gives the
 * API's retries (api.retryBaseMs, api.retryMaxMs), read from it rather than written again here.
 */
const INSERT_BACKOFF = {
  baseMs: configSchema.shape.api.shape.retryBaseMs.parse(undefined),
  maxMs: configSchema.shape.api.shape.retryMaxMs.parse(undefined),
};

export async function insertRows(
  w: Warehouse,
  table: string,
  rows: readonly object[],
  options: InsertOptions,
): Promise<void> {
  await insertLines(
    w,
    table,
    rows.map((r) => JSON.stringify(r)),
    options,
  );
}

let lastVersion = 0;

/**
 * Inserts rows of a table where the newest write of a row wins (FINAL keeps the greatest
 * `updated_at`): every row gets the `updated_at` of this write, later than that of any write
 * before it in this process, also of two writes in one millisecond.
 */
export async function insertVersions(
  w: Warehouse,
  table: string,
  rows: readonly object[],
  options: InsertOptions,
): Promise<void> {
  if (rows.length === 0) return;
  lastVersion = Math.max(Date.now(), lastVersion + 1);
  const updated_at = chTime(lastVersion);
  await insertRows(
    w,
    table,
    rows.map((r) => ({ ...r, updated_at })),
    options,
  );
}

/**
 * A writer of records to a table of versions (see insertVersions): each record becomes the row
 * `row` makes of it, and the newest write of a row wins.
 */
export function versionWriter<R>(
  table: string,
  row: (record: R) => object,
): (
  w: Warehouse,
  records: readonly R[],
  options: InsertOptions,
) => Promise<void> {
  return (w, records, options) =>
    insertVersions(w, table, records.map(row), options);
}

/**
 * How a body's rows are read: JSONEachRow objects, or RowBinary rows of an `input` structure
 * from which the engine builds the rows of `columns` with `select(source)` (`source` reads the
 * body: `input(…)` on a server, `file(…)` embedded).
 */
export type BodyFormat =
  | { format: "JSONEachRow" }
  | {
      format: "RowBinary";
      columns: readonly string[];
      input: string;
      select: (source: string) => string;
    };

/**
 * Inserts lines that are already serialized. The deduplication token is a digest of the block,
 * so the same block sent again — a retry, or another run — is stored once.
 */
export async function insertLines(
  w: Warehouse,
  table: string,
  lines: readonly string[],
  options: InsertOptions,
  bodyFormat: BodyFormat = { format: "JSONEachRow" },
): Promise<void> {
  if (lines.length === 0) return;
  const body = Buffer.from(lines.join("\n"));
  // A digest of the content, not a security measure: sha1 is the fastest one available here.
  const token = `${table}:${createHash("sha1").update(body).digest("base64url")}`;
  await insertBody(w, table, body, token, options, bodyFormat);
}

/**
 * Inserts a body of serialized rows under a deduplication token the caller chose once for the
 * block: every retry of it sends the same token, so a try that was stored although its answer
 * was lost is not stored again.
 */
export async function insertBody(
  w: Warehouse,
  table: string,
  body: Buffer,
  token: string,
  options: InsertOptions,
  bodyFormat: BodyFormat = { format: "JSONEachRow" },
): Promise<void> {
  if (body.length === 0) return;
  let attempt = 0;
  for (;;) {
    try {
      await send(w, table, bodyFormat, body, token, options.signal);
      return;
    } catch (err) {
      if (
        options.signal?.aborted ||
        insertFailure(err) !== "transient" ||
        attempt >= options.retries
      ) {
        throw new SinkError(
          "INSERT_FAILED",
          `insert into ${table} failed: ${(err as Error).message}`,
          {
            cause: err,
            hint:
              w.kind === "server"
                ? "check that ClickHouse at CLICKHOUSE_URL is up; the next run resumes"
                : undefined,
          },
        );
      }
      const waitMs = backoffMs(attempt, {
        baseMs: options.retryBaseMs ?? INSERT_BACKOFF.baseMs,
        maxMs: INSERT_BACKOFF.maxMs,
      });
      attempt++;
      options.onRetry?.();
      options.logger?.warn(
        {
          table,
          attempt,
          waitMs: Math.round(waitMs),
          err: (err as Error).message,
        },
        "insert failed, retrying",
      );
      await sleep(
        waitMs,
        undefined,
        options.signal ? { signal: options.signal } : undefined,
      );
    }
  }
}

/** A row ClickHouse refused, by its index in the block, with the engine's message. */
export interface RejectedRow {
  index: number;
  message: string;
}

/** Inserts one block may take to isolate the rows ClickHouse refuses. */
export const MAX_BISECT_INSERTS = 128;

/**
 * Inserts a block; when ClickHouse refuses some of its rows (a code that blames the data, not
 * the statement), splits it in halves until the refused rows are found, stores the rest and
 * returns the refused ones. Each part carries a token of its own derived from the block's
 * (`<token>:<first>-<end>`), so a part retried after a lost answer is stored once. Past
 * MAX_BISECT_INSERTS inserts the block fails as a whole.
 */
export async function insertBlock(
  w: Warehouse,
  table: string,
  block: TakenRows,
  token: string,
  options: InsertOptions,
  bodyFormat: BodyFormat = { format: "JSONEachRow" },
): Promise<RejectedRow[]> {
  const rejected: RejectedRow[] = [];
  let inserts = 0;
  const attempt = async (from: number, to: number): Promise<void> => {
    inserts++;
    const whole = from === 0 && to === block.starts.length;
    try {
      await insertBody(
        w,
        table,
        whole ? block.body : rowsOf(block, from, to),
        whole ? token : `${token}:${from}-${to}`,
        options,
        bodyFormat,
      );
      return;
    } catch (err) {
      const cause = err instanceof SinkError ? err.cause : err;
      if (insertFailure(cause) !== "rows") throw err;
      if (to - from === 1) {
        rejected.push({ index: from, message: engineMessage(cause) });
        return;
      }
      if (inserts + 2 > MAX_BISECT_INSERTS) {
        throw new SinkError(
          "INSERT_FAILED",
          `insert into ${table} failed: ClickHouse refuses rows of the block and ${MAX_BISECT_INSERTS} inserts did not isolate them (${rejected.length} found so far): ${engineMessage(cause)}`,
          {
            cause,
            hint: "nothing of the block was checkpointed; the next run retries it",
          },
        );
      }
    }
    const mid = from + Math.ceil((to - from) / 2);
    await attempt(from, mid);
    await attempt(mid, to);
  };
  if (block.starts.length > 0) await attempt(0, block.starts.length);
  return rejected.sort((a, b) => a.index - b.index);
}

/** The engine's own words, without the client's wrapping; bounded for a dead letter. */
function engineMessage(err: unknown): string {
  const text = (err instanceof Error ? err.message : String(err)).trim();
  const code = clickHouseCode(err);
  const message =
    code === undefined || text.startsWith("Code:")
      ? text
      : `Code: ${code}. ${text}`;
  return message.length > 2000 ? `${message.slice(0, 2000)}…` : message;
}

/**
 * Settings every insert sets, whatever the server's profile says, so that an insert that
 * returns has stored its rows (no asynchronous buffer) and a block sent again under the same
 * token is stored once. openWarehouse refuses a server that does not let them be set.
 */
export const PINNED_INSERT_SETTINGS = {
  async_insert: 0,
  insert_deduplicate: 1,
} as const;

const settings = (w: Warehouse, table: string, token: string) => ({
  ...PINNED_INSERT_SETTINGS,
  ...clusterInsertSettings(w.cluster ?? SINGLE, table),
  insert_deduplication_token: token,
  // A JSON object given for a String column is stored as its text.
  input_format_json_read_objects_as_strings: 1 as const,
  // Timestamps arrive as RFC 3339 with up to nine fractional digits.
  date_time_input_format: "best_effort" as const,
  // Embedded, the engine shares the cores with the sync's own JavaScript: parsing a block on
  // one thread costs about a third less CPU than splitting it over several (measured on
  // 117,779 session rows: 1.8 against 2.7 CPU-seconds), and the block in flight overlaps the
  // next one's preparation anyway.
  ...(w.kind === "embedded"
    ? { input_format_parallel_parsing: 0 as const }
    : {}),
});

/** Inserts under way on each of a warehouse's insert clients. */
const inserting = new WeakMap<ClickHouseClient, number>();

/** The insert client with the fewest inserts under way (see Warehouse.insertClients). */
function takeInsertClient(w: Warehouse): ClickHouseClient {
  let best = w.client;
  let least = Infinity;
  for (const c of w.insertClients ?? [w.client]) {
    const n = inserting.get(c) ?? 0;
    if (n < least) {
      best = c;
      least = n;
    }
  }
  inserting.set(best, least + 1);
  return best;
}

function giveBackInsertClient(c: ClickHouseClient): void {
  inserting.set(c, (inserting.get(c) ?? 1) - 1);
}

/**
 * The embedded engine parses a body passed inline in the query text about five times slower
 * than a file it reads itself, so there the block goes through a
 * temporary file; a server gets it as the HTTP request body.
 */
async function send(
  w: Warehouse,
  table: string,
  bodyFormat: BodyFormat,
  body: Buffer,
  token: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  const columns =
    "columns" in bodyFormat
      ? ` (${bodyFormat.columns.map(quoteIdent).join(", ")})`
      : "";
  const target = `${quoteIdent(w.database)}.${quoteIdent(table)}${columns}`;
  const format = bodyFormat.format;
  const request = {
    clickhouse_settings: settings(w, table, token),
    ...(signal ? { abort_signal: signal } : {}),
  };
  if (w.kind === "embedded") {
    const file = writeBlockFile(body);
    const client = takeInsertClient(w);
    try {
      await client.command({
        query:
          "input" in bodyFormat
            ? `INSERT INTO ${target} ${bodyFormat.select(`file(${quoteString(file)}, '${format}', ${quoteString(bodyFormat.input)})`)}`
            : `INSERT INTO ${target} FROM INFILE ${quoteString(file)} FORMAT ${format}`,
        ...request,
      });
    } finally {
      giveBackInsertClient(client);
      await rm(file, { force: true });
    }
    return;
  }
  // exec with a raw body: the rows are already serialized, so the client must not encode them
  // again.
  const result = await w.client.exec({
    query:
      "input" in bodyFormat
        ? `INSERT INTO ${target} ${bodyFormat.select(`input(${quoteString(bodyFormat.input)})`)} FORMAT ${format}`
        : `INSERT INTO ${target} FORMAT ${format}`,
    values: Readable.from([body], { objectMode: false }),
    ...request,
  });
  result.stream.resume();
}
