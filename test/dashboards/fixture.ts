// The demo data the dashboards are proved against: a migrated ClickHouse filled by one sync of
// sessions and of every default aggregation job from the simulator, as `docker compose
// --profile demo up` would fill it, over the DEMO_DAYS before NOON, and every entity stream.
import type { Config } from "../../src/config/index.js";
import { syncAggregations } from "../../src/pipeline/aggregations.js";
import { syncSessions } from "../../src/pipeline/sessions.js";
import type { Simulator } from "../../src/simulator/index.js";
import type { Warehouse } from "../../src/warehouse/client.js";
import {
  API_KEY,
  NOON,
  run,
  runDeps,
  testSimulator,
} from "../helpers/simulator.js";
import { migratedWarehouse, testConfig } from "../helpers/warehouse.js";
import { ENTITY_STREAMS, SESSIONS_JOB } from "../../src/pipeline/names.js";
import { syncEntityStream } from "../../src/pipeline/entity-streams.js";

export const DAY_MS = 86_400_000;
/** Days synced before NOON, and the dashboards' time range in the tests. */
export const DEMO_DAYS = 2;

export interface DemoWarehouse {
  sim: Simulator;
  config: Config;
  warehouse: Warehouse;
  close(): Promise<void>;
}

export async function demoWarehouse(): Promise<DemoWarehouse> {
  const sim = await testSimulator();
  const config = await testConfig({
    SESSIONHOUSE_API_URL: sim.url,
    SESSIONHOUSE_API_KEY: API_KEY,
    SESSIONHOUSE_WINDOW: "6h",
    SESSIONHOUSE_INITIAL_LOOKBACK: `${DEMO_DAYS}d`,
    SESSIONHOUSE_MAX_RPS: "1000",
  });
  const warehouse = await migratedWarehouse(config);
  const deps = runDeps(config, warehouse);
  await run(deps, SESSIONS_JOB, (ctx) => syncSessions(ctx, { nowMs: NOON }));
  for (const job of config.aggregations.jobs) {
    await run(deps, job.name, (ctx) =>
      syncAggregations(ctx, job, { nowMs: NOON }),
    );
  }
  // The entity streams read a day before NOON and again at NOON, so that their history holds
  // changes within the dashboards' time range.
  for (const at of [NOON - DAY_MS, NOON]) {
    sim.clock.set(at);
    for (const stream of ENTITY_STREAMS)
      await run(deps, stream, (ctx) => syncEntityStream(ctx, stream, at));
  }
  await deps.api.close();
  return {
    sim,
    config,
    warehouse,
    close: async () => {
      await warehouse.close();
      await sim.close();
    },
  };
}
