// The range gates (test/helpers/dashboards.ts, RANGE_GATES): a rollup branch of a gated panel
// starts with the condition that the range holds what the rollup holds (a whole day for a daily
// rollup, a whole month for a monthly one), so that a range that cannot use it costs nothing;
// and every copy of a gate in the dashboards is the one defined there, verbatim. What the gates
// answer for each kind of range is held against the engine in
// test/integration/dashboards/long-range.test.ts.
import { describe, expect, it } from "vitest";
import {
  GATED_PANELS,
  RANGE_GATES,
  loadDashboards,
  queryVariables,
} from "../../helpers/dashboards.js";

/** The part every gate shares: the first instant of the range's first whole day, less a second. */
const GATE_MARK = "toDate($__fromTime - INTERVAL 1 SECOND, 'UTC')";

const queries = loadDashboards().flatMap(({ dashboard: d }) => [
  ...d.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({
      uid: d.uid,
      title: p.title,
      sql: t.rawSql ?? "",
    })),
  ),
  ...queryVariables(d).map((v) => ({
    uid: d.uid,
    title: `variable ${v.name}`,
    sql: v.query,
  })),
]);

describe("range gates", () => {
  it("every copy in the dashboards is one of RANGE_GATES, verbatim", () => {
    const copies = queries.filter((q) => q.sql.includes(GATE_MARK));
    expect(copies.length).toBeGreaterThanOrEqual(GATED_PANELS.length);
    for (const q of copies) {
      const rest = Object.values(RANGE_GATES).reduce(
        (sql, gate) => sql.replaceAll(gate, ""),
        q.sql,
      );
      expect(rest.includes(GATE_MARK), `${q.uid} / ${q.title}`).toBe(false);
    }
  });

  it.each(GATED_PANELS.map((p) => [p.title, p] as const))(
    "%s: every rollup read starts with the gate of what the rollup holds",
    (_title, { uid, title }) => {
      const q = queries.find((x) => x.uid === uid && x.title === title);
      if (!q) throw new Error(`no ${uid} / ${title}`);
      const reads = [
        ...q.sql.matchAll(
          /FROM [a-z_]+_rollups_(daily|monthly)(?: FINAL)?\s+WHERE ([^\n]*)/g,
        ),
      ];
      expect(reads.length).toBeGreaterThan(1);
      for (const [read, period, where] of reads)
        expect(
          where?.startsWith(
            period === "monthly"
              ? RANGE_GATES.wholeMonth
              : RANGE_GATES.wholeDay,
          ),
          read.slice(0, 120),
        ).toBe(true);
    },
  );
});
