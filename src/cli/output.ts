// Plain tables for people, JSON lines for programs.
import Table from "cli-table3";

/** The query command's own format: a table of the first rows, for people. */
export const TABLE_FORMAT = "table";

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
  out.write(`${compact(table.toString())}\n`);
}

/**
 * The table with its rule under the head only, a row a line as a person scans a listing: the
 * table draws the same rule between every two rows (a cell of several lines still reads as one
 * row, its lines side by side).
 */
function compact(drawn: string): string {
  let rules = 0;
  return drawn
    .split("\n")
    .filter((line) => !line.startsWith("├") || rules++ === 0)
    .join("\n");
}

/** Listings longer than this begin with a line that says how many items follow. */
const SUMMARY_FROM = 20;

/** "1 window", "2 windows": a count with its noun in the right number. */
export function counted(
  n: number,
  singular: string,
  plural = `${singular}s`,
): string {
  return `${n} ${n === 1 ? singular : plural}`;
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
    /** What one item is called, for the count before a long listing ("window"). */
    noun?: string;
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
  if (items.length > SUMMARY_FROM)
    process.stdout.write(`${counted(items.length, form.noun ?? "row")}:\n`);
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
