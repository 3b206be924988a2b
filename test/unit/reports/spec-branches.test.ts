// A report table may be some of another table's rows (`rows: { of, keep }`), written while that
// table is read. The kind's definition refuses one that could be shown without its source: a
// source listed after it, missing, itself such a table, or shown under another condition.
import { describe, expect, it } from "vitest";
import { defineKind, type TableSpec } from "../../../src/reports/spec.js";

const SECTION = { id: "s", title: "S" };
const source: TableSpec<null> = {
  id: "pairs",
  section: SECTION,
  title: "Pairs",
  columns: ["person", "new:number"],
  rows: { id: "pairs", needs: [], sql: "SELECT 'a' AS person, 1 AS new" },
};
const branch = (of: string, extra: Partial<TableSpec<null>> = {}) => ({
  id: "new-pairs",
  section: SECTION,
  title: "New pairs",
  columns: ["person"],
  rows: { of, keep: () => true },
  ...extra,
});
const kind = (tables: readonly TableSpec<null>[]) => () =>
  defineKind<null>({
    title: "T",
    facts: () => Promise.resolve(null),
    tables,
    summary: () => [],
    notices: () => Promise.resolve([]),
    streams: () => [],
  });

describe("a report table of another table's rows", () => {
  it("takes its source's query for the manifest's column checks", () => {
    const k = kind([source, branch("pairs")])();
    expect(k.tables[1]?.query?.({} as never).id).toBe("pairs");
  });

  it("is refused unless its source is read before it and shown whenever it is", () => {
    expect(kind([branch("pairs"), source])).toThrow(
      /new-pairs is rows of pairs/,
    );
    expect(kind([source, branch("pair")])).toThrow(/rows of pair,/);
    expect(kind([source, branch("pairs", { when: () => true })])).toThrow(
      /shown whenever it is/,
    );
    expect(
      kind([source, branch("pairs"), { ...branch("new-pairs"), id: "x" }]),
    ).toThrow(/x is rows of new-pairs/);
  });
});
