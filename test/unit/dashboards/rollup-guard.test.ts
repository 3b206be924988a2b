// A rollup holds every session of its days, whatever a reader's row filter would hide: a query
// that reads one must read every day from `sessions` when the read carries a row filter
// (`additional_table_filters`, which the ad hoc filter and a restricted reader set). Each panel
// and variable reading a rollup says so in its SQL, directly or through the dashboard's
// `rolled_up_days`, which holds the same condition.
import { describe, expect, it } from "vitest";
import { AI_TECHNOLOGIES } from "../../../src/warehouse/rollups.js";
import { Tables } from "../../../src/warehouse/tables.js";
import { loadDashboards, queryVariables } from "../../helpers/dashboards.js";

const GUARD = "getSetting('additional_table_filters') = map()";

/** Every table name ending in _rollups_daily or _rollups_monthly the SQL names. */
const rollupsRead = (sql: string) =>
  [...sql.matchAll(/\b([a-z_]+_rollups_(?:daily|monthly))\b/g)].map(
    (m) => m[1] ?? "",
  );

const queries = loadDashboards().flatMap(({ dashboard: d }) => {
  const rolledUpDays = d.templating.list.find(
    (v) => v.name === "rolled_up_days",
  );
  const guardedDays =
    rolledUpDays !== undefined &&
    "query" in rolledUpDays &&
    typeof rolledUpDays.query === "string" &&
    rolledUpDays.query.includes(GUARD);
  const panels = d.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({
      what: `${d.title} / ${p.title}`,
      sql: t.rawSql ?? "",
      guardedDays,
    })),
  );
  const variables = queryVariables(d).map((v) => ({
    what: `${d.title} / variable ${v.name}`,
    sql: v.query,
    guardedDays,
  }));
  return [...panels, ...variables].filter((q) => rollupsRead(q.sql).length > 0);
});

describe("queries that read a rollup", () => {
  it("are found, and name only rollup tables the warehouse has", () => {
    expect(queries.length).toBeGreaterThan(10);
    const known = new Set<string>(Object.values(Tables));
    for (const q of queries)
      for (const table of rollupsRead(q.sql))
        expect(known.has(table), `${q.what}: ${table}`).toBe(true);
  });

  it.each(queries.map((q) => [q.what, q] as const))(
    "%s: reads every day from sessions under a row filter",
    (_what, q) => {
      const guarded =
        q.sql.includes(GUARD) ||
        (q.guardedDays && q.sql.includes("$rolled_up_days"));
      expect(guarded).toBe(true);
    },
  );
});

describe("technology_pair_rollups_daily", () => {
  const reads = queries.filter((q) =>
    rollupsRead(q.sql).includes(Tables.technologyPairRollupsDaily),
  );

  it("is read only for the technologies it holds", () => {
    expect(reads.length).toBeGreaterThan(0);
    const held = new Set<string>(AI_TECHNOLOGIES);
    for (const q of reads)
      for (const [, after] of q.sql.matchAll(
        /technology_pair_rollups_daily FINAL\s+WHERE ([^\n]*)/g,
      )) {
        const asked =
          /^resource_technology (?:IN \(([^)]*)\)|= ('[a-z]+'))/.exec(
            after ?? "",
          );
        expect(asked, `${q.what}: ${after ?? ""}`).not.toBeNull();
        const named = (asked?.[1] ?? asked?.[2] ?? "")
          .split(",")
          .map((t) => t.trim().replaceAll("'", ""));
        for (const t of named)
          expect(held.has(t), `${q.what}: ${t}`).toBe(true);
      }
  });
});
