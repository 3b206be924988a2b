// A compliance report as data: what every output (HTML, PDF, CSV, JSON) is rendered from. Built
// by a kind (src/reports/kinds), rendered by html.ts and csv.ts, written by write.ts.
import type { ReportKind } from "../config/index.js";
import { type Row, text } from "../warehouse/index.js";

export type Cell = string | number | boolean;

export interface Column {
  key: string;
  label: string;
  kind: "text" | "number" | "bool";
}

export interface ReportTable {
  /** File name of its CSV (without .csv) and its anchor in the HTML. */
  id: string;
  title: string;
  /** What the rows are and where they come from, one sentence or two. */
  note: string;
  columns: Column[];
  rows: Record<string, Cell>[];
  /** A bar chart of this table in the HTML: the label and value columns, the first rows. */
  chart?: { label: string; value: string };
  /** Rows shown in the HTML and PDF when not HTML_ROW_LIMIT; the CSV and JSON hold them all. */
  htmlRows?: number;
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

/** Rows of a query made to the columns' types: numbers as numbers, booleans as booleans. */
function typedRows(
  rows: readonly Row[] | undefined,
  cols: readonly Column[],
): Record<string, Cell>[] {
  return (rows ?? []).map((r) => {
    const out: Record<string, Cell> = {};
    for (const c of cols) {
      const v = r[c.key];
      out[c.key] =
        c.kind === "number"
          ? Number(v ?? 0)
          : c.kind === "bool"
            ? v === true || v === 1 || v === "1" || v === "true"
            : text(v);
    }
    return out;
  });
}

/** A table from a query's rows; `undefined` rows (tables absent) mark it not exported. */
export function table(
  spec: Omit<ReportTable, "rows" | "notExported">,
  rows: readonly Row[] | undefined,
  missing: readonly string[] = [],
): ReportTable {
  return {
    ...spec,
    rows: typedRows(rows, spec.columns),
    ...(rows === undefined ? { notExported: [...missing] } : {}),
  };
}
