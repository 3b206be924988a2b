// `sessionhouse query "SELECT …"`: SQL against the configured ClickHouse, with the configured
// database as the current one.
import type { Warehouse } from "../../warehouse/client.js";
import { userQueryRows, userQueryText } from "../../warehouse/user-query.js";
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
  if (format === "table") {
    printTable(await userQueryRows(w, sql), out);
    return;
  }
  const text = await userQueryText(w, sql, format);
  out.write(text.endsWith("\n") || text === "" ? text : `${text}\n`);
}
