// What `listMetadata.count` counts is not known (the page, or the whole listing). Against a
// simulator whose count is the listing's total, a listing of many pages is stored whole, for
// sessions and for a directory stream, and the difference is noted in one log line per listing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { syncEntityStream } from "../../../src/pipeline/entity-streams.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import {
  DIRECTORY_PATHS,
  directoryRoutes,
} from "../../../src/simulator/directory-routes.js";
import {
  LIST_SESSIONS_PATH,
  type Simulator,
} from "../../../src/simulator/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { memoryLogger } from "../../helpers/logs.js";
import {
  API_KEY,
  expectedSessions,
  NOON,
  run,
  runDeps,
  simulatorWarehouse,
  testSimulator,
} from "../../helpers/simulator.js";
import { select } from "../../helpers/warehouse.js";

const HOUR = 3_600_000;
type Obj = Record<string, unknown>;

let sim: Simulator;
let config: Config;
let w: Warehouse;
const log = memoryLogger([], "info");

async function call(path: string, body: Obj): Promise<Obj> {
  const res = await fetch(`${sim.url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-KEY": API_KEY },
    body: JSON.stringify(body),
  });
  return (await res.json()) as Obj;
}

beforeAll(async () => {
  sim = await testSimulator({
    countMeans: "total",
    historyDays: 2,
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
  // Links in pages of 10.
  const links = new Map(
    directoryRoutes(sim.directory, { countMeans: "total" }),
  ).get(DIRECTORY_PATHS.listIdentityLinks);
  if (!links) throw new Error("no links route");
  sim.addRoute(DIRECTORY_PATHS.listIdentityLinks, (body, ctx) =>
    links({ ...body, limit: 10 }, ctx),
  );
  ({ config, w } = await simulatorWarehouse(sim.url, {
    SESSIONHOUSE_INITIAL_LOOKBACK: "6h",
    SESSIONHOUSE_PAGE_SIZE: "100",
  }));
}, 60_000);

afterAll(async () => {
  await w.close();
  await sim.close();
});

describe("a count that is the listing's total", () => {
  it("is what the simulator sends when told to", async () => {
    const page = await call(LIST_SESSIONS_PATH, {
      limit: 10,
      startTimestamp: String((NOON - 6 * HOUR) / 1000),
      endTimestamp: String(NOON / 1000),
    });
    expect(page.sessions).toHaveLength(10);
    expect(Number((page.listMetadata as Obj).count)).toBeGreaterThan(10);
    const links = await call(DIRECTORY_PATHS.listIdentityLinks, {});
    expect(links.links).toHaveLength(10);
    expect(Number((links.listMetadata as Obj).count)).toBeGreaterThan(10);
  });

  it("sessions: a listing of many pages is stored whole", async () => {
    const deps = runDeps(config, w, { logger: log.logger });
    await run(deps, "sessions", (ctx) => syncSessions(ctx, { nowMs: NOON }));
    await deps.api.close();
    const [cp] = await select<{ ms: string }>(
      w,
      "SELECT toUnixTimestamp64Milli(position) AS ms FROM {db}.checkpoints FINAL WHERE stream = 'sessions'",
    );
    const until = Number(cp?.ms);
    expect(until).toBeGreaterThan(NOON - 2 * HOUR);
    const expected = (await expectedSessions(sim, NOON - 5 * HOUR, until)).map(
      (s) => String(s.id),
    );
    expect(expected.length).toBeGreaterThan(300);
    const stored = new Set(
      (
        await select<{ id: string }>(w, "SELECT id FROM {db}.sessions FINAL")
      ).map((r) => r.id),
    );
    expect(expected.filter((id) => !stored.has(id))).toEqual([]);
    expect(log.text()).toMatch(
      /"operation":"ListSessionsV2".*"count":"\d+".*"records":\d+.*listMetadata.count differs/,
    );
  });

  it("identity links: a listing of many pages is stored whole", async () => {
    const deps = runDeps(config, w, { logger: log.logger });
    await run(deps, "identity_links", (ctx) =>
      syncEntityStream(ctx, "identity_links", NOON),
    );
    await deps.api.close();
    const stored = await select<{ id: string }>(
      w,
      "SELECT id FROM {db}.native_user_identity_links FINAL",
    );
    const listed = sim.directory.links(NOON).map((l) => String(l.id));
    expect(listed.length).toBeGreaterThan(20);
    expect(stored.map((r) => r.id).sort()).toEqual(listed.sort());
    const noted = log.lines.filter((l) =>
      l.includes('"operation":"listIdentityLinks"'),
    );
    expect(noted).toHaveLength(1);
    expect(noted[0]).toContain(`"records":${listed.length}`);
  });
});
