// `sessionhouse query "SELECT …"`: SQL against the configured ClickHouse, with the configured
// database as the current one.
import {
  openWarehouse,
  outputFormat,
  userQueryRows,
  type Warehouse,
  writeUserQuery,
} from "../../warehouse/index.js";
import { UsageError } from "../../util/errors.js";
import { printTable, TABLE_FORMAT } from "../output.js";
import { configFrom, type GlobalOptions } from "../runtime.js";

/** `query SQL`: through the warehouse's read access. */
export async function runQueryCommand(
  globals: GlobalOptions,
  sql: string,
  o: { format: string },
): Promise<void> {
  const config = configFrom(globals, {}, { needsApi: false });
  const w = await openWarehouse(config, { access: "read" });
  try {
    await runQuery(w, sql, o.format);
  } finally {
    await w.close();
  }
}

/** Rows the table format shows; the others are counted, and the other formats print them. */
export const TABLE_ROWS_SHOWN = 1000;

export async function runQuery(
  w: Warehouse,
  sql: string,
  format: string,
  out: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  if (format.toLowerCase() !== TABLE_FORMAT) {
    const f = await outputFormat(w, format);
    if (!f.ttyFriendly && (out as { isTTY?: boolean }).isTTY === true)
      throw new UsageError(
        `${f.name} is a binary format: it is not written to a terminal`,
        {
          hint: `send it to a file or a pipe, e.g. query "…" --format ${f.name} > result.${f.name.toLowerCase()}`,
        },
      );
    await writeUserQuery(w, sql, f, out);
    return;
  }
  const { rows, total } = await userQueryRows(w, sql, TABLE_ROWS_SHOWN);
  printTable(rows, out);
  if (total > rows.length)
    out.write(
      `(${rows.length} of ${total} rows shown; --format TSVWithNames or CSVWithNames prints them all)\n`,
    );
}
