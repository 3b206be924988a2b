// Every insert goes through here: JSONEachRow, a deduplication token derived from the block's
// content (a retried block is never stored twice), and retries with backoff while ClickHouse is
// unreachable. The checkpoint code relies on "returned = stored".
import { createHash, randomBytes } from "node:crypto";
import { readdir, rm, writeFile } from "node:fs/promises";
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

/** Inserts lines that are already serialized. */
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

const settings = (token: string) => ({
  insert_deduplication_token: token,
  insert_deduplicate: 1 as const,
  // Raw records are spliced into rows as JSON objects and read verbatim into String columns.
  input_format_json_read_objects_as_strings: 1 as const,
  // Timestamps arrive as RFC 3339 with up to nine fractional digits.
  date_time_input_format: "best_effort" as const,
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
    await writeFile(file, body);
    try {
      await w.client.command({
        query: `INSERT INTO ${target} FROM INFILE '${file.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}' FORMAT ${lineFormat.format}`,
        clickhouse_settings: settings(token),
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
    clickhouse_settings: settings(token),
    ...(signal ? { abort_signal: signal } : {}),
  });
  result.stream.resume();
}
