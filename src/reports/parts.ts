// One query's rows shared by several tables: the rows come in parts, one after the other (a
// `part` column, ascending), and each table takes its part as the rows arrive: every row goes
// to its table's CSV as it is read, none is held but the one that starts the next part.
import type { Row } from "../warehouse/index.js";

export class PartedRows {
  readonly #rows: AsyncIterator<Row> | undefined;
  /** The row read ahead: the first of a part not taken yet. */
  #next: Row | undefined;
  #ended = false;
  /** The last part taken: parts are taken in the order they come. */
  #taken = -Infinity;

  /** `rows` undefined: the query was not run (its tables are absent); every part is then empty. */
  constructor(rows: AsyncIterable<Row> | undefined) {
    this.#rows = rows?.[Symbol.asyncIterator]();
    this.#ended = rows === undefined;
  }

  /** Whether the query ran (its tables exist). */
  get ran(): boolean {
    return this.#rows !== undefined;
  }

  /**
   * The rows of `part` as they arrive; the rows of the parts before it that nobody took are
   * skipped. Parts are taken in ascending order, each once, and each read to its end before
   * the next is taken.
   */
  async *take(part: number): AsyncIterable<Row> {
    if (part <= this.#taken)
      throw new Error(`part ${part} taken after part ${this.#taken}`);
    this.#taken = part;
    for (;;) {
      const row = await this.#peek();
      if (row === undefined) return;
      const at = Number(row.part);
      if (at > part) return;
      this.#next = undefined;
      if (at === part) yield row;
    }
  }

  /** Every row of `part`, held (a part of a few rows: the totals, the accounts). */
  async all(part: number): Promise<Row[]> {
    const out: Row[] = [];
    for await (const row of this.take(part)) out.push(row);
    return out;
  }

  /** Stops reading: the rest of the rows are not read (the query is cancelled when unread). */
  async close(): Promise<void> {
    this.#ended = true;
    this.#next = undefined;
    await this.#rows?.return?.();
  }

  async #peek(): Promise<Row | undefined> {
    if (this.#next !== undefined) return this.#next;
    if (this.#ended || this.#rows === undefined) return undefined;
    const r = await this.#rows.next();
    if (r.done === true) {
      this.#ended = true;
      return undefined;
    }
    this.#next = r.value;
    return r.value;
  }
}
