// One CSV per report table (RFC 4180: comma, CRLF, quotes doubled). A text cell starting with
// = + - @ or a tab is prefixed with ' so a spreadsheet shows it instead of running it as a
// formula (query text and user names come from outside).
import type { Cell, Column, ReportTable } from "./model.js";

/** The header line: the columns' keys. */
export function csvHeader(columns: readonly Column[]): string {
  return `${columns.map((c) => quote(c.key)).join(",")}\r\n`;
}

/** One row's line. */
export function csvLine(
  columns: readonly Column[],
  row: Readonly<Record<string, Cell>>,
): string {
  return `${columns
    .map((c) => {
      const v = row[c.key];
      if (typeof v === "number") return String(v);
      if (typeof v === "boolean") return v ? "true" : "false";
      return quote(/^[=+\-@\t\r]/.test(v ?? "") ? `'${v ?? ""}` : (v ?? ""));
    })
    .join(",")}\r\n`;
}

/** A whole CSV of rows held in memory (a few: a report's tables are streamed, see table-rows.ts). */
export function tableCsv(t: Pick<ReportTable, "columns" | "rows">): string {
  return (
    csvHeader(t.columns) + t.rows.map((r) => csvLine(t.columns, r)).join("")
  );
}

function quote(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}
