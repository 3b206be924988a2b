// A report table's rows as they are read: every row goes to the table's CSV file as it arrives
// (hashed as it is written, for the manifest), the first TOP_ROWS are kept for the HTML, PDF
// and JSON, and all are counted. A year of sessions can give millions of rows: none of them is
// held beyond the first TOP_ROWS, and the CSV is never a string in memory.
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { ManifestFile } from "../evidence/manifest.js";
import { openPrivateFile, type Sharing } from "../util/private-files.js";
import type { Row } from "../warehouse/index.js";
import { csvHeader, csvLine } from "./csv.js";
import {
  TOP_ROWS,
  typedRow,
  type Cell,
  type Column,
  type TablePlace,
} from "./model.js";

/** Where the tables' CSV files go, and those complete (with their SHA-256). */
export interface CsvFiles {
  dir: string;
  sharing: Sharing;
  written: ManifestFile[];
}

export interface ReadTable {
  /** The first TOP_ROWS rows. */
  top: Record<string, Cell>[];
  total: number;
  /** The CSV file's name in the directory, when one was written. */
  csv?: string;
}

/** Text gathered before it is written: a large block at a time, not a row at a time. */
const WRITE_CHUNK = 1 << 20;

/**
 * Another table whose rows are the rows each row read gives (`expand`: none, itself, or finer
 * rows it carries; without it, every row as read), in their order, with its own columns and CSV:
 * written while the rows are read, with no read of its own.
 */
export interface TableBranch {
  place: TablePlace;
  columns: readonly Column[];
  expand?: ((row: Row) => readonly Row[]) | undefined;
}

/** One table being filled from rows as they are read. */
interface Sink extends TableBranch {
  out: CsvOut | undefined;
  top: Record<string, Cell>[];
  total: number;
}

/** Adds a row to a table; a promise when a block of its CSV was written out. */
function sinkRow(k: Sink, raw: Row): Promise<void> | undefined {
  const row = typedRow(raw, k.columns, k.place);
  if (k.top.length < TOP_ROWS) k.top.push(row);
  k.total++;
  // A promise only when a block of text is written: none to wait for on most rows.
  return k.out?.row(row);
}

/**
 * Reads `rows` (held ones, or a query's as they arrive, a block at a time) into the first TOP_ROWS and the count,
 * writing every row to `<table>.csv` in `files.dir` on the way when `files` is given; the same
 * for each branch, from the rows it makes of each. A row without a column of `columns` fails the table
 * (typedRow). The answer holds the table's, then each branch's.
 */
export async function readTableRows(
  place: TablePlace,
  columns: readonly Column[],
  rows: readonly Row[] | AsyncIterable<readonly Row[]>,
  files: CsvFiles | undefined,
  branches: readonly TableBranch[] = [],
): Promise<ReadTable[]> {
  const sinks: Sink[] = [];
  try {
    for (const b of [{ place, columns }, ...branches])
      sinks.push({
        ...b,
        out: files
          ? await CsvOut.open(b.place.table, b.columns, files)
          : undefined,
        top: [],
        total: 0,
      });
    const blocks = Array.isArray(rows) ? [rows] : rows;
    for await (const block of blocks)
      for (const raw of block as readonly Row[])
        for (const k of sinks) {
          const made = k.expand === undefined ? undefined : k.expand(raw);
          if (made === undefined) {
            const written = sinkRow(k, raw);
            if (written) await written;
          } else
            for (const row of made) {
              const written = sinkRow(k, row);
              if (written) await written;
            }
        }
  } catch (err) {
    for (const k of sinks) await k.out?.abandon();
    throw err;
  }
  for (const k of sinks) await k.out?.close();
  return sinks.map((k) => ({
    top: k.top,
    total: k.total,
    ...(k.out ? { csv: k.out.name } : {}),
  }));
}

/** A CSV file written in blocks and hashed as written. */
class CsvOut {
  readonly name: string;
  readonly #columns: readonly Column[];
  readonly #handle: Awaited<ReturnType<typeof openPrivateFile>>;
  readonly #hash = createHash("sha256");
  readonly #files: CsvFiles;
  #pending = "";
  #bytes = 0;

  private constructor(
    name: string,
    columns: readonly Column[],
    handle: Awaited<ReturnType<typeof openPrivateFile>>,
    files: CsvFiles,
  ) {
    this.name = name;
    this.#columns = columns;
    this.#handle = handle;
    this.#files = files;
    this.#pending = csvHeader(columns);
  }

  static async open(
    id: string,
    columns: readonly Column[],
    files: CsvFiles,
  ): Promise<CsvOut> {
    const name = `${id}.csv`;
    const handle = await openPrivateFile(join(files.dir, name), {
      ...files.sharing,
      flag: "wx",
    });
    return new CsvOut(name, columns, handle, files);
  }

  /** Adds a row; a promise when the text gathered was written out (a block at a time). */
  row(row: Record<string, Cell>): Promise<void> | undefined {
    this.#pending += csvLine(this.#columns, row);
    return this.#pending.length >= WRITE_CHUNK ? this.#flush() : undefined;
  }

  async #flush(): Promise<void> {
    if (this.#pending === "") return;
    const data = Buffer.from(this.#pending, "utf8");
    this.#pending = "";
    this.#hash.update(data);
    this.#bytes += data.length;
    await this.#handle.write(data);
  }

  /** Closes the file without listing it: the rows stopped coming (an error). */
  async abandon(): Promise<void> {
    await this.#handle.close();
  }

  /** Writes what is left and closes the file; it is listed with its hash once complete. */
  async close(): Promise<void> {
    try {
      await this.#flush();
    } finally {
      await this.#handle.close();
    }
    this.#files.written.push({
      path: this.name,
      sha256: this.#hash.digest("hex"),
      bytes: this.#bytes,
    });
  }
}
