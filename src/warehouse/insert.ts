// Every insert goes through here: JSONEachRow or JSONCompactEachRow, a deduplication token fixed
// per block (a digest of its content, or one the caller drew for it) so that a retried block is
// never stored twice, and retries with backoff while ClickHouse is unreachable. The checkpoint
// code relies on "returned = stored".
import { createHash, randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../util/logger.js";
import { quoteIdent, type Warehouse } from "./client.js";
import { SinkError } from "./errors.js";

export interface InsertOptions {
  retries: number;
  signal?: AbortSignal | undefined;
  logger?: Logger | undefined;
  onRetry?: (() => void) | undefined;
  /** Base of the backoff between tries (default 500 ms). */
  retryBaseMs?: number;
}

/** Errors from ClickHouse that another try cannot fix (bad SQL, bad data, unknown table). */
const FINAL_CLICKHOUSE_CODES = new Set([
  "27",
  "26",
  "53",
  "60",
  "62",
  "16",
  "47",
  "117",
  "72",
  "6",
  "41",
]);

export function isRetryableInsertError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return !(typeof code === "string" && FINAL_CLICKHOUSE_CODES.has(code));
}

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

/** How serialized lines are read: JSONEachRow objects, or JSONCompactEachRow arrays of `columns`. */
export type LineFormat =
  | { format: "JSONEachRow" }
  | { format: "JSONCompactEachRow"; columns: readonly string[] };

/**
 * Inserts lines that are already serialized. The deduplication token is a digest of the block,
 * so the same block sent again — a retry, or another run — is stored once.
 */
export async function insertLines(
  w: Warehouse,
  table: string,
  lines: readonly string[],
  options: InsertOptions,
  lineFormat: LineFormat = { format: "JSONEachRow" },
): Promise<void> {
  if (lines.length === 0) return;
  const body = Buffer.from(lines.join("\n"));
  // A digest of the content, not a security measure: sha1 is the fastest one available here.
  const token = `${table}:${createHash("sha1").update(body).digest("base64url")}`;
  await insertBody(w, table, body, token, options, lineFormat);
}

/**
 * Serialized lines gathered straight into one byte buffer, the body of the next insert. Each
 * line is encoded as it comes, so its string dies young: no array of 50000 live lines for the
 * garbage collector to copy between generations, no join and no second encoding of the block
 * (issue "Fast and flat": that churn was a third of the sessions sync's JavaScript time).
 */
export class LineBlock {
  #buf: Buffer;
  #len = 0;
  #rows = 0;

  constructor(capacity = 1 << 20) {
    this.#buf = Buffer.allocUnsafe(capacity);
  }

  get bytes(): number {
    return this.#len;
  }

  get rows(): number {
    return this.#rows;
  }

