// The demo data the dashboards are proved against: a migrated ClickHouse filled by one sync of
// sessions and of every default aggregation job from the simulator, as `docker compose
// --profile demo up` would fill it, over the DEMO_DAYS before NOON (with the simulator's daily
// discovery sweep), and every entity stream, and the hits the shipped detections find in it.
import type { Config } from "../../src/config/index.js";
import { evaluateRules } from "../../src/detections/evaluate.js";
import {
  loadRules,
  SHIPPED_RULES_DIR,
  type Rule,
} from "../../src/detections/rule.js";
import { readsSessions } from "../../src/detections/query.js";
import { syncAggregations } from "../../src/pipeline/aggregations.js";
import { syncSessions } from "../../src/pipeline/session-sync.js";
import type { Simulator } from "../../src/simulator/index.js";
import type { Warehouse } from "../../src/warehouse/client.js";
import { quoteIdent } from "../../src/warehouse/sql.js";
import { API_KEY, NOON, run, runDeps, testSimulator } from "./simulator.js";
import { migratedWarehouse, testConfig } from "./warehouse.js";
import { ENTITY_STREAMS, SESSIONS_JOB } from "../../src/pipeline/names.js";
import { syncEntityStream } from "../../src/pipeline/entity-streams.js";

export const DAY_MS = 86_400_000;
/** Days synced before NOON, and the dashboards' time range in the tests. */
export const DEMO_DAYS = 2;
/**
 * How long before the synced days the history lies: the first synced day's sessions, stored
 * again this many days earlier under ids ending in `-h`, as an earlier sync would have stored
 * them. Panels that compare the time range with what came before (first seen, active again
 * after 30 days) find both.
 */
export const HISTORY_DAYS = 35;
/** The command-and-control addresses of detections/sigma/net_firewall_apt_equationgroup_c2.yml. */
export const INTRUDER_ADDRESSES = ["69.42.98.86", "89.185.234.145"];

export interface DemoWarehouse {
  sim: Simulator;
  config: Config;
  warehouse: Warehouse;
  close(): Promise<void>;
}

export async function demoWarehouse(): Promise<DemoWarehouse> {
  // With its daily discovery sweep, so that many-resources-short-time has a person to find, and
  // a daily session from each Equation Group C2 address (equation-group-c2).
  const sim = await testSimulator({
    discoverySweeps: true,
    intruderAddresses: INTRUDER_ADDRESSES,
  });
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
  const sessions = `${quoteIdent(warehouse.database)}.sessions`;
  await warehouse.client.command({
    query: `INSERT INTO ${sessions}
      SETTINGS insert_deduplication_token = 'demo-history'
      SELECT * REPLACE (
        concat(id, '-h') AS id,
        start_time - INTERVAL ${HISTORY_DAYS} DAY AS start_time,
        end_time - INTERVAL ${HISTORY_DAYS} DAY AS end_time,
        if(parent_session_id = '', '', concat(parent_session_id, '-h')) AS parent_session_id
      )
      FROM (
        SELECT * FROM ${sessions} FINAL
        WHERE start_time < fromUnixTimestamp64Milli(${NOON - (DEMO_DAYS - 1) * DAY_MS})
      )`,
  });
  // The shipped detections over everything that arrived, as the detections job of `run` finds
  // it: the rules that read the directory once just after its last read (it arrived at the
  // simulator's clock, NOON), then every rule now (the sessions and aggregations arrived at the
  // wall clock's; a session rule reads every session read since its window's start, so it is
  // evaluated only now, when its hits are detected). The demo stands for data that arrived as it
  // happened (the simulator's clock is its now; the writer stores at the wall clock only because
  // a test cannot move it), so none of its hits is history: those of the rules that page are
  // alerts.
  const rules = loadRules([SHIPPED_RULES_DIR]);
  const evaluations: [number, Rule[]][] = [
    [NOON + 60_000, rules.filter((r) => !readsSessions(r))],
    [Date.now(), rules],
  ];
  for (const [nowMs, evaluated] of evaluations)
    await evaluateRules(warehouse, evaluated, {
      insert: { retries: 0 },
      initialLookbackMs: DAY_MS,
      nowMs,
      historicalAfterMs: Number.MAX_SAFE_INTEGER,
    });
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
