// Plain tables for people, JSON lines for programs.
import Table from "cli-table3";

export function printTable(
  rows: readonly Record<string, unknown>[],
  out: NodeJS.WritableStream = process.stdout,
): void {
  if (rows.length === 0) {
    out.write("(no rows)\n");
    return;
  }
  const head = Object.keys(rows[0] as object);
  const table = new Table({ head, style: { head: [], border: [] } });
  for (const row of rows) table.push(head.map((k) => cell(row[k])));
  out.write(`${table.toString()}\n`);
}

/**
 * What a listing command prints: with --json one JSON array (each item as `json` gives it) for
 * programs, else a table of `row`, or the line `none` when there is nothing to list.
 */
export function printListing<T>(
  items: readonly T[],
  json: boolean | undefined,
  form: {
    json: (item: T) => unknown;
    row: (item: T) => Record<string, unknown>;
    none: string;
  },
): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(items.map(form.json), null, 2)}\n`);
    return;
  }
  if (items.length === 0) {
    process.stdout.write(`${form.none}\n`);
    return;
  }
  printTable(items.map(form.row));
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint")
    return String(v);
  return JSON.stringify(v);
}

export function heading(
  text: string,
  out: NodeJS.WritableStream = process.stdout,
): void {
  out.write(`\n${text}\n`);
}
