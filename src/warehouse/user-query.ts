// SQL a person typed (the query command), run with the configured database as the current one.
import { ClickHouseCode, clickHouseCode } from "./clickhouse-codes.js";
import { quoteIdent, type Warehouse } from "./client.js";
import { SinkError } from "./errors.js";

/** Output formats the query command offers besides its own table. */
export type UserQueryFormat =
  | "JSONEachRow"
  | "JSON"
  | "CSV"
  | "CSVWithNames"
  | "TabSeparated"
  | "TabSeparatedWithNames";

async function useDatabase(w: Warehouse): Promise<void> {
  // The embedded engine keeps session state, so USE makes the database current; a server
  // client already sends it with every query.
  if (w.kind === "embedded")
    await w.client.command({ query: `USE ${quoteIdent(w.database)}` });
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
  await useDatabase(w);
  const shown: ShownRows = { rows: [], total: 0 };
  try {
    const rs = await w.client.query({ query: sql, format: "JSONEachRow" });
    for await (const rows of rs.stream<Record<string, unknown>>()) {
      for (const row of rows) {
        if (shown.total < limit) shown.rows.push(row.json());
        shown.total++;
      }
    }
  } catch (err) {
    throw readOnlyThroughService(w, err);
  }
  return shown;
}

/**
 * Writes the result of `sql` in `format` to `out` as it arrives, waiting while `out` is full.
 * Stops reading, and cancels the statement, once `out` is destroyed (its reader went away).
 */
export async function writeUserQuery(
  w: Warehouse,
  sql: string,
  format: UserQueryFormat,
  out: NodeJS.WritableStream,
): Promise<void> {
  await useDatabase(w);
  try {
    const rs = await w.client.query({ query: sql, format });
    if (format === "JSON") {
      // One document with totals at its end: not a format that comes row by row.
      const text = await rs.text();
      out.write(text.endsWith("\n") || text === "" ? text : `${text}\n`);
      return;
    }
    // A batch of rows can be the whole result (the embedded engine answers in one piece): it is
    // written a slice at a time.
    for await (const rows of rs.stream()) {
      let text = "";
      for (const row of rows) {
        text += `${row.text}\n`;
        if (text.length < WRITE_SLICE) continue;
        if (!(await write(out, text))) return rs.close();
        text = "";
      }
      if (!(await write(out, text))) return rs.close();
    }
  } catch (err) {
    throw readOnlyThroughService(w, err);
  }
}

/** Characters of output handed to the stream at a time. */
const WRITE_SLICE = 1 << 20;

/** Writes `text`, waiting while `out` is full; false once `out` is destroyed. */
async function write(
  out: NodeJS.WritableStream,
  text: string,
): Promise<boolean> {
  if (isDestroyed(out)) return false;
  if (text !== "" && !out.write(text)) await drained(out);
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
 * A refusal of the running service's read access says why the statement cannot run here and
 * what to do; any other error is the engine's own.
 */
function readOnlyThroughService(w: Warehouse, err: unknown): unknown {
  if (!w.service || clickHouseCode(err) !== String(ClickHouseCode.READONLY))
    return err;
  return new SinkError(
    "READ_ONLY_THROUGH_SERVICE",
    `${(err as Error).message.trim()} (${w.location} is held by the running service, pid ${w.service.pid}, and read through its read-only access)`,
    {
      cause: err,
      hint: "stop the service (SIGTERM or Ctrl-C) to change the data directory, or leave the writing to it",
    },
  );
}
