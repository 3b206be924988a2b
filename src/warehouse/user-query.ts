// SQL a person typed (the query command), run with the configured database as the current one.
import { ClickHouseCode, clickHouseCode } from "./clickhouse-codes.js";
import type { Warehouse } from "./client.js";
import { quoteIdent } from "./sql.js";
import { SinkError } from "./errors.js";
import { selectRows } from "./select.js";
import { UsageError } from "../util/errors.js";

/** A ClickHouse output format, as the engine names it. */
export interface OutputFormat {
  name: string;
  /** The engine says it displays fine in a terminal (text, not binary). */
  ttyFriendly: boolean;
}

/**
 * The output format named `name` (any spelling of its case), as the engine knows it; a name the
 * engine has no output format for is an error naming it and where the list is.
 */
export async function outputFormat(
  w: Warehouse,
  name: string,
): Promise<OutputFormat> {
  const found = await selectRows<{ name: string; tty: number }>(
    w,
    `SELECT name, is_tty_friendly AS tty FROM system.formats
     WHERE is_output AND lower(name) = lower({name:String})
     ORDER BY name = {name:String} DESC, name LIMIT 1`,
    { name },
  );
  const f = found[0];
  if (f === undefined)
    throw new UsageError(
      `"${name}" is not an output format of this ClickHouse`,
      {
        hint: "use table (the default), or a format of SELECT name FROM system.formats WHERE is_output, e.g. TSV, CSVWithNames, JSONEachRow, Pretty, Markdown, Parquet",
      },
    );
  return { name: f.name, ttyFriendly: Number(f.tty) === 1 };
}

async function useDatabase(w: Warehouse): Promise<void> {
  // The embedded engine keeps session state, so USE makes the database current; a server
  // client already sends it with every query.
  if (w.kind === "embedded")
    await w.client.command({ query: `USE ${quoteIdent(w.database)}` });
}

/** The first rows of a result for people, and how many rows it had in all. */
export interface ShownRows {
  rows: Record<string, unknown>[];
  total: number;
}

/**
 * The first `limit` rows of `sql`, read as they arrive; the rest are counted, not kept, so a
 * statement that returns millions of rows costs the memory of `limit`.
 */
export async function userQueryRows(
  w: Warehouse,
  sql: string,
  limit: number,
): Promise<ShownRows> {
  await useDatabase(w);
  const shown: ShownRows = { rows: [], total: 0 };
  const decoder = new TextDecoder();
  // JSONEachRow: one row a line; a block may end inside a line.
  let partial = "";
  const take = (line: string) => {
    if (line === "") return;
    if (shown.total < limit)
      shown.rows.push(JSON.parse(line) as Record<string, unknown>);
    shown.total++;
  };
  try {
    for await (const block of resultBlocks(
      w,
      sql,
      "JSONEachRow",
      new AbortController().signal,
    )) {
      const lines = (partial + decoder.decode(block, { stream: true })).split(
        "\n",
      );
      partial = lines.pop() ?? "";
      for (const line of lines) take(line);
    }
    take(partial + decoder.decode());
  } catch (err) {
    throw readOnlyThroughService(w, err);
  }
  return shown;
}

/**
 * Row formats whose blocks, each written by the engine on its own, join into the result: no
 * prefix or suffix, and with names (and types) a header of one (two) lines that opens every
 * block and is kept from the first only.
 */
const BLOCK_FORMATS: ReadonlySet<string> = new Set([
  "CSV",
  "TSV",
  "TabSeparated",
  "TSVRaw",
  "TabSeparatedRaw",
  "JSONEachRow",
  "JSONLines",
  "NDJSON",
  "JSONCompactEachRow",
  "JSONStringsEachRow",
  "JSONCompactStringsEachRow",
  "TSKV",
  "LineAsString",
]);

/** Header lines every block of `format` opens with, or undefined when its blocks do not join. */
function blockHeaderLines(format: string): number | undefined {
  if (format === "RowBinary") return 0;
  for (const [suffix, lines] of [
    ["WithNamesAndTypes", 2],
    ["WithNames", 1],
    ["", 0],
  ] as const)
    if (
      format.endsWith(suffix) &&
      BLOCK_FORMATS.has(format.slice(0, format.length - suffix.length))
    )
      return lines;
  return undefined;
}

