// A kind of report as data: its sections and, per table, the query (or, for the few tables that
// are not one query, a reader), the columns, the chart and the text said when it has no rows.
// One builder (buildKind) runs the tables in the order listed, which is the order their queries
// appear in the manifest, and files each table under its section; html.ts, csv.ts and write.ts
// render what it gives. Adding a table is adding an entry to a kind's `tables`.
import type { ReportQuery, Row } from "../warehouse/index.js";
import type { KindContext, KindResult } from "./kinds/context.js";
import { readTableRows } from "./table-rows.js";
import {
  column,
  type Column,
  type Figure,
  type Notice,
  type ReportTable,
} from "./model.js";

/** A value a spec computes from the report's context and the facts its kind read first. */
type From<F, T> = (ctx: KindContext, facts: F) => T;

/**
 * Rows read by code rather than one query (held, or a query's as they arrive, a block at a
 * time): undefined rows are a table not exported.
 */
export interface TableRead {
  rows: readonly Row[] | AsyncIterable<readonly Row[]> | undefined;
  /** The streams not exported when rows is undefined. */
  notExported: readonly string[];
  /** The note, when it depends on what the reader found. */
  note?: string;
}

/** A section of a report: its anchor in the HTML and its title. */
export interface Section {
  id: string;
  title: string;
}

export interface TableSpec<F> {
  /** File name of its CSV (without .csv) and its anchor in the HTML. */
  id: string;
  /** The section the table is shown in (the kind's sections are those of its tables). */
  section: Section;
  title: string;
  /** What the rows are and where they come from (absent: the reader says it). */
  note?: string | From<F, string>;
  /** `key:kind` (text, number, bool; the label is the key with spaces), or a column with its own label (a unit, say). */
  columns: readonly (string | Column)[];
  /** A bar chart in the HTML of this value column, each bar labelled by the first column. */
  chart?: string;
  /** Said in the HTML when the table has no rows (default: no rows in the period). */
  empty?: string;
  /**
   * The rows: one query (the streams it needs not exported: no rows), chosen by the context
   * alone, or a reader; a reader whose rows are one query's as it answers names that query, so
   * that its columns are checked against the table's like a query's; or some of the rows of a
   * table listed before it (`of`), those `keep` holds, in its order, written while that table's
   * rows are read (no read of their own); or the rows each row of such a table gives
   * (`expand`: a row may carry a list of finer rows), in its order, written the same way.
   */
  rows:
    | ReportQuery
    | ((ctx: KindContext) => ReportQuery)
    | { read: From<F, Promise<TableRead>>; query?: ReportQuery }
    | { of: string; keep: (row: Row) => boolean }
    | { of: string; expand: (row: Row) => readonly Row[] };
  /** The streams said not exported when the query's tables are absent (default: its needs). */
  notExported?: From<F, readonly string[]>;
  /** Only in the report when this holds. */
  when?: From<F, boolean>;
}

/** The tables of a report by id, as built. */
export type Tables = ReadonlyMap<string, ReportTable>;

export interface KindSpec<F> {
  title: string;
  /** Values read before the tables (their queries come first in the manifest). */
  facts: (ctx: KindContext) => Promise<F>;
  /**
   * In the order they are read; each is shown in its section in this order, and the sections in
   * the order their first table is listed.
   */
  tables: readonly TableSpec<F>[];
  summary: (t: Tables, facts: F, ctx: KindContext) => Figure[];
  /** Said on page one; may read more (those queries come after the tables'). */
  notices: (t: Tables, facts: F, ctx: KindContext) => Promise<Notice[]>;
  /** Checkpoint streams the report's data comes from (said on page one when short). */
  streams: (t: Tables, facts: F, ctx: KindContext) => string[];
}

/** A kind ready to build (its facts' type is its own business), and the layout of its tables. */
export interface Kind {
  title: string;
  sections: readonly { id: string; title: string }[];
  tables: readonly {
    id: string;
    section: string;
    /** The keys of the columns it shows: each must be a column of its query's rows. */
    columns: readonly string[];
    /** The query its rows come from; undefined: rows built by code. */
    query: ((ctx: KindContext) => ReportQuery) | undefined;
  }[];
  build(ctx: KindContext): Promise<KindResult>;
}

/**
 * Throws when a table of another's rows (`of`) does not name a table listed before it with the
 * same condition to be shown: it is built while that one is read, so it must never be shown
 * without it.
 */
function checkBranches<F>(tables: readonly TableSpec<F>[]): void {
  for (const [i, t] of tables.entries()) {
    if (!("of" in t.rows)) continue;
    const of = t.rows.of;
    const source = tables.slice(0, i).find((s) => s.id === of);
    if (source === undefined || "of" in source.rows || source.when !== t.when)
      throw new Error(
        `report table ${t.id} is rows of ${of}, which must be a table read before it and shown whenever it is`,
      );
  }
}

/** The rows a table of another's rows takes from each of that one's rows. */
function branchRows(
  of:
    { keep: (row: Row) => boolean } | { expand: (row: Row) => readonly Row[] },
): (row: Row) => readonly Row[] {
  if ("expand" in of) return of.expand;
  const keep = of.keep;
  return (row) => (keep(row) ? [row] : []);
}

