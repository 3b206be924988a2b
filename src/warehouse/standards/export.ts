// `sessionhouse export ocsf|ecs`: a standard view's sessions of a time range as JSON Lines, one
// nested object per session. The range is read a page at a time, in (start, id) order, each page
// streamed and written before the next is asked for, so memory holds one page whatever the
// range (the embedded engine answers a query in one piece; a page bounds that piece).
import type { Warehouse } from "../client.js";
import { SinkError } from "../errors.js";
import { chTime } from "../format.js";
import { existingTables } from "../migrate.js";
import { quoteIdent } from "../sql.js";
import { writeWaiting } from "../user-query.js";
import type { ItemField, StandardField, StandardView } from "./fields.js";
import { STANDARD_VIEWS, type StandardName } from "./views.js";

/** Sessions read per query: a page of records (a few KB each with the raw record) at a time. */
const EXPORT_PAGE_ROWS = 2000;

/** Characters of JSON Lines gathered before they are handed to the output. */
const WRITE_BATCH = 256 * 1024;

export interface ExportRange {
  fromMs: number;
  toMs: number;
}

/**
 * Writes the sessions that started in [fromMs, toMs) as JSON Lines of the standard `name` to
 * `out`, waiting while `out` is full; stops once `out` is destroyed. Returns the lines written.
 */
export async function exportStandard(
  w: Warehouse,
  name: StandardName,
  range: ExportRange,
  out: NodeJS.WritableStream,
  pageRows = EXPORT_PAGE_ROWS,
): Promise<number> {
  const view = STANDARD_VIEWS[name];
  if (!(await existingTables(w)).has(view.name))
    throw new SinkError(
      "STANDARD_VIEW_MISSING",
      `the database ${w.database} has no view ${view.name}`,
      { hint: "run sessionhouse migrate (or any sync) to create it" },
    );
  const param = (ms: number) =>
    view.timeParamType === "Int64" ? ms : chTime(ms);
  let after: { time: unknown; id: string } = {
    time: param(range.fromMs),
    id: "",
  };
  let written = 0;
  for (;;) {
    const page = await writePage(w, view, out, pageRows, {
      from: param(range.fromMs),
      to: param(range.toMs),
      after_time: after.time,
      after_id: after.id,
    });
    written += page.rows;
    if (page.stopped || page.rows < pageRows || page.last === undefined)
      return written;
    after = page.last;
  }
}

interface Page {
  rows: number;
  last: { time: unknown; id: string } | undefined;
  /** `out` went away. */
  stopped: boolean;
}

/** One page of the view after the last (start, id) written, written to `out`. */
async function writePage(
  w: Warehouse,
  view: StandardView,
  out: NodeJS.WritableStream,
  limit: number,
  params: Record<string, unknown>,
): Promise<Page> {
  const time = quoteIdent(view.timeColumn);
  const id = quoteIdent(view.idColumn);
  const t = view.timeParamType;
  const rs = await w.client.query({
    query: `SELECT * FROM ${quoteIdent(w.database)}.${quoteIdent(view.name)}
      WHERE ${time} >= {from:${t}} AND ${time} < {to:${t}}
        AND (${time} > {after_time:${t}} OR (${time} = {after_time:${t}} AND ${id} > {after_id:String}))
      ORDER BY ${time}, ${id}
      LIMIT {limit:UInt32}`,
    query_params: { ...params, limit },
    format: "JSONEachRow",
  });
  const page: Page = { rows: 0, last: undefined, stopped: false };
  let batch = "";
  for await (const rows of rs.stream<Record<string, unknown>>()) {
    for (const row of rows) {
      const record = row.json();
      page.last = {
        time: record[view.timeColumn],
        id: String(record[view.idColumn]),
      };
      batch += `${JSON.stringify(nestRecord(view, record))}\n`;
      page.rows++;
      if (batch.length >= WRITE_BATCH) {
        if (!(await writeWaiting(out, Buffer.from(batch)))) {
          rs.close();
          return { ...page, stopped: true };
        }
        batch = "";
      }
    }
  }
  if (batch.length > 0 && !(await writeWaiting(out, Buffer.from(batch))))
    return { ...page, stopped: true };
  return page;
}

/**
 * A view's row as the standard's nested object: each column's dotted path becomes nested
 * members; a NULL, an empty array and an object left with no members are left out; 64-bit
 * numbers (a JSON string from ClickHouse) become numbers, DateTime64 values ISO 8601.
 */
export function nestRecord(
  view: StandardView,
  row: Record<string, unknown>,
): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const field of view.fields) {
    const value = converted(field, row[field.path]);
    if (value === undefined) continue;
    const parts = field.path.split(".");
    let node = root;
    for (const part of parts.slice(0, -1)) {
      const next = (node[part] ??= {}) as Record<string, unknown>;
      node = next;
    }
    node[parts[parts.length - 1] as string] = value;
  }
  return root;
}

/** A column's value for the export; undefined leaves it out. */
function converted(field: StandardField | ItemField, value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (field.array) {
    if (!Array.isArray(value) || value.length === 0) return undefined;
    return value.map((v) => scalar(field, v));
  }
  return scalar(field, value);
}

function scalar(field: StandardField | ItemField, value: unknown): unknown {
  switch (field.kind) {
    case "long":
    case "timestamp":
      return bigNumber(value);
    case "date":
      return typeof value === "string" ? isoTime(value) : value;
    case "object":
      return field.items && typeof value === "object" && value !== null
        ? itemObject(field.items, value as Record<string, unknown>)
        : value;
    default:
      return value;
  }
}

function itemObject(
  items: readonly ItemField[],
  value: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const item of items) {
    const v = converted(item, value[item.name]);
    if (v !== undefined) out[item.name] = v;
  }
  return out;
}

/** A 64-bit integer as a JSON number; beyond 2^53 it stays the exact decimal string. */
function bigNumber(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : value;
}

/** "2026-11-16 12:00:00.123" (a DateTime64 in UTC as ClickHouse writes it) → ISO 8601. */
function isoTime(value: string): string {
  return /^\d{4}-\d{2}-\d{2} /.test(value)
    ? `${value.replace(" ", "T")}Z`
    : value;
}
