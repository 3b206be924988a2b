// A report over a long period. With the person as the user key (no sessions_enriched view),
// the sessions per day of the rolled-up days come from the daily rollups, the other days from
// sessions, and the numbers are those sessions alone gives; once the TTL deleted the oldest raw
// rows, those days still count there. With the person from sessions_enriched, which the rollups
// do not hold, every table reads sessions. Page one says which source answered what.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { rollUp } from "../../../src/pipeline/rollups.js";
import {
  buildReport,
  type BuiltReport,
  type ReportFilters,
} from "../../../src/reports/build.js";
import { createLogger } from "../../../src/util/logger.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  applyRetention,
  retentionSettings,
} from "../../../src/warehouse/retention.js";
import { DAY, storeLongHistory } from "../../helpers/long-history.js";
import { migratedWarehouse, testConfig } from "../../helpers/warehouse.js";

const NOW = Date.now();
const TODAY = Math.floor(NOW / DAY) * DAY;
const PERIOD = { fromMs: TODAY - 55 * DAY, toMs: NOW };

let config: Config;
/** The person as the user key: the sessions_enriched view dropped. */
let w: Warehouse;
/** The person from sessions_enriched. */
let enriched: { config: Config; w: Warehouse };

async function warehouseWithHistory(c: Config): Promise<Warehouse> {
  const x = await migratedWarehouse(c);
  if (x.kind === "embedded")
    await x.client.command({ query: `USE \`${x.database}\`` });
  await storeLongHistory(x, NOW);
  return x;
}

beforeAll(async () => {
  const c = await testConfig();
  enriched = { config: c, w: await warehouseWithHistory(c) };
  config = await testConfig();
  w = await warehouseWithHistory(config);
  await w.client.command({ query: "DROP VIEW sessions_enriched" });
}, 120_000);

afterAll(async () => {
  await enriched?.w.close();
  await w?.close();
});

const report = (filters: ReportFilters = {}) =>
  buildReport(w, config, { kind: "access-review", ...PERIOD, filters });

const logger = createLogger({ level: "silent" });

function rows(r: BuiltReport, id: string) {
  const t = r.report.sections.flatMap((s) => s.tables).find((x) => x.id === id);
  if (!t) throw new Error(`no table ${id}`);
  return t.rows;
}

const sources = (r: BuiltReport) =>
  r.report.notices.filter((n) => n.text.startsWith("Sources:"));

describe("access review over a long period", () => {
  const filters: ReportFilters[] = [{}, { user: "user1@acme.example" }];
  const fromRaw = new Map<string, BuiltReport>();

  it("reads sessions only while nothing is rolled up", async () => {
    for (const f of filters) {
      const r = await report(f);
      expect(rows(r, "access-per-day").length).toBeGreaterThan(50);
      expect(sources(r)).toEqual([]);
      fromRaw.set(JSON.stringify(f), r);
    }
  });

  it("gives the same numbers with the rolled-up days read from the rollups", async () => {
    const rolled = await rollUp({ config, warehouse: w, logger }, NOW);
    expect(rolled.sessionDays).toBeGreaterThan(50);
    for (const f of filters) {
      const raw = fromRaw.get(JSON.stringify(f));
      if (!raw) throw new Error("no report from sessions");
      const r = await report(f);
      expect(rows(r, "access-per-day"), JSON.stringify(f)).toEqual(
        rows(raw, "access-per-day"),
      );
      expect(r.report.summary).toEqual(raw.report.summary);
      const [notice] = sources(r);
      expect(notice?.text).toMatch(
        /Sessions per day reads 5\d rolled-up days .* from the daily rollups/,
      );
      expect(r.queries.map((q) => q.id)).toContain(
        "access.sessions_per_day_rollups",
      );
    }
  });

  it("still counts the days whose raw rows the TTL deleted, in the sessions per day only", async () => {
    await applyRetention(
      w,
      retentionSettings({
        clickhouse: { retentionDays: 45 },
        retention: config.retention,
      }),
    );
    await w.client.command({ query: "OPTIMIZE TABLE sessions FINAL" });
    const raw = fromRaw.get(JSON.stringify({}));
    if (!raw) throw new Error("no report from sessions");
    const r = await report();
    expect(rows(r, "access-per-day")).toEqual(rows(raw, "access-per-day"));
    const sessions = (x: BuiltReport) =>
      x.report.summary.find((f) => f.label === "Sessions")?.value;
    expect(Number(sessions(r))).toBeLessThan(Number(sessions(raw)));
  });

  it("with the person from sessions_enriched, reads every table from sessions and says so", async () => {
    const build = () =>
      buildReport(enriched.w, enriched.config, {
        kind: "access-review",
        ...PERIOD,
        filters: {},
      });
    const before = await build();
    expect(sources(before)).toEqual([]);
    await rollUp(
      { config: enriched.config, warehouse: enriched.w, logger },
      NOW,
    );
    const after = await build();
    expect(rows(after, "access-per-day")).toEqual(
      rows(before, "access-per-day"),
    );
    expect(sources(after).map((n) => n.text)).toEqual([
      expect.stringMatching(
        /^Sources: every table reads sessions.*the daily rollups hold 5\d days of the period .* but not the person/,
      ),
    ]);
    expect(after.queries.map((q) => q.id)).not.toContain(
      "access.sessions_per_day_rollups",
    );
  });
});