/** Blocks of one result with the header every block repeats kept from the first only. */
async function* joinBlocks(
  blocks: AsyncIterable<Uint8Array>,
  headerLines: number,
): AsyncIterable<Uint8Array> {
  let header: Buffer | undefined;
  for await (const raw of blocks) {
    const block = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    if (header === undefined) {
      let end = 0;
      for (let i = 0; i < headerLines; i++) end = block.indexOf(10, end) + 1;
      header = block.subarray(0, end);
      yield block;
    } else if (block.subarray(0, header.length).equals(header)) {
      yield block.subarray(header.length);
    } else {
      throw new Error(
        "a block of the result does not open with the result's header",
      );
    }
  }
}

/**
 * The result of `sql` in `format` as it arrives, a block at a time: from a server as the
 * response streams in; from the embedded engine block by block as it produces them in a row
 * format (BLOCK_FORMATS), and in one piece in the others (a document such as JSON or Parquet).
 */
async function* resultBlocks(
  w: Warehouse,
  sql: string,
  format: string,
  signal: AbortSignal,
): AsyncIterable<Uint8Array> {
  const query = `${withoutTrailingSemicolons(sql)}\nFORMAT ${format}`;
  const headerLines = blockHeaderLines(format);
  if (w.queryBlocks && headerLines !== undefined) {
    yield* joinBlocks(w.queryBlocks(query, format, signal), headerLines);
    return;
  }
  const { stream } = await w.client.exec({ query, abort_signal: signal });
  yield* stream as AsyncIterable<Buffer>;
}

/**
 * Writes the result of `sql` in `format` to `out` as it arrives, waiting while `out` is full,
 * so what is held is a block of the result, not the result. Stops reading, and cancels the
 * statement, once `out` is destroyed (its reader went away).
 */
export async function writeUserQuery(
  w: Warehouse,
  sql: string,
  format: OutputFormat,
  out: NodeJS.WritableStream,
): Promise<void> {
  await useDatabase(w);
  const abort = new AbortController();
  try {
    // A block can be large (the engine's blocks hold up to a million rows): it is written a
    // slice at a time.
    for await (const block of resultBlocks(w, sql, format.name, abort.signal)) {
      for (let at = 0; at < block.length; at += WRITE_SLICE) {
        if (!(await writeWaiting(out, block.subarray(at, at + WRITE_SLICE)))) {
          abort.abort();
          return;
        }
      }
    }
  } catch (err) {
    if (abort.signal.aborted) return;
    throw readOnlyThroughService(w, err);
  }
}

/** `sql` without the semicolons and blanks that may end it, so a FORMAT clause can follow. */
function withoutTrailingSemicolons(sql: string): string {
  return sql.replace(/[\s;]+$/, "");
}

/** Characters of output handed to the stream at a time. */
const WRITE_SLICE = 1 << 20;

/** Writes `bytes`, waiting while `out` is full; false once `out` is destroyed. */
export async function writeWaiting(
  out: NodeJS.WritableStream,
  bytes: Uint8Array,
): Promise<boolean> {
  if (isDestroyed(out)) return false;
  if (bytes.length > 0 && !out.write(bytes)) await drained(out);
  return !isDestroyed(out);
}

function isDestroyed(out: NodeJS.WritableStream): boolean {
  return (out as { destroyed?: boolean }).destroyed === true;
}

/** Resolves when `out` takes writes again, or is closed. */
function drained(out: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off("drain", done);
      out.off("close", done);
      resolve();
    };
    out.on("drain", done);
    out.on("close", done);
  });
}

/**
 * A refusal of the running service's read access says why the statement cannot run here and
 * what to do; any other error is the engine's own.
 */
function readOnlyThroughService(w: Warehouse, err: unknown): unknown {
  if (!w.service || clickHouseCode(err) !== String(ClickHouseCode.READONLY))
    return err;
  return new SinkError(
    "READ_ONLY_THROUGH_SERVICE",
    `${(err as Error).message.trim()} (${w.location} is held by the running service, pid ${w.service.pid}, and read through its read-only access)`,
    {
      cause: err,
      hint: "stop the service (SIGTERM or Ctrl-C) to change the data directory, or leave the writing to it",
    },
  );
}
