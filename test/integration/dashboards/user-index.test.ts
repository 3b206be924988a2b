// A dashboard filtered to one user reads only the granules of sessions that can hold that user
// (the bloom filter idx_user_key of migration 0033), and shows what a read of every granule shows.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { loadDashboards } from "../../helpers/dashboards.js";
import {
  panelSql,
  resolveVariables,
  run,
  useDatabase,
} from "../../helpers/panels.js";
import { migratedWarehouse, testConfig } from "../../helpers/warehouse.js";

const DAY_MS = 86_400_000;
const END_MS = Date.UTC(2026, 9, 1);
/** 100,000 sessions over a day, 1,000 users each with 100 sessions in a row. */
const SESSIONS = 100_000;

let w: Warehouse;

interface IndexUse {
  Name?: string;
  "Initial Granules"?: number;
  "Selected Granules"?: number;
}

/** Every index entry of an `EXPLAIN indexes = 1, json = 1` plan. */
function skipIndexes(plan: unknown): IndexUse[] {
  if (Array.isArray(plan)) return plan.flatMap(skipIndexes);
  if (plan === null || typeof plan !== "object") return [];
  const node = plan as { Indexes?: IndexUse[] };
  return [
    ...(node.Indexes ?? []),
    ...Object.entries(plan)
      .filter(([k]) => k !== "Indexes")
      .flatMap(([, v]) => skipIndexes(v)),
  ];
}

beforeAll(async () => {
  w = await migratedWarehouse(await testConfig());
  await useDatabase(w);
  await w.client.command({
    query: `INSERT INTO sessions (id, start_time, session_status, client_ip_address, user_type, user_email,
              resource_name, resource_technology, connector_name, raw, fetched_at, version)
            SELECT concat('s', toString(number)),
                   fromUnixTimestamp64Milli(toInt64(${END_MS - DAY_MS} + number * 800)),
                   'completed', concat('10.0.', toString(number % 200), '.1'), 'human',
                   concat('user', toString(intDiv(number, 100)), '@acme.example'),
                   concat('resource-', toString(number % 50)), 'postgres', 'connector-1', '{}',
                   fromUnixTimestamp64Milli(${END_MS}), 1
            FROM numbers(${SESSIONS})`,
  });
});

afterAll(async () => {
  await w?.close();
});

describe("one user chosen", () => {
  it("reads a fraction of the sessions' granules, and the same rows as a read of them all", async () => {
    const found = loadDashboards().find(
      (d) => d.dashboard.uid === "sessionhouse-sessions-overview",
    );
    const panel = found?.dashboard.panels.find(
      (p) => p.title === "Client IP addresses",
    );
    if (!found || !panel) throw new Error("no Sessions overview / Client IP");
    const range = { fromMs: END_MS - DAY_MS, toMs: END_MS };
    const { variables } = await resolveVariables(w, found.dashboard, {
      range,
      chosen: new Map([["user", ["user500%40acme.example"]]]),
    });
    const [sql = ""] = panelSql(panel, range, variables);
    const plan = await run(w, `EXPLAIN indexes = 1, json = 1 ${sql}`);
    const index = skipIndexes(JSON.parse(String(plan.rows[0]?.[0]))).find(
      (i) => i.Name === "idx_user_key",
    );
    expect(index, "idx_user_key in the plan").toBeDefined();
    const [selected, initial] = [
      index?.["Selected Granules"] ?? NaN,
      index?.["Initial Granules"] ?? NaN,
    ];
    expect(initial).toBeGreaterThanOrEqual(12);
    expect(selected).toBeLessThanOrEqual(2);
    const withIndex = await run(w, sql);
    expect(withIndex.rows).toHaveLength(100);
    const everyGranule = await run(w, `${sql} SETTINGS use_skip_indexes = 0`);
    expect(withIndex.rows).toEqual(everyGranule.rows);
  });
});
