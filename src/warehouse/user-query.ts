// SQL a person typed (the query command), run with the configured database as the current one.
import { ClickHouseCode, clickHouseCode } from "./clickhouse-codes.js";
import type { Warehouse } from "./client.js";
import { quoteIdent } from "./sql.js";
import { SinkError } from "./errors.js";
import { selectRows } from "./select.js";
import { UsageError } from "../util/errors.js";
import { resultBlocks, resultLines } from "./result-stream.js";

/** A ClickHouse output format, as the engine names it. */
export interface OutputFormat {
  name: string;
  /** The engine says it displays fine in a terminal (text, not binary). */
  ttyFriendly: boolean;
}

/**
 * The output format named `name` (any spelling of its case), as the engine knows it; a name the
 * engine has no output format for is an error naming it and where the list is.
 */
export async function outputFormat(
  w: Warehouse,
  name: string,
): Promise<OutputFormat> {
  const found = await selectRows<{ name: string; tty: number }>(
    w,
    `SELECT name, is_tty_friendly AS tty FROM system.formats
     WHERE is_output AND lower(name) = lower({name:String})
     ORDER BY name = {name:String} DESC, name LIMIT 1`,
    { name },
  );
  const f = found[0];
  if (f === undefined)
    throw new UsageError(
      `"${name}" is not an output format of this ClickHouse`,
      {
        hint: "use table (the default), or a format of SELECT name FROM system.formats WHERE is_output, e.g. TSV, CSVWithNames, JSONEachRow, Pretty, Markdown, Parquet",
      },
    );
  return { name: f.name, ttyFriendly: Number(f.tty) === 1 };
}

async function useDatabase(w: Warehouse): Promise<void> {
  // The embedded engine keeps session state, so USE makes the database current; a server
  // client already sends it with every query.
  if (w.kind !== "embedded") return;
  try {
    await w.client.command({ query: `USE ${quoteIdent(w.database)}` });
  } catch (err) {
    if (clickHouseCode(err) !== String(ClickHouseCode.UNKNOWN_DATABASE))
      throw userQueryError(w, err, "");
    throw new SinkError(
      "NO_DATABASE",
      `the database ${w.database} does not exist in ${w.location}: nothing was migrated or synced there`,
      {
        cause: err,
        hint: "run sessionhouse migrate (or sync, demo) first, or set SESSIONHOUSE_DATA_DIR and CLICKHOUSE_DATABASE to where the data is",
      },
    );
  }
}

/** The first rows of a result for people, and how many rows it had in all. */
export interface ShownRows {
  rows: Record<string, unknown>[];
  total: number;
}

/**
 * The first `limit` rows of `sql`, read as they arrive; the rest are counted, not kept, so a
 * statement that returns millions of rows costs the memory of `limit`.
 */
export async function userQueryRows(
  w: Warehouse,
  sql: string,
  limit: number,
): Promise<ShownRows> {
  const shown: ShownRows = { rows: [], total: 0 };
  try {
    await useDatabase(w);
    // Only the rows shown are parsed; the others are counted.
    for await (const line of resultLines(
      w,
      sql,
      new AbortController().signal,
    )) {
      if (shown.total < limit)
        shown.rows.push(JSON.parse(line) as Record<string, unknown>);
      shown.total++;
    }
  } catch (err) {
    throw userQueryError(w, err, "JSONEachRow");
  }
  return shown;
}

/**
 * Writes the result of `sql` in `format` to `out` as it arrives, waiting while `out` is full,
 * so what is held is a block of the result, not the result. Stops reading, and cancels the
 * statement, once `out` is destroyed (its reader went away).
 */
export async function writeUserQuery(
  w: Warehouse,
  sql: string,
  format: OutputFormat,
  out: NodeJS.WritableStream,
): Promise<void> {
  const abort = new AbortController();
  try {
    await useDatabase(w);
    // A block can be large (the engine's blocks hold up to a million rows): it is written a
    // slice at a time.
    for await (const block of resultBlocks(w, sql, format.name, abort.signal)) {
      for (let at = 0; at < block.length; at += WRITE_SLICE) {
        if (!(await writeWaiting(out, block.subarray(at, at + WRITE_SLICE)))) {
          abort.abort();
          return;
        }
      }
    }
  } catch (err) {
    if (abort.signal.aborted) return;
    throw userQueryError(w, err, format.name);
  }
}

/** Characters of output handed to the stream at a time. */
const WRITE_SLICE = 1 << 20;

/** Writes `bytes`, waiting while `out` is full; false once `out` is destroyed. */
export async function writeWaiting(
  out: NodeJS.WritableStream,
  bytes: Uint8Array,
): Promise<boolean> {
  if (isDestroyed(out)) return false;
  if (bytes.length > 0 && !out.write(bytes)) await drained(out);
  return !isDestroyed(out);
}

function isDestroyed(out: NodeJS.WritableStream): boolean {
  return (out as { destroyed?: boolean }).destroyed === true;
}

/** Resolves when `out` takes writes again, or is closed. */
function drained(out: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off("drain", done);
      out.off("close", done);
      resolve();
    };
    out.on("drain", done);
    out.on("close", done);
  });
}

/**
 * What a statement the engine refused says: the engine's own message (without the FORMAT clause
 * the command added), and, where the service holds the data directory and the statement would
 * write, that reads go through its read-only access.
 */
function userQueryError(w: Warehouse, err: unknown, format: string): unknown {
  const code = clickHouseCode(err);
  if (code === undefined) return err;
  const said = (err as Error).message
    .replace(/^Code: \d+\. DB::Exception: /, "")
    .replace(`\nFORMAT ${format}`, "")
    .trim();
  if (w.service && code === String(ClickHouseCode.READONLY))
    return new SinkError(
      "READ_ONLY_THROUGH_SERVICE",
      `${said} (${w.location} is held by the running service, pid ${w.service.pid}, and read through its read-only access)`,
      {
        cause: err,
        hint: "stop the service (SIGTERM or Ctrl-C) to change the data directory, or leave the writing to it",
      },
    );
  if (w.readOnly && code === String(ClickHouseCode.READONLY))
    return new SinkError(
      "QUERY_REFUSED",
      `ClickHouse refused the statement (code ${code}): ${said} (this query runs read-only)`,
      {
        cause: err,
        hint: "query runs one read, read-only; a statement that writes or changes a setting runs only with query --write, which needs a user that may write",
      },
    );
  return new SinkError(
    "QUERY_REFUSED",
    `ClickHouse refused the statement (code ${code}): ${said}`,
    {
      cause: err,
      hint: "SHOW TABLES lists the tables and DESCRIBE TABLE <name> their columns; docs/tables.md says what each holds",
    },
  );
}