  push(line: string): void {
    // UTF-8 takes at most three bytes per UTF-16 code unit.
    const need = this.#len + 1 + 3 * line.length;
    if (need > this.#buf.length) this.#grow(need);
    if (this.#rows > 0) this.#buf[this.#len++] = 0x0a;
    this.#len += this.#buf.write(line, this.#len);
    this.#rows++;
  }

  /**
   * Pushes the JSON array `head` with `last` appended as its final element, the same bytes as
   * `${head.slice(0, -1)},${last}]` but without building that string.
   */
  pushArrayWith(head: string, last: string): void {
    const need = this.#len + 3 + 3 * (head.length + last.length);
    if (need > this.#buf.length) this.#grow(need);
    const buf = this.#buf;
    if (this.#rows > 0) buf[this.#len++] = 0x0a;
    this.#len += buf.write(head, this.#len);
    buf[this.#len - 1] = 0x2c; // the head's closing bracket becomes a comma
    this.#len += buf.write(last, this.#len);
    buf[this.#len++] = 0x5d;
    this.#rows++;
  }

  #grow(need: number): void {
    const next = Buffer.allocUnsafe(Math.max(need, 2 * this.#buf.length));
    this.#buf.copy(next, 0, 0, this.#len);
    this.#buf = next;
  }

  /** The block's bytes; the block starts over empty, sized for one like it. */
  take(): Buffer {
    const body = this.#buf.subarray(0, this.#len);
    this.#buf = Buffer.allocUnsafe(this.#buf.length);
    this.#len = 0;
    this.#rows = 0;
    return body;
  }
}

/**
 * Inserts a body of serialized lines under a deduplication token the caller chose once for the
 * block: every retry of it sends the same token, so a try that was stored although its answer
 * was lost is not stored again.
 */
export async function insertBody(
  w: Warehouse,
  table: string,
  body: Buffer,
  token: string,
  options: InsertOptions,
  lineFormat: LineFormat = { format: "JSONEachRow" },
): Promise<void> {
  if (body.length === 0) return;
  let attempt = 0;
  for (;;) {
    try {
      await send(w, table, lineFormat, body, token, options.signal);
      return;
    } catch (err) {
      if (
        options.signal?.aborted ||
        !isRetryableInsertError(err) ||
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
      const waitMs =
        Math.min(30_000, (options.retryBaseMs ?? 500) * 2 ** attempt) *
        (0.5 + Math.random() / 2);
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

/** Prefix of the temporary block files; the writer's pid follows, so stale ones can be told. */
export const INSERT_FILE_PREFIX = "sessionhouse-insert-";

/**
 * Removes block files left by a process that was killed mid-insert (SIGKILL runs no cleanup).
 * A file is left alone while the process that wrote it still runs.
 */
export async function removeStaleInsertFiles(dir = tmpdir()): Promise<number> {
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const m = new RegExp(
      `^${INSERT_FILE_PREFIX}(\\d+)-[0-9a-f]+\\.jsonl$`,
    ).exec(name);
    if (!m || isAlive(Number(m[1]))) continue;
    await rm(join(dir, name), { force: true });
    removed++;
  }
  return removed;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

const settings = (w: Warehouse, token: string) => ({
  insert_deduplication_token: token,
  insert_deduplicate: 1 as const,
  // Raw records are spliced into rows as JSON objects and read verbatim into String columns.
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

/**
 * The embedded engine parses a body passed inline in the query text about five times slower
 * than a file it reads itself (issue "Fast and flat"), so there the block goes through a
 * temporary file; a server gets it as the HTTP request body.
 */
async function send(
  w: Warehouse,
  table: string,
  lineFormat: LineFormat,
  body: Buffer,
  token: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  const columns =
    lineFormat.format === "JSONCompactEachRow"
      ? ` (${lineFormat.columns.map(quoteIdent).join(", ")})`
      : "";
  const target = `${quoteIdent(w.database)}.${quoteIdent(table)}${columns}`;
  if (w.kind === "embedded") {
    const file = join(
      tmpdir(),
      `${INSERT_FILE_PREFIX}${process.pid}-${randomBytes(6).toString("hex")}.jsonl`,
    );
    // Written synchronously (a few milliseconds for a block, into the page cache): an async
    // write finishes in a callback that waits for the event loop, and while the sync parses
    // pages already buffered the loop does not turn, so the insert would start only after it.
    writeFileSync(file, body);
    try {
      await w.client.command({
        query: `INSERT INTO ${target} FROM INFILE '${file.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}' FORMAT ${lineFormat.format}`,
        clickhouse_settings: settings(w, token),
        ...(signal ? { abort_signal: signal } : {}),
      });
    } finally {
      await rm(file, { force: true });
    }
    return;
  }
  // exec with a raw body: the JSON lines are already built (and hashed for the token), so the
  // client must not encode them again.
  const result = await w.client.exec({
    query: `INSERT INTO ${target} FORMAT ${lineFormat.format}`,
    values: Readable.from([body], { objectMode: false }),
    clickhouse_settings: settings(w, token),
    ...(signal ? { abort_signal: signal } : {}),
  });
  result.stream.resume();
}
