// The queries of the compliance reports: SQL text kept here, run with typed parameters, and
// recorded exactly as run (with the database filled in) for the report's manifest.
import { EMBEDDED_READ_SETTINGS, type Warehouse } from "../client.js";
import { quoteIdent } from "../sql.js";
import { existingTables } from "../migrate.js";
import { selectRows, type ExecutedQuery } from "../select.js";
import { resultLineBlocks } from "../result-stream.js";

/** One report query: the tables or views it reads, and its SQL with `{{db}}` for the database. */
export interface ReportQuery {
  id: string;
  needs: readonly string[];
  sql: string;
}

export type Row = Record<string, unknown>;

/**
 * The clause that ends a report query on an embedded warehouse that writes (the manifest records
 * it with the query): EMBEDDED_READ_SETTINGS, which the session of a read-only embedded warehouse
 * has already (set before readonly = 1, which refuses the clause). A server keeps its own settings
 * (a read-only user may not change them), and so does a data directory read through a running
 * service.
 */
const SPILL_CLAUSE = `SETTINGS ${Object.entries(EMBEDDED_READ_SETTINGS)
  .map(([k, v]) => `${k} = ${v}`)
  .join(", ")}`;

/** Rows of a result parsed at a time (stream). */
const ROWS_PARSED = 1000;

/**
 * Runs report queries against what the warehouse holds: a query whose tables are absent is not
 * run and answers undefined (the report says which stream is not exported); every query run is
 * kept in `executed`, in the order run.
 */
export class ReportReader {
  readonly executed: ExecutedQuery[] = [];
  readonly #w: Warehouse;
  readonly #tables: ReadonlySet<string>;

  private constructor(w: Warehouse, tables: ReadonlySet<string>) {
    this.#w = w;
    this.#tables = tables;
  }

  static async open(w: Warehouse): Promise<ReportReader> {
    return new ReportReader(w, await existingTables(w));
  }

  /** The warehouse read, for reads that tell `log` what they ran. */
  get warehouse(): Warehouse {
    return this.#w;
  }

  /** Keeps a query run elsewhere (the status read model) among those run, in order. */
  readonly log = (q: ExecutedQuery): void => {
    this.executed.push(q);
  };

  has(table: string): boolean {
    return this.#tables.has(table);
  }

  /** The tables among `needs` that the warehouse does not hold. */
  missing(needs: readonly string[]): string[] {
    return needs.filter((t) => !this.#tables.has(t));
  }

  async rows(
    q: ReportQuery,
    params: Record<string, string>,
  ): Promise<Row[] | undefined> {
    if (this.missing(q.needs).length > 0) return undefined;
    const { sql, used } = this.#prepare(q, params);
    const rows = await selectRows<Row>(this.#w, sql, used);
    this.executed.push({ id: q.id, sql, params: used, rows: rows.length });
    return rows;
  }

  /**
   * The rows of `q` as they arrive, a block of them at a time, none of them held here (a result
   * of millions of rows costs a block of it); undefined when its tables are absent. It is
   * recorded as run when asked for, its rows counted as they are read.
   */
  stream(
    q: ReportQuery,
    params: Record<string, string>,
  ): AsyncIterable<readonly Row[]> | undefined {
    if (this.missing(q.needs).length > 0) return undefined;
    const { sql, used } = this.#prepare(q, params);
    const ran: ExecutedQuery = { id: q.id, sql, params: used, rows: 0 };
    this.executed.push(ran);
    const w = this.#w;
    return (async function* () {
      const abort = new AbortController();
      let read = false;
      try {
        for await (const lines of resultLineBlocks(
          w,
          sql,
          abort.signal,
          used,
        )) {
          // A parse of ROWS_PARSED rows at a time as an array: a parse a row cost more, and a
          // parse of a whole block holds every row of it at once.
          for (let i = 0; i < lines.length; i += ROWS_PARSED) {
            const slice = lines.slice(i, i + ROWS_PARSED);
            const rows = JSON.parse(`[${slice.join(",")}]`) as Row[];
            ran.rows += rows.length;
            yield rows;
          }
        }
        read = true;
      } finally {
        // A reader that stops early cancels the statement.
        if (!read) abort.abort();
      }
    })();
  }

  /** The SQL of `q` with the database filled in, and the parameters it uses (sorted). */
  #prepare(
    q: ReportQuery,
    params: Record<string, string>,
  ): { sql: string; used: Record<string, string> } {
    const text = q.sql.replaceAll("{{db}}", quoteIdent(this.#w.database));
    const sql =
      this.#w.kind === "embedded" && !this.#w.readOnly
        ? `${text}\n${SPILL_CLAUSE}`
        : text;
    const all = { ...params, db: this.#w.database };
    const used = Object.fromEntries(
      Object.entries(all)
        .filter(([k]) => sql.includes(`{${k}:`))
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    return { sql, used };
  }
}

/** A value of a row as text: strings as they are, numbers and booleans printed, null empty. */
export function text(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return v === null || v === undefined ? "" : JSON.stringify(v);
}
