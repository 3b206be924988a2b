// The entity streams against a simulator that answers 503, resets connections and refuses a
// cursor as expired: every stream still ends with what a clean simulator of the same
// organisation lists at the same instant.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { syncEntityStream } from "../../../src/pipeline/entity-streams.js";
import { ENTITY_STREAMS } from "../../../src/pipeline/names.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import { SimConnectError } from "../../../src/simulator/connect.js";
import {
  DIRECTORY_PATHS,
  directoryRoutes,
} from "../../../src/simulator/directory-routes.js";
import { parseFaultSpec } from "../../../src/simulator/faults.js";
import type { Simulator } from "../../../src/simulator/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  NOON,
  run,
  runDeps,
  simulatorWarehouse,
  testSimulator,
} from "../../helpers/simulator.js";
import { select } from "../../helpers/warehouse.js";

const ORG = {
  humans: 10,
  machines: 3,
  groups: 3,
  resources: 40,
  sidecars: 2,
  connectors: 1,
  spaces: 1,
};
let faulty: Simulator;
let clean: Simulator;
let config: Config;
let w: Warehouse;
let refused = false;

beforeAll(async () => {
  const options = { orgSize: ORG, sessionsPerDay: 1500, historyDays: 2 };
  faulty = await testSimulator({
    ...options,
    faults: parseFaultSpec("rate503=0.1,reset=0.05,seed=11"),
  });
  clean = await testSimulator(options);
  // Links in pages of 20, and the first cursor refused once as expired: the listing restarts.
  const links = new Map(directoryRoutes(faulty.directory)).get(
    DIRECTORY_PATHS.listIdentityLinks,
  );
  if (!links) throw new Error("no links route");
  faulty.addRoute(DIRECTORY_PATHS.listIdentityLinks, (body, ctx) => {
    if (typeof body.cursor === "string" && !refused) {
      refused = true;
      throw new SimConnectError(
        "invalid_argument",
        "cursor expired: restart the listing",
      );
    }
    return links({ ...body, limit: 20 }, ctx);
  });
  const base = await simulatorWarehouse(faulty.url, {
    SESSIONHOUSE_INITIAL_LOOKBACK: "1d",
  });
  w = base.w;
  // Short waits between retries: the faults are many, the test is small.
  config = {
    ...base.config,
    api: {
      ...base.config.api,
      retryBaseMs: 5,
      retryMaxMs: 50,
      runRetryBudget: 10_000,
    },
  };
  const deps = runDeps(config, w);
  await run(deps, "sessions", (ctx) => syncSessions(ctx, { nowMs: NOON }));
  for (const stream of ENTITY_STREAMS)
    await run(deps, stream, (ctx) => syncEntityStream(ctx, stream, NOON));
  await deps.api.close();
}, 120_000);

afterAll(async () => {
  await w.close();
  await faulty.close();
  await clean.close();
});

describe("entity streams under faults", () => {
  it("met the faults", () => {
    const f = faulty.stats().faults;
    expect(f.rate503).toBeGreaterThan(0);
    expect(f.reset).toBeGreaterThan(0);
    expect(refused).toBe(true);
    expect(faulty.stats().byMethod.ListNativeUserIdentityLinks).toBeGreaterThan(
      3,
    );
  });

  it("store what a clean simulator lists", async () => {
    const links = clean.directory.links(NOON).map((l) => String(l.id));
    const stored = await select<{ id: string }>(
      w,
      "SELECT id FROM {db}.native_user_identity_links FINAL",
    );
    expect(stored.map((r) => r.id).sort()).toEqual(links.sort());

    const suspensions = clean.directory.suspensions(NOON).map((s) => s.id);
    const storedSuspensions = await select<{ id: string }>(
      w,
      "SELECT DISTINCT id FROM {db}.policy_suspensions",
    );
    expect(storedSuspensions.map((r) => r.id).sort()).toEqual(
      [...new Set(suspensions)].sort(),
    );

    const columns = await select<{ n: string }>(
      w,
      "SELECT count() AS n FROM {db}.inventory_columns FINAL",
    );
    expect(Number(columns[0]?.n)).toBeGreaterThan(20);

    const runs = await select<{ job: string; status: string }>(
      w,
      "SELECT job, status FROM {db}.runs FINAL",
    );
    for (const stream of ENTITY_STREAMS)
      expect(runs.find((r) => r.job === stream)?.status, stream).toBe(
        "succeeded",
      );
  });
});
