// `sessionhouse query "SELECT …"`: SQL against the configured ClickHouse, with the configured
// database as the current one.
import { quoteIdent, type Warehouse } from "../../warehouse/client.js";
import { printTable } from "../output.js";

export const QUERY_FORMATS = [
  "table",
  "JSONEachRow",
  "JSON",
  "CSV",
  "CSVWithNames",
  "TabSeparated",
  "TabSeparatedWithNames",
] as const;
export type QueryFormat = (typeof QUERY_FORMATS)[number];

export async function runQuery(
  w: Warehouse,
  sql: string,
  format: QueryFormat,
  out: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  // The embedded engine keeps session state, so USE makes the database current; a server
  // client already sends it with every query.
  if (w.kind === "embedded")
    await w.client.command({ query: `USE ${quoteIdent(w.database)}` });
  if (format === "table") {
    const rs = await w.client.query({ query: sql, format: "JSONEachRow" });
    printTable(await rs.json<Record<string, unknown>>(), out);
    return;
  }
  const rs = await w.client.query({ query: sql, format });
  const text = await rs.text();
  out.write(text.endsWith("\n") || text === "" ? text : `${text}\n`);
}
