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

export async function userQueryRows(
  w: Warehouse,
  sql: string,
): Promise<Record<string, unknown>[]> {
  await useDatabase(w);
  try {
    const rs = await w.client.query({ query: sql, format: "JSONEachRow" });
    return await rs.json<Record<string, unknown>>();
  } catch (err) {
    throw readOnlyThroughService(w, err);
  }
}

export async function userQueryText(
  w: Warehouse,
  sql: string,
  format: UserQueryFormat,
): Promise<string> {
  await useDatabase(w);
  try {
    const rs = await w.client.query({ query: sql, format });
    return await rs.text();
  } catch (err) {
    throw readOnlyThroughService(w, err);
  }
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
