// `sessionhouse query "SELECT …"`: SQL against the configured ClickHouse, with the configured
// database as the current one.
import { Option, type Command } from "commander";
import { openWarehouse, type Warehouse } from "../../warehouse/client.js";
import { userQueryRows, writeUserQuery } from "../../warehouse/user-query.js";
import { printTable } from "../output.js";
import {
  configFrom,
  READS_THROUGH_SERVICE,
  type GlobalOptions,
} from "../runtime.js";

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

export function registerQueryCommand(
  program: Command,
  globals: () => GlobalOptions,
): void {
  program
    .command("query")
    .description(
      'run SQL against the configured ClickHouse, e.g. query "SELECT count() FROM sessions FINAL"',
    )
    .argument("<sql>", "the SQL statement")
    .addOption(
      new Option("--format <format>", "output format")
        .choices(QUERY_FORMATS)
        .default("table"),
    )
    .addHelpText(
      "after",
      READS_THROUGH_SERVICE +
        "\nThrough the service a query is read-only (readonly = 1) and capped in time and memory.",
    )
    .action(async (sql: string, o: { format: QueryFormat }) => {
      const config = configFrom(globals(), {}, { needsApi: false });
      const w = await openWarehouse(config, { access: "read" });
      try {
        await runQuery(w, sql, o.format);
      } finally {
        await w.close();
      }
    });
}

/** Rows the table format shows; the others are counted, and the other formats print them. */
export const TABLE_ROWS_SHOWN = 1000;

export async function runQuery(
  w: Warehouse,
  sql: string,
  format: QueryFormat,
  out: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  if (format !== "table") {
    await writeUserQuery(w, sql, format, out);
    return;
  }
  const { rows, total } = await userQueryRows(w, sql, TABLE_ROWS_SHOWN);
  printTable(rows, out);
  if (total > rows.length)
    out.write(
      `(${rows.length} of ${total} rows shown; --format TabSeparatedWithNames or CSVWithNames prints them all)\n`,
    );
}
