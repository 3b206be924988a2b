// The org scale scenario's log aggregations and inventory name the organisation's own resources:
// the `resource_environments` view gives each of them the environment the simulator gave it, so
// that the sessions on them have one (reports' production columns, the environment filter), and
// the inventory lists the simulator's columns of its databases and warehouses.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { END_MS, resourceEnvironments } from "../../../bench/dashboards.js";
import { orgDimensions, orgInventory } from "../../../bench/org-scenario.js";
import { generateInventory } from "../../../bench/scale.js";
import type { Warehouse } from "../../../src/warehouse/index.js";
import { migratedWarehouse, testConfig } from "../../helpers/warehouse.js";
import { SMALL_ORG } from "../../helpers/small-org.js";

let w: Warehouse;

beforeAll(async () => {
  // The generators write to the database `bench`, as the scale bench names it.
  w = await migratedWarehouse(
    await testConfig({ CLICKHOUSE_DATABASE: "bench" }),
  );
}, 60_000);

afterAll(async () => {
  await w?.close();
});

async function rows<T>(query: string): Promise<T[]> {
  return (await w.client.query({ query, format: "JSONEachRow" })).json<T>();
}

describe("the org scale scenario's dimensions in the engine", () => {
  it("give each of the organisation's resources its environment through resource_environments", async () => {
    const { resources } = orgDimensions(1, SMALL_ORG);
    expect(new Set(resources.map((r) => r.environment)).size).toBeGreaterThan(
      1,
    );
    await resourceEnvironments(w, resources);
    const got = await rows<{ resource_name: string; environment: string }>(
      "SELECT resource_name, environment FROM bench.resource_environments ORDER BY resource_name",
    );
    expect(got).toEqual(
      resources
        .map((r) => ({ resource_name: r.name, environment: r.environment }))
        .sort((a, b) => (a.resource_name < b.resource_name ? -1 : 1)),
    );
    const [hours] = await rows<{ n: string }>(
      "SELECT uniqExact(bucket_time) AS n FROM bench.agg_histogram WHERE job = 'resource_environments' AND level = 2",
    );
    expect(Number(hours?.n)).toBe(365 * 24);
  });

  it("hold the organisation's inventory, a version a column current and two in its history", async () => {
    await generateInventory(w, "org");
    const want = orgInventory(END_MS);
    const [current] = await rows<{ n: string; resources: string }>(
      "SELECT count() AS n, uniqExact(resource_id) AS resources FROM bench.inventory_columns FINAL",
    );
    expect(Number(current?.n)).toBe(want.length);
    expect(Number(current?.resources)).toBe(new Set(want.map((r) => r.r)).size);
    const [history] = await rows<{ n: string }>(
      "SELECT count() AS n FROM bench.inventory_columns_history FINAL",
    );
    expect(Number(history?.n)).toBe(2 * want.length);
    // The labels are the simulator's, column by column (by position).
    const labelled = await rows<{ data_labels: string[]; n: string }>(
      "SELECT data_labels, count() AS n FROM bench.inventory_columns FINAL GROUP BY data_labels ORDER BY data_labels",
    );
    const byLabel = new Map<string, number>();
    for (const r of want)
      byLabel.set(r.data_label, (byLabel.get(r.data_label) ?? 0) + 1);
    expect(
      new Map(labelled.map((l) => [l.data_labels[0] ?? "", Number(l.n)])),
    ).toEqual(byLabel);
  }, 120_000);
});
