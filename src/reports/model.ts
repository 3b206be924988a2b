// A compliance report as data: what every output (HTML, PDF, CSV, JSON) is rendered from. Built
// by a kind (src/reports/kinds), rendered by html.ts and csv.ts, written by write.ts.
import type { ReportKind } from "../config/index.js";
import { FatalError } from "../util/errors.js";
import { type Row, text } from "../warehouse/index.js";

export type Cell = string | number | boolean;

export interface Column {
  key: string;
  label: string;
  kind: "text" | "number" | "bool";
}

/**
 * Rows of a table held in report.html, report.pdf and report.json, in the table's order; its
 * CSV holds every row (streamed to the file as read, never held whole).
 */
export const TOP_ROWS = 500;

export interface ReportTable {
  /** File name of its CSV (without .csv) and its anchor in the HTML. */
  id: string;
  title: string;
  /** What the rows are and where they come from, one sentence or two. */
  note: string;
  columns: Column[];
  /** The first TOP_ROWS rows in the table's order (all of them when there are no more). */
  rows: Record<string, Cell>[];
  /** How many rows the table has in all. */
  total: number;
  /** The CSV file holding every row, when CSV files were written. */
  csv?: string;
  /** A bar chart of this table in the HTML: the label and value columns, the first rows. */
  chart?: { label: string; value: string };
  /** Said in the HTML when there are no rows, when not "No rows in the period." */
  empty?: string;
  /** The streams (tables, views) this table needs that are not exported; rows are then empty. */
  notExported?: string[];
}

export interface ReportSection {
  id: string;
  title: string;
  tables: ReportTable[];
}

export interface Notice {
  level: "warning" | "info";
  text: string;
}

export interface Figure {
  label: string;
  value: Cell;
}

export interface Report {
  kind: ReportKind;
  title: string;
  product: { name: string; version: string };
  database: string;
  period: { from: string; to: string };
  filters: Record<string, string>;
  /** Said on the first page: gaps in coverage, poisoned windows, streams not exported. */
  notices: Notice[];
  summary: Figure[];
  sections: ReportSection[];
}

/** A column list from `key:kind` specs; labels are the keys with spaces. */
export function columns(...specs: string[]): Column[] {
  return specs.map(column);
}

/** A column from its `key:kind` spec; its label is the key with spaces. */
export function column(spec: string): Column {
  const [key = "", kind = "text"] = spec.split(":");
  return {
    key,
    label: key.replaceAll("_", " "),
    kind: kind as Column["kind"],
  };
}

/** Where a table is in its report: what an error about its rows names. */
export interface TablePlace {
  /** The kind's title. */
  report: string;
  /** The section's title. */
  section: string;
  /** The table's id (its CSV's name). */
  table: string;
}

/**
 * A row of a query made to the columns' types: numbers as numbers, booleans as booleans. A row
 * without one of the columns is refused (a spec naming a column its query does not return):
 * the column would otherwise read as empty or 0.
 */
export function typedRow(
  r: Row,
  cols: readonly Column[],
  place: TablePlace,
): Record<string, Cell> {
  const out: Record<string, Cell> = {};
  for (const c of cols) {
    if (!Object.hasOwn(r, c.key)) throw columnMissing(r, c.key, place);
    const v = r[c.key];
    out[c.key] =
      c.kind === "number"
        ? Number(v ?? 0)
        : c.kind === "bool"
          ? v === true || v === 1 || v === "1" || v === "true"
          : text(v);
  }
  return out;
}

/** The error of a row that lacks a column its table shows. */
function columnMissing(r: Row, key: string, place: TablePlace): FatalError {
  const returned = Object.keys(r);
  return new FatalError(
    "REPORT_COLUMN_MISSING",
    `the ${place.report} report, section "${place.section}", table ${place.table}: its spec names the column ${key}, and its query returns no such column (it returns ${returned.length === 0 ? "none" : returned.join(", ")})`,
    {
      hint: `make the table's query return ${key} (SELECT … AS ${key}, src/warehouse/reports/) or take the column out of its spec (src/reports/kinds/); test/unit/reports/spec-columns.test.ts finds this without an engine`,
    },
  );
}
