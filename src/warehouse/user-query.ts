// SQL a person typed (the query command), run with the configured database as the current one.
import { quoteIdent, type Warehouse } from "./client.js";

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
  const rs = await w.client.query({ query: sql, format: "JSONEachRow" });
  return rs.json<Record<string, unknown>>();
}

export async function userQueryText(
  w: Warehouse,
  sql: string,
  format: UserQueryFormat,
): Promise<string> {
  await useDatabase(w);
  const rs = await w.client.query({ query: sql, format });
  return rs.text();
}
