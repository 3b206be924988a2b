// A report table may be some of another table's rows (`rows: { of, keep }`), or the rows each of
// them gives (`rows: { of, expand }`), written while that table is read. The kind's definition refuses one that could be shown without its source: a
// source listed after it, missing, itself such a table, or shown under another condition.
import { describe, expect, it } from "vitest";
import { column } from "../../../src/reports/model.js";
import { defineKind, type TableSpec } from "../../../src/reports/spec.js";
import { readTableRows } from "../../../src/reports/table-rows.js";

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

describe("a report table of the rows each row of another gives", () => {
  it("has no query of its own to check its columns against", () => {
    const expanded = {
      ...branch("pairs"),
      rows: { of: "pairs", expand: () => [] },
    };
    const k = kind([source, expanded])();
    expect(k.tables[1]?.query).toBeUndefined();
    expect(kind([expanded, source])).toThrow(/new-pairs is rows of pairs/);
  });

  it("gets every row each source row gives, in order, beside the source's own rows", async () => {
    const place = (table: string) => ({ report: "r", section: "s", table });
    const rows = [
      { person: "a", users: ["root", "sa"] },
      { person: "b", users: [] },
      { person: "c", users: ["admin"] },
    ];
    const [pairs, users] = await readTableRows(
      place("pairs"),
      [column("person")],
      rows,
      undefined,
      [
        {
          place: place("users"),
          columns: [column("person"), column("user")],
          expand: (r) =>
            (r.users as string[]).map((user) => ({ person: r.person, user })),
        },
      ],
    );
    expect(pairs?.total).toBe(3);
    expect(users?.top).toEqual([
      { person: "a", user: "root" },
      { person: "a", user: "sa" },
      { person: "c", user: "admin" },
    ]);
    expect(users?.total).toBe(3);
  });
});
