// The query command's output, on a real engine: a table for people shows its first rows and says
// how many it left out; the other formats print every row as the engine wrote it, a slice at a
// time, waiting for a slow reader and stopping for one that went away.
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runQuery, TABLE_ROWS_SHOWN } from "../../../src/cli/commands/query.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { migratedWarehouse, testConfig } from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

let w: Warehouse;

beforeAll(async () => {
  w = await migratedWarehouse(await testConfig());
});

afterAll(async () => {
  await w.close();
});

/**
 * A reader that takes one write at a time, later, and keeps what it was given; with
 * `goneAfter`, it goes away after that many writes.
 */
class SlowReader extends Writable {
  readonly chunks: string[] = [];
  readonly #goneAfter: number;
  constructor(highWaterMark: number, options: { goneAfter?: number } = {}) {
    super({ highWaterMark, decodeStrings: false });
    this.#goneAfter = options.goneAfter ?? Infinity;
  }
  override _write(
    chunk: string,
    _encoding: BufferEncoding,
    done: (err?: Error | null) => void,
  ): void {
    this.chunks.push(chunk);
    if (this.chunks.length >= this.#goneAfter) this.destroy();
    setImmediate(done);
  }
  /** Everything written, once the reader has taken it all. */
  async text(): Promise<string> {
    if (!this.writableFinished)
      await new Promise<void>((resolve) => this.end(resolve));
    return this.chunks.join("");
  }
}

/** What the engine writes for `sql` (with its own FORMAT clause), as bytes. */
async function engineBytes(sql: string): Promise<Buffer> {
  const { stream } = await w.client.exec({ query: sql });
  const chunks: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}

async function engineText(sql: string, format: string): Promise<string> {
  const rs = await w.client.query({ query: sql, format: format as "CSV" });
  return rs.text();
}

describe("query --format table", () => {
  it("shows the first rows and says how many there were, and how to print them all", async () => {
    const out = new SlowReader(1 << 16);
    await runQuery(w, "SELECT number AS n FROM numbers(2500)", "table", out);
    const text = await out.text();
    const shown = [...text.matchAll(/^│ (\d+) +│$/gm)].map((m) => Number(m[1]));
    expect(shown).toEqual([...Array(TABLE_ROWS_SHOWN).keys()]);
    expect(text).toContain(
      `(${TABLE_ROWS_SHOWN} of 2500 rows shown; --format TSVWithNames or CSVWithNames prints them all)`,
    );
  });

  it("says nothing more when every row is shown", async () => {
    const out = new SlowReader(1 << 16);
    await runQuery(w, "SELECT number AS n FROM numbers(3)", "table", out);
    expect([...(await out.text()).matchAll(/^│ (\d+) +│$/gm)]).toHaveLength(3);
    expect(await out.text()).not.toContain("rows shown");
  });
});

describe("query --format CSV, TabSeparated, JSONEachRow", () => {
  const sql =
    "SELECT number, toString(number * 7) AS s, [number, 1] AS a, 'line\\nbreak, \"quoted\"' AS t FROM numbers(200000)";

  for (const format of [
    "CSVWithNames",
    "TabSeparated",
    "JSONEachRow",
    // Blocks that each open with a header of two lines, kept once.
    "TSVWithNamesAndTypes",
    "JSONCompactEachRowWithNames",
  ] as const) {
    it(`${format}: every row as the engine writes it, in slices a slow reader waits for`, async () => {
      const out = new SlowReader(1024);
      await runQuery(w, sql, format, out);
      expect(await out.text()).toBe(await engineText(sql, format));
      // Not one string of the whole result: a slice at a time.
      expect(out.chunks.length).toBeGreaterThan(5);
      expect(Math.max(...out.chunks.map((c) => c.length))).toBeLessThan(
        2 << 20,
      );
    });
  }

  it("JSON: the one document the engine writes", async () => {
    const out = new SlowReader(1024);
    await runQuery(w, "SELECT number FROM numbers(10)", "JSON", out);
    const doc = JSON.parse(await out.text()) as {
      rows: number;
      data: unknown[];
    };
    expect(doc.rows).toBe(10);
    expect(doc.data).toHaveLength(10);
  });

  it("stops writing once the reader goes away, without an error", async () => {
    const out = new SlowReader(1024, { goneAfter: 1 });
    await runQuery(w, sql, "CSV", out);
    expect(out.destroyed).toBe(true);
    expect(out.chunks).toHaveLength(1);
  });
});

describe("query --format: any output format of the engine", () => {
  const sql = "SELECT number AS n, toString(number * 3) AS s FROM numbers(50)";

  for (const format of [
    "TSV",
    "tsv",
    "Pretty",
    "PrettyCompact",
    "Markdown",
    "JSONCompactEachRow",
    "Vertical",
  ]) {
    it(`${format}: the engine's own text, as ClickHouse users know it`, async () => {
      const out = new SlowReader(1 << 16);
      await runQuery(w, sql, format, out);
      const canonical = format === "tsv" ? "TSV" : format;
      expect(await out.text()).toBe(
        (await engineBytes(`${sql} FORMAT ${canonical}`)).toString(),
      );
    });
  }

  it("Parquet: written as bytes to a file or a pipe, and reads back", async () => {
    const out = new BytesReader();
    await runQuery(w, sql, "Parquet", out);
    const bytes = out.bytes();
    expect(bytes.subarray(0, 4).toString("latin1")).toBe("PAR1");
    expect(bytes.subarray(-4).toString("latin1")).toBe("PAR1");
    const dir = mkdtempSync(join(testTmpDir(), "query-parquet-"));
    const file = join(dir, "r.parquet");
    writeFileSync(file, bytes);
    const back = await engineText(
      `SELECT sum(n) AS total, count() AS rows FROM file('${file}', 'Parquet')`,
      "TSV",
    );
    expect(back.trim()).toBe(`${(49 * 50) / 2}\t50`);
  });

  it("refuses a binary format on a terminal, and says where to send it", async () => {
    const terminal = Object.assign(new SlowReader(1 << 16), { isTTY: true });
    await expect(runQuery(w, sql, "Parquet", terminal)).rejects.toThrow(
      /Parquet is a binary format: it is not written to a terminal/,
    );
    expect(terminal.chunks).toHaveLength(0);
    // A text format is fine there.
    await runQuery(w, sql, "Pretty", terminal);
    expect(terminal.chunks.length).toBeGreaterThan(0);
  });

  it("names an unknown format and where the list of formats is", async () => {
    const out = new SlowReader(1 << 16);
    await expect(runQuery(w, sql, "Exel", out)).rejects.toThrow(
      /"Exel" is not an output format of this ClickHouse/,
    );
  });
});

describe("query: statements other than SELECT, and refused ones", () => {
  it("answers SHOW TABLES, DESCRIBE TABLE and EXPLAIN, in a table and in a format", async () => {
    const shown = new SlowReader(1 << 16);
    await runQuery(w, "SHOW TABLES", "table", shown);
    expect(shown.chunks.join("")).toMatch(/│ sessions +│/);
    const described = new SlowReader(1 << 16);
    await runQuery(w, "DESCRIBE TABLE sessions", "TSV", described);
    expect(described.chunks.join("")).toMatch(/^id\tString\t/m);
    const explained = new SlowReader(1 << 16);
    await runQuery(
      w,
      "EXPLAIN SELECT user_key FROM sessions WHERE start_time > now()",
      "TSV",
      explained,
    );
    expect(explained.chunks.join("")).toContain("Filter column: start_time");
  });

  it("names a statement the engine refuses with the engine's own words, and where the tables are described", async () => {
    for (const [sql, said] of [
      ["SELEC 1", /Syntax error/],
      // Refused while the result streams, not when it starts.
      [
        "SELECT nosuchcol FROM sessions",
        /Unknown expression identifier `nosuchcol`/,
      ],
    ] as const)
      for (const format of ["table", "CSV"]) {
        const failure = runQuery(w, sql, format, new SlowReader(1 << 16));
        await expect(failure).rejects.toThrow(
          /^ClickHouse refused the statement \(code \d+\): /,
        );
        await expect(failure).rejects.toThrow(said);
        await expect(failure).rejects.not.toThrow(/FORMAT /);
        await expect(failure).rejects.toMatchObject({
          code: "QUERY_REFUSED",
          hint: expect.stringContaining("SHOW TABLES") as unknown,
        });
      }
  });
});

/** A reader that keeps the bytes it was given. */
class BytesReader extends Writable {
  readonly #chunks: Buffer[] = [];
  override _write(
    chunk: Buffer,
    _encoding: BufferEncoding,
    done: (err?: Error | null) => void,
  ): void {
    this.#chunks.push(Buffer.from(chunk));
    done();
  }
  bytes(): Buffer {
    return Buffer.concat(this.#chunks);
  }
}
