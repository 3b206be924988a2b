// `sessionhouse query "SELECT …"`: SQL against the configured ClickHouse, with the configured
// database as the current one: one read on a read-only warehouse, or with --write any statement
// on the writer.
import {
  checkReadStatement,
  openWarehouse,
  outputFormat,
  userQueryRows,
  type Warehouse,
  writeUserQuery,
} from "../../warehouse/index.js";
import {
  RefusedError,
  SessionhouseError,
  UsageError,
} from "../../util/errors.js";
import { printTable, TABLE_FORMAT } from "../output.js";
import { configFrom, type GlobalOptions } from "../runtime.js";

/**
 * `query SQL`: one read, checked to be one (checkReadStatement) and run on a warehouse the engine
 * holds read-only; `query --write SQL`: any statement, on the writer (the owner's).
 */
export async function runQueryCommand(
  globals: GlobalOptions,
  sql: string,
  o: { format: string; write?: boolean },
): Promise<void> {
  const config = configFrom(globals, {}, { needsApi: false });
  const w = await openWarehouse(config, { access: o.write ? "write" : "read" });
  try {
    if (!o.write) await checkRead(w, sql);
    await runQuery(w, sql, o.format);
  } finally {
    await w.close();
  }
}

/** Refuses (exit 2) SQL that is not one read, saying how the owner runs it. */
async function checkRead(w: Warehouse, sql: string): Promise<void> {
  try {
    await checkReadStatement(w, sql);
  } catch (err) {
    if (!(err instanceof SessionhouseError && err.code === "NOT_A_READ"))
      throw err;
    throw new RefusedError("NOT_A_READ", err.message, {
      cause: err,
      hint: `${err.hint ?? ""}; a statement that writes runs only with query --write, which needs a user that may write (and, on the embedded engine, no running service)`,
    });
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
