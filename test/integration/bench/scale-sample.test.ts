// The scale scenario's sample day at BENCH_SCALE=1m in the organisation's shape (a Sunday:
// about 1,400 sessions): the tables the generator writes for it equal what `sync sessions` of
// the same day writes from the simulator serving the generated records, and its distributions
// and shape (what a person does in a day, the machines' share, the rollups' rows) are the
// simulator's (bench/sample-day.ts).
import { afterAll, describe, expect, it } from "vitest";
import {
  checkSampleDay,
  compareSampleDay,
  type Db,
} from "../../../bench/sample-day.js";
import { SHAPE_MEASURES } from "../../../bench/sample-distributions.js";
import { ENTERPRISE } from "../../../bench/scale.js";
import { quoteIdent, type Warehouse } from "../../../src/warehouse/index.js";
import { migratedWarehouse, testConfig } from "../../helpers/warehouse.js";

const opened: Warehouse[] = [];

async function open(env: Record<string, string> = {}): Promise<Db> {
  const config = await testConfig(env);
  const warehouse = await migratedWarehouse(config);
  opened.push(warehouse);
  return { config, warehouse };
}

afterAll(async () => {
  for (const w of opened) await w.close();
});

describe("the scale scenario's sample day", () => {
  // Two warehouses, a generated day, a sync and the rollups of both: about 45 s alone on two
  // cores, over the default 60 s beside the other integration files.
  it("equals a sync of the same day, table by table, with the simulator's distributions; a changed row is named", async () => {
    const generated = await open();
    let synced: Db | undefined;
    const r = await checkSampleDay({
      sessions: 1_000_000,
      population: ENTERPRISE,
      generated,
      openSynced: async (url, apiKey) =>
        (synced = await open({
          SESSIONHOUSE_API_URL: url,
          SESSIONHOUSE_API_KEY: apiKey,
          SESSIONHOUSE_MAX_RPS: "1000",
        })),
    });
    expect(r.sessions).toBeGreaterThan(1_200);
    expect(r.differences).toEqual([]);
    const shape = r.distributions.filter((d) => d.shape === true);
    expect(shape.map((d) => [d.measure, d.within])).toEqual(
      SHAPE_MEASURES.map((m) => [m, true]),
    );
    for (const t of r.tables)
      expect(t.generatedRows, t.table).toBeGreaterThan(0);
    const shares = new Map(r.distributions.map((d) => [d.measure, d]));
    for (const m of ["open", "child", "late", "technology postgres"])
      expect(shares.get(m)?.generated, m).toBeGreaterThan(0);

    // The comparison sees a difference: one generated session read again under another name.
    const db = quoteIdent(generated.warehouse.database);
    await generated.warehouse.client.command({
      query: `INSERT INTO ${db}.sessions SELECT * REPLACE (concat(user_name, ' (renamed)') AS user_name, version + 1 AS version)
              FROM ${db}.sessions FINAL WHERE toDate(start_time) = '${r.day}' ORDER BY id LIMIT 1`,
    });
    const again = await compareSampleDay(generated, synced as Db, {
      day: r.day,
      dayMs: Date.parse(r.day),
      sessions: r.sessions,
      shape: "org",
      yearSessions: 1_000_000,
    });
    expect(again.differences.join("\n")).toContain(
      `sessions: ${r.sessions} rows generated, ${r.sessions} synced, 1 only generated, 1 only synced; columns that differ: user_name (1 sessions), version_rank (1 sessions)`,
    );
  }, 180_000);
});
