import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { insertBody } from "../../../src/warehouse/insert.js";
import {
  lastValueOf,
  RowBlock,
  rowBinaryString,
  rowsOf,
  type TakenRows,
} from "../../../src/warehouse/row-block.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

/** No leading columns: a row that is one String. */
const NONE = new Uint8Array(0);

/**
 * The value of every row of a block of rows without leading columns (NONE), decoded from the
 * body by its length prefix.
 */
function valuesOf(block: TakenRows): string[] {
  return block.starts.map((start, i) => {
    const value = block.tails[i] as number;
    const end = block.starts[i + 1] ?? block.body.length;
    let length = 0;
    let scale = 1;
    for (let q = start; q < value; q++) {
      length += ((block.body[q] as number) & 0x7f) * scale;
      scale *= 0x80;
    }
    expect(value + length).toBe(end);
    return block.body.toString("utf8", value, end);
  });
}

let w: Warehouse;
beforeAll(async () => {
  w = await migratedWarehouse(await testConfig());
  await w.client.command({
    query: `CREATE TABLE \`${w.database}\`.rows (n UInt32, s String, last String) ENGINE = MergeTree ORDER BY tuple()`,
  });
});
afterAll(async () => {
  await w.close();
});

describe("RowBlock", () => {
  const texts = [
    '{"id":"ses_1","n":"Zoë ✓"}',
    "x".repeat(127),
    "y".repeat(128),
    "z".repeat(20_000),
    'emoji 🚀 and a \\"quote\\"',
    "",
  ];

  it("writes RowBinary rows the engine reads back, leading columns and a last String of any length, growing past its first size", async () => {
    const block = new RowBlock(16);
    const leading = Buffer.concat([
      Buffer.of(7, 0, 0, 0),
      rowBinaryString("ab"),
    ]);
    texts.forEach((t, i) =>
      block.push(leading, i % 2 === 0 ? t : Buffer.from(t, "utf8")),
    );
    expect(block.rows).toBe(texts.length);
    const taken = block.take();
    await insertBody(
      w,
      "rows",
      taken.body,
      "row-block:1",
      { retries: 0 },
      {
        format: "RowBinary",
        columns: ["n", "s", "last"],
        input: "n UInt32, s String, last String",
        select: (source) => `SELECT n, s, last FROM ${source}`,
      },
    );
    const rows = await select<{ n: number; s: string; last: string }>(
      w,
      "SELECT n, s, last FROM {db}.rows",
    );
    expect(rows.map((r) => r.last).sort()).toEqual([...texts].sort());
    expect(rows.every((r) => r.n === 7 && r.s === "ab")).toBe(true);
    // Where each row is, and where its last value starts: what a refused row's record is cut from.
    texts.forEach((t, i) => {
      expect(lastValueOf(taken, i).toString("utf8")).toBe(t);
      expect(rowsOf(taken, i, i + 1).subarray(0, leading.length)).toEqual(
        leading,
      );
    });
    expect(rowsOf(taken, 0, texts.length)).toEqual(taken.body);
    expect(rowsOf(taken, 2, 4).length).toBe(
      2 * leading.length + 2 + 128 + 3 + 20_000,
    );
  });

  it("starts over empty after take(), and the taken body stays intact", () => {
    const block = new RowBlock(8);
    block.push(NONE, "first block");
    const first = block.take();
    expect(block.rows).toBe(0);
    expect(block.bytes).toBe(0);
    block.push(NONE, "second");
    expect(valuesOf(first)).toEqual(["first block"]);
    expect(valuesOf(block.take())).toEqual(["second"]);
    const empty = block.take();
    expect(empty.body.length).toBe(0);
    expect(empty.starts).toEqual([]);
  });

  it("writes the next block into a stored block's storage, only when handed back and only up to `keep`", () => {
    const block = new RowBlock(1 << 20, 1);
    block.push(NONE, "first");
    const first = block.take();
    block.push(NONE, "second");
    const second = block.take();
    // Nothing handed back: each block has storage of its own.
    expect(second.body.buffer).not.toBe(first.body.buffer);
    expect(valuesOf(first)).toEqual(["first"]);
    block.reuse(first);
    block.reuse(second); // beyond keep: dropped
    block.take(); // the block being filled when `first` came back
    block.push(NONE, "third");
    const third = block.take();
    expect(third.body.buffer).toBe(first.body.buffer);
    expect(valuesOf(third)).toEqual(["third"]);
    block.push(NONE, "fourth");
    expect(block.take().body.buffer).not.toBe(second.body.buffer);
    // A body this block did not give out is not taken as storage.
    const foreign = new RowBlock(1 << 20, 1);
    foreign.push(NONE, "x");
    const other = foreign.take();
    block.reuse(other);
    block.push(NONE, "fifth");
    expect(block.take().body.buffer).not.toBe(other.body.buffer);
  });

  it("keeps no storage when asked to keep none", () => {
    const block = new RowBlock(1 << 20);
    block.push(NONE, "a");
    const a = block.take();
    block.reuse(a);
    block.push(NONE, "b");
    block.take();
    block.push(NONE, "c");
    expect(block.take().body.buffer).not.toBe(a.body.buffer);
    expect(valuesOf(a)).toEqual(["a"]);
  });
});
