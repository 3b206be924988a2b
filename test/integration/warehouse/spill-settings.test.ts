// The embedded reader's spill settings (EMBEDDED_READ_SETTINGS) against the engine: with their
// byte bounds made small, a sort and an aggregation larger than the bound are written to disk
// (the engine's counters of parts written out, system.events, grow), and a read-only embedded
// reader's session runs with every one of them. A sort held whole grows with the rows it sorts
// (a report's sorted result of millions of rows), one that spills holds about its bound.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import {
  EMBEDDED_READ_SETTINGS,
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import { select, testConfig } from "../../helpers/warehouse.js";

let config: Config;
let w: Warehouse;

beforeAll(async () => {
  config = await testConfig();
  w = await openWarehouse(config);
  // A reader opens only a database that exists.
  await w.client.command({
    query: `CREATE DATABASE IF NOT EXISTS ${w.database}`,
  });
});

afterAll(async () => {
  await w?.close();
});

/** EMBEDDED_READ_SETTINGS as a SETTINGS clause, every byte bound made `bytes`. */
function smallBounds(bytes: number): string {
  return Object.entries(EMBEDDED_READ_SETTINGS)
    .map(([k, v]) => `${k} = ${k.startsWith("max_bytes_before_") ? bytes : v}`)
    .join(", ");
}

/** The engine's count of `event` since it started (0 before its first). */
async function events(event: string): Promise<number> {
  const rows = await select<{ value: string }>(
    w,
    `SELECT toString(value) AS value FROM system.events WHERE event = '${event}'`,
  );
  return Number(rows[0]?.value ?? 0);
}

/** About 20 MB of distinct text values, 300,000 rows. */
const VALUES =
  "SELECT number, concat(toString(cityHash64(number)), repeat('x', 40)) AS s FROM numbers(300000)";

describe.runIf(process.env.CLICKHOUSE_URL === undefined)(
  "the embedded reader's spill settings",
  () => {
    it("a sort larger than the byte bound is written to disk", async () => {
      const before = await events("ExternalSortWritePart");
      await w.client.command({
        query: `SELECT * FROM (${VALUES}) ORDER BY s SETTINGS ${smallBounds(1_000_000)} FORMAT Null`,
      });
      expect(await events("ExternalSortWritePart")).toBeGreaterThan(before);
    });

    it("an aggregation larger than the byte bound is written to disk", async () => {
      const before = await events("ExternalAggregationWritePart");
      await w.client.command({
        query: `SELECT s, count() FROM (${VALUES}) GROUP BY s SETTINGS ${smallBounds(1_000_000)} FORMAT Null`,
      });
      expect(await events("ExternalAggregationWritePart")).toBeGreaterThan(
        before,
      );
    });

    it("a read-only embedded reader's session runs with every one of them", async () => {
      const reader = await openWarehouse(config, { access: "read" });
      try {
        const rows = await select<{ name: string; value: string }>(
          reader,
          `SELECT name, value FROM system.settings WHERE name IN (${Object.keys(
            EMBEDDED_READ_SETTINGS,
          )
            .map((k) => `'${k}'`)
            .join(", ")}) ORDER BY name`,
        );
        expect(
          Object.fromEntries(rows.map((r) => [r.name, Number(r.value)])),
        ).toEqual(EMBEDDED_READ_SETTINGS);
      } finally {
        await reader.close();
      }
    });
  },
);
