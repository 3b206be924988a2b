// The scale scenario's sample day at BENCH_SCALE=1m (about 2,740 sessions): the tables the
// generator writes for it equal what `sync sessions` of the same day writes from the simulator
// serving the generated records, and its distributions are the simulator's (bench/sample-day.ts).
import { afterAll, describe, expect, it } from "vitest";
import { checkSampleDay, type Db } from "../../../bench/sample-day.js";
import { ENTERPRISE } from "../../../bench/scale.js";
import type { Warehouse } from "../../../src/warehouse/index.js";
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
  it("equals a sync of the same day, table by table, with the simulator's distributions", async () => {
    const r = await checkSampleDay({
      sessions: 1_000_000,
      population: ENTERPRISE,
      generated: await open(),
      openSynced: (url, apiKey) =>
        open({
          SESSIONHOUSE_API_URL: url,
          SESSIONHOUSE_API_KEY: apiKey,
          SESSIONHOUSE_MAX_RPS: "1000",
        }),
    });
    console.log(
      JSON.stringify({
        tables: r.tables,
        d: r.distributions.map((d) => [
          d.measure,
          d.generated.toFixed(4),
          d.simulator.toFixed(4),
          d.tolerance.toFixed(4),
        ]),
      }),
    );
    expect(r.sessions).toBeGreaterThan(2_500);
    expect(r.differences).toEqual([]);
    for (const t of r.tables)
      expect(t.generatedRows, t.table).toBeGreaterThan(0);
  });
});
