// Simulator data for the report tests: two days of sessions, the default aggregation jobs and
// the control-plane streams, synced into a fresh database, and a period that the record covers.
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { aggregationName, ENTITY_STREAMS } from "../../src/pipeline/names.js";
import { syncEntityStream } from "../../src/pipeline/entity-streams.js";
import { syncAggregations } from "../../src/pipeline/aggregations.js";
import { syncSessions } from "../../src/pipeline/session-sync.js";
import type { Simulator } from "../../src/simulator/index.js";
import {
  defaultAggregationJobs,
  loadConfig,
  type Config,
} from "../../src/config/index.js";
import type { Warehouse } from "../../src/warehouse/client.js";
import {
  API_KEY,
  NOON,
  run,
  runDeps,
  simulatorWarehouse,
  testSimulator,
} from "./simulator.js";
import { testTmpDir } from "./run-tmp.js";

/** The period the tests report on: the 24 hours up to the simulator's noon. */
export const FROM = NOON - 86_400_000;
export const TO = NOON;

export interface Fixture {
  sim: Simulator;
  config: Config;
  w: Warehouse;
  outDir: string;
}

export async function reportFixture(
  env: Record<string, string> = {},
): Promise<Fixture> {
  const sim = await testSimulator({ historyDays: 3, sessionsPerDay: 300 });
  const { config: base, w } = await simulatorWarehouse(sim.url, {
    SESSIONHOUSE_INITIAL_LOOKBACK: "2d",
    SESSIONHOUSE_WINDOW: "12h",
    ...env,
  });
  // The default jobs, and one that gives the access review its policy hits per person.
  const config = loadConfig({
    env: {
      SESSIONHOUSE_API_URL: sim.url,
      SESSIONHOUSE_API_KEY: API_KEY,
      SESSIONHOUSE_MAX_RPS: "1000",
      SESSIONHOUSE_DATA_DIR: base.clickhouse.dataDir,
      CLICKHOUSE_DATABASE: base.clickhouse.database,
      SESSIONHOUSE_LOG_LEVEL: "silent",
      SESSIONHOUSE_INITIAL_LOOKBACK: "2d",
      SESSIONHOUSE_WINDOW: "12h",
      ...(base.clickhouse.url ? { CLICKHOUSE_URL: base.clickhouse.url } : {}),
      ...env,
    },
    overrides: {
      "aggregations.jobs": [
        ...defaultAggregationJobs(),
        {
          name: "policies_by_user",
          query: "policy.name:*",
          groupBy: ["user.email", "policy.name"],
        },
      ],
    },
  });
  const deps = runDeps(config, w);
  // The sessions and the aggregation jobs at once, as the service runs them: each has its own
  // stream and checkpoint, and the engine and the simulator serve them side by side.
  await Promise.all([
    run(deps, "sessions", (ctx) => syncSessions(ctx, { nowMs: NOON })),
    ...config.aggregations.jobs.map((job) =>
      run(deps, aggregationName(job), (ctx) =>
        syncAggregations(ctx, job, { nowMs: NOON }),
      ),
    ),
  ]);
  // The control-plane streams: the person behind sessions, accounts, suspensions.
  for (const stream of ENTITY_STREAMS)
    await run(deps, stream, (ctx) => syncEntityStream(ctx, stream, NOON));
  await deps.api.close();
  return {
    sim,
    config,
    w,
    outDir: mkdtempSync(join(testTmpDir(), "sessionhouse-reports-")),
  };
}
