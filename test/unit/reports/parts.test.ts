// One query's rows shared by several tables (src/reports/parts.ts): each table takes its part
// as the rows arrive, the parts nobody takes are skipped, an absent part is empty, and a part
// is never taken after a later one.
import { describe, expect, it } from "vitest";
import { PartedRows } from "../../../src/reports/parts.js";
import type { Row } from "../../../src/warehouse/index.js";

/** The rows as a query gives them, counting those read. */
function rows(parts: number[]): {
  rows: AsyncIterable<Row>;
  read: () => number;
  returned: () => boolean;
} {
  let read = 0;
  let returned = false;
  return {
    rows: (async function* () {
      try {
        for (const [i, part] of parts.entries()) {
          read++;
          yield await Promise.resolve({ part, i });
        }
      } finally {
        returned = true;
      }
    })(),
    read: () => read,
    returned: () => returned,
  };
}

const all = async (it: AsyncIterable<Row>) => {
  const out: unknown[] = [];
  for await (const r of it) out.push(r.i);
  return out;
};

describe("parted rows", () => {
  it("gives each part its rows in order, skipping parts nobody takes, an absent part empty", async () => {
    const src = rows([1, 2, 2, 3, 5, 5, 6]);
    const p = new PartedRows(src.rows);
    expect(await p.all(1)).toEqual([{ part: 1, i: 0 }]);
    expect(await all(p.take(2))).toEqual([1, 2]);
    // Part 3 is not taken; part 4 has no rows.
    expect(await all(p.take(4))).toEqual([]);
    // Read up to the first row of the next part, and no further.
    expect(src.read()).toBe(5);
    expect(await all(p.take(5))).toEqual([4, 5]);
    await p.close();
    expect(src.returned()).toBe(true);
    // The end of part 5 is the first row of part 6; the rest is not read.
    expect(src.read()).toBe(7);
  });

  it("refuses a part taken after a later one", async () => {
    const p = new PartedRows(rows([1, 2]).rows);
    await p.all(2);
    await expect(p.all(1)).rejects.toThrow(/part 1 taken after part 2/);
  });

  it("a query not run gives no rows and says so", async () => {
    const p = new PartedRows(undefined);
    expect(p.ran).toBe(false);
    expect(await p.all(1)).toEqual([]);
  });
});
