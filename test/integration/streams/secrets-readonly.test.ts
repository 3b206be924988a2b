// The simulator's native users carry real-looking secrets (passwords, API key values, tokens,
// private keys, `secret`). After every job of `run` ran once — sessions, aggregations and every
// entity stream, with a broken native user and a broken link among the records — none of the
// secret values it served is in any table (dead letters included), any log line or the output
// of `status --json`. And the exporter asked the control plane for read operations only.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ControlPlaneApi } from "../../../src/api/control-plane.js";
import { main } from "../../../src/cli/main.js";
import type { Config } from "../../../src/config/index.js";
import { ENTITY_STREAMS } from "../../../src/pipeline/names.js";
import {
  pipelineJobs,
  planJobs,
  Scheduler,
} from "../../../src/scheduler/index.js";
import { SECRET_PREFIX } from "../../../src/simulator/directory.js";
import {
  DIRECTORY_PATHS,
  directoryRoutes,
} from "../../../src/simulator/directory-routes.js";
import type { RouteHandler } from "../../../src/simulator/server.js";
import type { Simulator } from "../../../src/simulator/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { memoryLogger } from "../../helpers/logs.js";
import { simulatorWarehouse, testSimulator } from "../../helpers/simulator.js";
import { migratedWarehouse, select } from "../../helpers/warehouse.js";

const SIM_NOW = Math.floor(Date.now() / 60_000) * 60_000;
const SECRET = new RegExp(`${SECRET_PREFIX}[a-z-]+-[0-9a-z]+`, "g");

let sim: Simulator;
let config: Config;
let w: Warehouse;
const served = new Set<string>();
const log = memoryLogger([], "trace");
let statusText = "";

type Obj = Record<string, unknown>;

/** The route as the simulator serves it, recording every secret value it sends, with the first
 *  record of each answer broken (a field of the wrong type) when `breakFirst` names its list. */
function recording(handler: RouteHandler, breakFirst: string): RouteHandler {
  return async (body, ctx) => {
    const answer = (await handler(body, ctx)) as Obj;
    const list = answer[breakFirst] as Obj[] | undefined;
    const first = list?.[0];
    if (first && body.cursor === undefined) first.terminationProtection = "yes";
    for (const m of JSON.stringify(answer).matchAll(SECRET)) served.add(m[0]);
    return answer;
  };
}

beforeAll(async () => {
  sim = await testSimulator({
    atMs: SIM_NOW,
    historyDays: 2,
    sessionsPerDay: 2000,
    orgSize: {
      humans: 10,
      machines: 3,
      groups: 3,
      resources: 12,
      sidecars: 2,
      connectors: 1,
      spaces: 1,
    },
  });
  const routes = new Map(directoryRoutes(sim.directory));
  for (const [path, member] of [
    [DIRECTORY_PATHS.listNativeUsers, "nativeUsers"],
    [DIRECTORY_PATHS.listIdentityLinks, "links"],
  ] as const) {
    const handler = routes.get(path);
    if (handler) sim.addRoute(path, recording(handler, member));
  }
  ({ config, w } = await simulatorWarehouse(sim.url, {
    SESSIONHOUSE_INITIAL_LOOKBACK: "1d",
    SESSIONHOUSE_RECONCILE_DAYS: "1",
  }));

  // Every job of `run`, once each, in plan order (users before devices).
  const api = ControlPlaneApi.fromConfig(config, log.logger);
  const plans = planJobs(config);
  const scheduler = new Scheduler({
    jobs: pipelineJobs(
      { config, api, warehouse: w, logger: log.logger },
      plans,
    ),
    maxConcurrentJobs: 1,
    shutdownDeadlineMs: 10_000,
    logger: log.logger,
  });
  for (const plan of plans) {
    scheduler.trigger(plan.name);
    while (scheduler.jobs().find((j) => j.job === plan.name)?.phase !== "idle")
      await new Promise((r) => setTimeout(r, 20));
  }
  await scheduler.shutdown();
  await api.close();
  await w.close();

  const written: string[] = [];
  const spy = vi
    .spyOn(process.stdout, "write")
    .mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
  const env = { ...process.env };
  try {
    process.env.SESSIONHOUSE_DATA_DIR = config.clickhouse.dataDir;
    process.env.CLICKHOUSE_DATABASE = config.clickhouse.database;
    if (config.clickhouse.url)
      process.env.CLICKHOUSE_URL = config.clickhouse.url;
    expect(await main(["node", "sessionhouse", "status", "--json"])).toBe(0);
  } finally {
    spy.mockRestore();
    process.env = env;
  }
  statusText = written.join("");
  w = await migratedWarehouse(config);
}, 120_000);

afterAll(async () => {
  await w.close();
  await sim.close();
});

describe("secrets and read-only access", () => {
  it("every stream ran and succeeded", async () => {
    const runs = await select<{ job: string; status: string }>(
      w,
      "SELECT job, status FROM {db}.runs FINAL",
    );
    for (const stream of ENTITY_STREAMS)
      expect(runs.find((r) => r.job === stream)?.status, stream).toBe(
        "succeeded",
      );
    const report = JSON.parse(statusText) as {
      jobs: Array<{ job: string; rowsStored: number | null }>;
    };
    for (const stream of ENTITY_STREAMS)
      expect(
        report.jobs.find((j) => j.job === stream)?.rowsStored,
        stream,
      ).toBeGreaterThan(0);
  });

  it("no secret value served is in a table, a dead letter, a log line or status", async () => {
    expect(served.size).toBeGreaterThan(5);
    // The broken records were dead-lettered, and kept their non-secret fields.
    const letters = await select<{ job: string; raw: string }>(
      w,
      "SELECT job, raw FROM {db}.dead_letters FINAL WHERE job IN ('native_users', 'identity_links')",
    );
    expect(new Set(letters.map((l) => l.job))).toEqual(
      new Set(["native_users", "identity_links"]),
    );
    expect(letters.some((l) => l.raw.includes('"username"'))).toBe(true);

    const tables = await select<{ name: string }>(
      w,
      "SELECT name FROM system.tables WHERE database = {d:String} AND engine NOT LIKE '%View%'",
      { d: w.database },
    );
    expect(tables.length).toBeGreaterThan(15);
    const texts: Array<[string, string]> = [
      ["logs", log.text()],
      ["status", statusText],
    ];
    for (const { name } of tables) {
      const rs = await w.client.query({
        query: `SELECT * FROM \`${w.database}\`.\`${name}\``,
        format: "JSONEachRow",
      });
      texts.push([name, await rs.text()]);
    }
    expect(log.text().length).toBeGreaterThan(1000);
    for (const [where, text] of texts) {
      expect(text.includes(SECRET_PREFIX), where).toBe(false);
      for (const s of served) expect(text.includes(s), where).toBe(false);
    }
  });

  it("asked only for read operations", () => {
    const methods = Object.keys(sim.stats().byMethod);
    for (const op of [
      "ListSessionsV2",
      "GetUser",
      "ListUserDevices",
      "ListNativeUsers",
      "ListNativeUserIdentityLinks",
      "ListInventoryObjects",
      "ListPolicySuspensions",
      "ListIntegrationClouds",
      "ListLogAggregations",
    ])
      expect(methods, op).toContain(op);
    for (const m of methods) expect(m).toMatch(/^(List|Get)[A-Z]/);
  });
});
