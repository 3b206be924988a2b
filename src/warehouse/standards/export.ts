// `sessionhouse export ocsf|ecs`: a standard view's sessions of a time range as JSON Lines, one
// nested object per session. The range is read a UTC day at a time (days without sessions
// skipped): the day's sessions are counted per minute, the minutes cut into pages of about
// EXPORT_PAGE_ROWS sessions, and each page (a time slice: every session is in exactly one) is
// read, streamed and written before the next is asked for. Memory holds one page whatever the
// range (the embedded engine answers a query in one piece; a page bounds that piece), and each
// session is computed once: a page is a range of the sessions' sorting key, not an offset.
import type { Warehouse } from "../client.js";
import { SinkError } from "../errors.js";
import { chTime } from "../format.js";
import { existingTables } from "../migrate.js";
import { selectRows } from "../select.js";
import { quoteIdent } from "../sql.js";
import { writeWaiting } from "../user-query.js";
import type { ItemField, StandardField, StandardView } from "./fields.js";
import { STANDARD_VIEWS, type StandardName } from "./views.js";

/** Sessions a page is cut at (a busier minute than this is one page of its own). */
const EXPORT_PAGE_ROWS = 2000;

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** Characters of JSON Lines gathered before they are handed to the output. */
const WRITE_BATCH = 256 * 1024;

interface ExportRange {
  fromMs: number;
  toMs: number;
}

/**
 * Writes the sessions that started in [fromMs, toMs) as JSON Lines of the standard `name` to
 * `out`, in (start, id) order, waiting while `out` is full; stops once `out` is destroyed.
 * Returns the lines written.
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
  let written = 0;
  for (const { start } of await counts(w, view, range, DAY_MS)) {
    const day = Math.max(range.fromMs, start);
    const dayEnd = Math.min(range.toMs, start + DAY_MS);
    const minutes = await counts(
      w,
      view,
      { fromMs: day, toMs: dayEnd },
      MINUTE_MS,
    );
    const bounds = [day, ...pageCuts(minutes, pageRows), dayEnd];
    for (let i = 0; i + 1 < bounds.length; i++) {
      const page = await writePage(w, view, out, {
        fromMs: bounds[i] as number,
        toMs: bounds[i + 1] as number,
      });
      written += page.rows;
      if (page.stopped) return written;
    }
  }
  return written;
}

/** Whether the view's time column holds milliseconds since the epoch (else a DateTime64). */
function timeInMs(view: StandardView): boolean {
  const kind = view.fields.find((f) => f.path === view.order.time)?.kind;
  if (kind !== "timestamp" && kind !== "date")
    throw new Error(
      `${view.name}: the time column ${view.order.time} is not a timestamp or date field`,
    );
  return kind === "timestamp";
}

/** SQL: the view's time column as milliseconds since the epoch. */
function millis(view: StandardView): string {
  const column = quoteIdent(view.order.time);
  return timeInMs(view) ? column : `toUnixTimestamp64Milli(${column})`;
}

/** The bounds of a range on the view's time column, as its parameters take them. */
function rangeParams(view: StandardView, range: ExportRange) {
  const param = (ms: number) => (timeInMs(view) ? ms : chTime(ms));
  return { from: param(range.fromMs), to: param(range.toMs) };
}

function rangeWhere(view: StandardView): string {
  const time = quoteIdent(view.order.time);
  const t = timeInMs(view) ? "Int64" : "DateTime64(3, 'UTC')";
  return `${time} >= {from:${t}} AND ${time} < {to:${t}}`;
}

interface Count {
  /** Start of a bucket of the view's time column, ms. */
  start: number;
  n: number;
}

/**
 * The sessions of a range per bucket of `bucketMs` (a UTC day, a minute) of their start, the
 * buckets without any left out, in order: a range's days, or a day's minutes (at most 1440).
 */
async function counts(
  w: Warehouse,
  view: StandardView,
  range: ExportRange,
  bucketMs: number,
): Promise<Count[]> {
  const rows = await selectRows<{ start: string; n: string }>(
    w,
    `SELECT intDiv(${millis(view)}, ${bucketMs}) * ${bucketMs} AS start, count() AS n
     FROM ${quoteIdent(w.database)}.${quoteIdent(view.name)}
     WHERE ${rangeWhere(view)}
     GROUP BY start ORDER BY start`,
    rangeParams(view, range),
  );
  return rows.map((r) => ({ start: Number(r.start), n: Number(r.n) }));
}

/**
 * Where pages start after the first: at the minute that follows the one that brought a page to
 * `pageRows` sessions. Each cut is a minute start after the range's start.
 */
function pageCuts(minutes: readonly Count[], pageRows: number): number[] {
  const cuts: number[] = [];
  let inPage = 0;
  for (const m of minutes) {
    if (inPage >= pageRows) {
      cuts.push(m.start);
      inPage = 0;
    }
    inPage += m.n;
  }
  return cuts;
}

interface Page {
  rows: number;
  /** `out` went away. */
  stopped: boolean;
}

/** The sessions of one time slice, in (start, id) order, written to `out`. */
async function writePage(
  w: Warehouse,
  view: StandardView,
  out: NodeJS.WritableStream,
  range: ExportRange,
): Promise<Page> {
  const rs = await w.client.query({
    query: `SELECT * FROM ${quoteIdent(w.database)}.${quoteIdent(view.name)}
      WHERE ${rangeWhere(view)}
      ORDER BY ${quoteIdent(view.order.time)}, ${quoteIdent(view.order.id)}`,
    query_params: rangeParams(view, range),
    format: "JSONEachRow",
  });
  const page: Page = { rows: 0, stopped: false };
  let batch = "";
  for await (const rows of rs.stream<Record<string, unknown>>()) {
    for (const row of rows) {
      batch += `${JSON.stringify(nestRecord(view, row.json()))}\n`;
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
