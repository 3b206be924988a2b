// A result as it arrives, a block at a time, so that what a reader holds is a block of the
// result and not the result: from a server as the response streams in, from the embedded engine
// block by block as it produces them. The query command writes such blocks out as they come;
// the reports read them as rows.
import type { Warehouse } from "./client.js";
import { quoteString } from "./sql.js";

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
 * `params` fill the query's `{name:Type}` placeholders; the embedded stream has no parameters
 * of its own, so there they are set on the session first (SET param_name), as the engine's own
 * client does.
 */
export async function* resultBlocks(
  w: Warehouse,
  sql: string,
  format: string,
  signal: AbortSignal,
  params: Record<string, string> = {},
): AsyncIterable<Uint8Array> {
  const query = `${withoutTrailingSemicolons(sql)}\nFORMAT ${format}`;
  const headerLines = blockHeaderLines(format);
  if (w.queryBlocks && headerLines !== undefined) {
    for (const [name, value] of Object.entries(params))
      await w.client.command({
        query: `SET param_${name} = ${quoteString(value)}`,
      });
    yield* joinBlocks(w.queryBlocks(query, format, signal), headerLines);
    return;
  }
  const { stream } = await w.client.exec({
    query,
    query_params: params,
    abort_signal: signal,
  });
  yield* stream as AsyncIterable<Buffer>;
}

/**
 * The lines of `sql`'s result in a row format of one row a line (JSONEachRow by default), as
 * they arrive; a block may end inside a line.
 */
export async function* resultLines(
  w: Warehouse,
  sql: string,
  signal: AbortSignal,
  params: Record<string, string> = {},
  format = "JSONEachRow",
): AsyncIterable<string> {
  for await (const lines of resultLineBlocks(w, sql, signal, params, format))
    yield* lines;
}

/**
 * The lines of `sql`'s result as resultLines gives them, the whole lines of a block at a time
 * (a reader of millions of rows pays for a block, not for each row). A block is cut at its last
 * newline byte, which is never inside a UTF-8 character, and the rest is kept for the next.
 */
export async function* resultLineBlocks(
  w: Warehouse,
  sql: string,
  signal: AbortSignal,
  params: Record<string, string> = {},
  format = "JSONEachRow",
): AsyncIterable<string[]> {
  let partial: Buffer = Buffer.alloc(0);
  for await (const raw of resultBlocks(w, sql, format, signal, params)) {
    const block = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    const end = block.lastIndexOf(10);
    if (end < 0) {
      partial = Buffer.concat([partial, block]);
      continue;
    }
    const text =
      partial.length === 0
        ? block.toString("utf8", 0, end)
        : Buffer.concat([partial, block.subarray(0, end)]).toString("utf8");
    partial = Buffer.from(block.subarray(end + 1));
    const lines = text.split("\n").filter((l) => l !== "");
    if (lines.length > 0) yield lines;
  }
  const last = partial.toString("utf8");
  if (last !== "") yield [last];
}

/** `sql` without the semicolons and blanks that may end it, so a FORMAT clause can follow. */
function withoutTrailingSemicolons(sql: string): string {
  return sql.replace(/[\s;]+$/, "");
}
