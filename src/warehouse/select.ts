// Reading rows back: a SELECT with typed parameters, answered as JSON objects.
import type { Warehouse } from "./client.js";
import { SINGLE, storageTable } from "./cluster.js";

export async function selectRows<T>(
  w: Warehouse,
  query: string,
  params: Record<string, unknown> = {},
  settings: Record<string, string | number> = {},
): Promise<T[]> {
  const rs = await w.client.query({
    query,
    query_params: params,
    format: "JSONEachRow",
    clickhouse_settings: settings,
  });
  return rs.json<T>();
}

/** A query as it ran: its SQL with the database named, its parameters, the rows it answered. */
export interface ExecutedQuery {
  id: string;
  sql: string;
  params: Record<string, unknown>;
  rows: number;
}

/** Told of each query a read runs, for a record that names them (a report's manifest). */
export type QueryLog = (q: ExecutedQuery) => void;

/** A read that tells `log` (when given) what it ran, under `id`. */
export async function selectLogged<T>(
  w: Warehouse,
  read: { id: string; sql: string; params: Record<string, unknown> },
  log: QueryLog | undefined,
  settings: Record<string, string | number> = {},
): Promise<T[]> {
  const rows = await selectRows<T>(w, read.sql, read.params, settings);
  log?.({ ...read, rows: rows.length });
  return rows;
}

/** The `n` of a query answering one row `{ n }`; 0 when it answers none. */
export async function selectCount(
  w: Warehouse,
  query: string,
  params: Record<string, unknown> = {},
): Promise<number> {
  const [r] = await selectRows<{ n: string | number }>(w, query, params);
  return Number(r?.n ?? 0);
}

/**
 * The CREATE statement of the table that holds `table`'s rows on the node read (`<table>_local`
 * when sharded), as the engine shows it now: its TTL and settings included. "" when there is none.
 */
export async function storageTableDdl(
  w: Warehouse,
  table: string,
): Promise<string> {
  const [row] = await selectRows<{ q: string }>(
    w,
    "SELECT create_table_query AS q FROM system.tables WHERE database = {db:String} AND name = {t:String}",
    { db: w.database, t: storageTable(w.cluster ?? SINGLE, table) },
  );
  return row?.q ?? "";
}