export function defineKind<F>(spec: KindSpec<F>): Kind {
  checkBranches(spec.tables);
  const sections = [
    ...new Map(spec.tables.map((t) => [t.section.id, t.section])).values(),
  ];
  return {
    title: spec.title,
    sections,
    tables: spec.tables.map((t) => ({
      id: t.id,
      section: t.section.id,
      columns: t.columns.map(
        (c) => (typeof c === "string" ? column(c) : c).key,
      ),
      query: tableQuery(t.rows, spec.tables),
    })),
    build: (ctx) => buildKind(spec, sections, ctx),
  };
}

/** The query a table's rows come from, as a function of the context; undefined: none. */
function tableQuery<F>(
  rows: TableSpec<F>["rows"],
  all: readonly TableSpec<F>[],
): ((ctx: KindContext) => ReportQuery) | undefined {
  if (typeof rows === "function") return rows;
  // Rows made by code from another table's: not the columns of any query.
  if ("expand" in rows) return undefined;
  if ("of" in rows) {
    const source = all.find((t) => t.id === rows.of);
    return source === undefined ? undefined : tableQuery(source.rows, all);
  }
  if ("read" in rows) {
    const q = rows.query;
    return q === undefined ? undefined : () => q;
  }
  return () => rows;
}

async function buildKind<F>(
  spec: KindSpec<F>,
  layout: readonly Section[],
  ctx: KindContext,
): Promise<KindResult> {
  const facts = await spec.facts(ctx);
  const built = new Map<string, ReportTable>();
  const shown = spec.tables.filter((t) => !t.when || t.when(ctx, facts));
  // Each table is a step, and writing the files the last one.
  const steps = shown.length + 1;
  for (const [i, t] of shown.entries()) {
    ctx.progress?.({ n: i + 1, of: steps, what: t.title });
    if (built.has(t.id)) continue;
    const branches = shown.filter((b) => "of" in b.rows && b.rows.of === t.id);
    const tables = await buildTable(t, ctx, facts, spec.title, branches);
    for (const b of tables) built.set(b.id, b);
  }
  const sections = layout.map((s) => ({
    id: s.id,
    title: s.title,
    tables: spec.tables.flatMap((t) => {
      const b = built.get(t.id);
      return t.section.id === s.id && b ? [b] : [];
    }),
  }));
  return {
    title: spec.title,
    summary: spec.summary(built, facts, ctx),
    sections,
    notices: await spec.notices(built, facts, ctx),
    streams: spec.streams(built, facts, ctx),
    steps,
  };
}

/**
 * One table of a spec, read from the warehouse, and the tables that are some of its rows
 * (`branches`): the rows go to each one's CSV as they arrive; the first TOP_ROWS are kept.
 */
async function buildTable<F>(
  t: TableSpec<F>,
  ctx: KindContext,
  facts: F,
  report: string,
  branches: readonly TableSpec<F>[],
): Promise<ReportTable[]> {
  const read = await readRows(t, ctx, facts);
  const shape = (b: TableSpec<F>) => {
    const columns = b.columns.map((c) =>
      typeof c === "string" ? column(c) : c,
    );
    const place = { report, section: b.section.title, table: b.id };
    const of = "of" in b.rows ? b.rows : undefined;
    return {
      b,
      columns,
      place,
      expand: of === undefined ? undefined : branchRows(of),
    };
  };
  const [main, ...rest] = [t, ...branches].map(shape);
  if (main === undefined) return [];
  const filled = await readTableRows(
    main.place,
    main.columns,
    read.rows ?? [],
    ctx.csv,
    rest,
  );
  return [main, ...rest].map(({ b, columns }, i) => {
    const rows = filled[i] ?? { top: [], total: 0 };
    const note =
      (b === t ? read.note : undefined) ??
      (typeof b.note === "function" ? b.note(ctx, facts) : (b.note ?? ""));
    const label = columns[0]?.key;
    return {
      id: b.id,
      title: b.title,
      note,
      columns,
      rows: rows.top,
      total: rows.total,
      ...(rows.csv === undefined ? {} : { csv: rows.csv }),
      ...(b.chart && label ? { chart: { label, value: b.chart } } : {}),
      ...(b.empty === undefined ? {} : { empty: b.empty }),
      ...(read.rows === undefined
        ? { notExported: [...read.notExported] }
        : {}),
    };
  });
}

async function readRows<F>(
  t: TableSpec<F>,
  ctx: KindContext,
  facts: F,
): Promise<TableRead> {
  if ("read" in t.rows) return t.rows.read(ctx, facts);
  // Built with the table whose rows it takes (checkBranches), never alone.
  if ("of" in t.rows)
    throw new Error(`report table ${t.id} was read without ${t.rows.of}`);
  const q = typeof t.rows === "function" ? t.rows(ctx) : t.rows;
  return {
    rows: ctx.reader.stream(q, ctx.params),
    notExported: t.notExported
      ? t.notExported(ctx, facts)
      : ctx.reader.missing(q.needs),
  };
}

/** How many rows a built table has in all (0 when the kind left it out). */
export function totalOf(t: Tables, id: string): number {
  return t.get(id)?.total ?? 0;
}
