// The directory streams' contract, against the simulator with some answers changed on purpose:
// a dead-lettered record is never taken as a deletion (a bad record with a readable id keeps
// that id, a bad record without one or a bad container keeps its whole scope), an id listed
// twice with different content keeps its stored version, a parent whose listing fails keeps
// its stored objects and does not keep the other parents from being stored, and policy
// suspensions are read whole whatever order the service pages in, a suspension the listing no
// longer holds stops being in force.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { syncEntityStream } from "../../../src/pipeline/entity-streams.js";
import type { EntityStream } from "../../../src/pipeline/names.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import { SimConnectError } from "../../../src/simulator/connect.js";
import {
  DIRECTORY_PATHS,
  directoryRoutes,
} from "../../../src/simulator/directory-routes.js";
import { SimClock, type Simulator } from "../../../src/simulator/index.js";
import type { RouteHandler } from "../../../src/simulator/server.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { chTime } from "../../../src/warehouse/format.js";
import { controlPlaneQueries } from "../../../src/warehouse/reports/control-plane.js";
import { memoryLogger } from "../../helpers/logs.js";
import {
  NOON,
  run,
  runDeps,
  simulatorWarehouse,
  testSimulator,
} from "../../helpers/simulator.js";
import { select } from "../../helpers/warehouse.js";

type Obj = Record<string, unknown>;
const HOUR = 3_600_000;

let sim: Simulator;
let clock: SimClock;
let config: Config;
let w: Warehouse;
const log = memoryLogger();

/** How each route's answer is changed now (identity when unset). */
const edits: Partial<
  Record<keyof typeof DIRECTORY_PATHS, (answer: Obj, body: Obj) => Obj>
> = {};
/** Requests answered with an error instead: by route, the parent id → Connect code. */
const refusals: Partial<
  Record<keyof typeof DIRECTORY_PATHS, (body: Obj) => string | undefined>
> = {};

beforeAll(async () => {
  clock = SimClock.fixed(NOON);
  sim = await testSimulator({
    clock,
    orgSize: {
      humans: 10,
      machines: 3,
      groups: 3,
      resources: 8,
      sidecars: 2,
      connectors: 1,
      spaces: 1,
    },
    sessionsPerDay: 1500,
    historyDays: 2,
  });
  const routes = new Map(directoryRoutes(sim.directory));
  for (const name of Object.keys(DIRECTORY_PATHS) as Array<
    keyof typeof DIRECTORY_PATHS
  >) {
    const path = DIRECTORY_PATHS[name];
    const handler = routes.get(path) as RouteHandler;
    sim.addRoute(path, async (body, ctx) => {
      const code = refusals[name]?.(body);
      if (code !== undefined)
        throw new SimConnectError(code as "not_found", `refused on purpose`);
      // Suspensions oldest first in pages of 20, whatever the request asks for.
      const asked =
        name === "listPolicySuspensions"
          ? { ...body, order: "asc", limit: 20 }
          : body;
      const answer = (await handler(asked, ctx)) as Obj;
      const edit = edits[name];
      return edit ? edit(structuredClone(answer), body) : answer;
    });
  }
  const base = await simulatorWarehouse(sim.url, {
    SESSIONHOUSE_INITIAL_LOOKBACK: "1d",
  });
  w = base.w;
  config = {
    ...base.config,
    api: { ...base.config.api, retryBaseMs: 5, retryMaxMs: 20 },
  };
  const deps = runDeps(config, w, { logger: log.logger });
  await run(deps, "sessions", (ctx) => syncSessions(ctx, { nowMs: NOON }));
  await deps.api.close();
}, 120_000);

afterAll(async () => {
  await w.close();
  await sim.close();
});

/** One run of a stream at the simulated now; the error it failed with, if it failed. */
async function sync(stream: EntityStream): Promise<Error | undefined> {
  const deps = runDeps(config, w, { logger: log.logger });
  try {
    await run(deps, stream, (ctx) =>
      syncEntityStream(ctx, stream, clock.now()),
    );
    return undefined;
  } catch (err) {
    return err as Error;
  } finally {
    await deps.api.close();
  }
}

async function ids(sql: string): Promise<string[]> {
  return (await select<{ id: string }>(w, sql)).map((r) => r.id).sort();
}

async function deletions(table: string): Promise<string[]> {
  return ids(
    `SELECT DISTINCT id FROM {db}.${table}_history FINAL WHERE is_deleted = 1`,
  );
}

async function deadLetters(job: string): Promise<string[]> {
  const rows = await select<{ reason: string }>(
    w,
    "SELECT reason FROM {db}.dead_letters FINAL WHERE job = {job:String}",
    { job },
  );
  return rows.map((r) => r.reason);
}

async function checkpointMs(stream: string): Promise<number | undefined> {
  const rows = await select<{ ms: string }>(
    w,
    "SELECT toUnixTimestamp64Milli(position) AS ms FROM {db}.checkpoints FINAL WHERE stream = {s:String}",
    { s: stream },
  );
  return rows[0] ? Number(rows[0].ms) : undefined;
}

describe("a dead letter is not a deletion", () => {
  it("a datastore whose databases cannot be read keeps every column stored under it, and only those", async () => {
    expect(await sync("inventory")).toBeUndefined();
    const stored = await ids("SELECT id FROM {db}.inventory_columns FINAL");
    const firstDatastore = (answer: Obj) =>
      ((answer.inventory as Obj[] | undefined) ?? []).find(
        (o) => o.datastore !== undefined,
      )?.datastore as Obj | undefined;
    const datastore = firstDatastore({
      inventory: sim.directory.inventory(clock.now()),
    });
    const underIt = await ids(
      `SELECT id FROM {db}.inventory_columns FINAL WHERE datastore_id = '${String(datastore?.id)}'`,
    );
    expect(underIt.length).toBeGreaterThan(0);

    // A column outside that datastore, left out of the same listing, is still gone.
    const [elsewhere] = await ids(
      `SELECT id FROM {db}.inventory_columns FINAL WHERE datastore_id = '' ORDER BY id LIMIT 1`,
    );
    expect(elsewhere).toBeDefined();
    const withoutColumn = (v: unknown): unknown => {
      if (Array.isArray(v))
        return v
          .filter(
            (x) =>
              (x as Obj | null)?.id !== elsewhere &&
              ((x as Obj | null)?.column as Obj | undefined)?.id !==
                elsewhere &&
              ((x as Obj | null)?.subColumn as Obj | undefined)?.id !==
                elsewhere,
          )
          .map(withoutColumn);
      if (typeof v !== "object" || v === null) return v;
      return Object.fromEntries(
        Object.entries(v).map(([k, x]) => [k, withoutColumn(x)]),
      );
    };

    edits.listInventoryObjects = (answer, body) => {
      const edited = withoutColumn(answer) as Obj;
      if (body.cursor === undefined) {
        const ds = firstDatastore(edited);
        if (ds) ds.dbs = "not a list";
      }
      return edited;
    };
    clock.set(NOON + 1000);
    expect(await sync("inventory")).toBeUndefined();
    delete edits.listInventoryObjects;

    expect(await ids("SELECT id FROM {db}.inventory_columns FINAL")).toEqual(
      stored.filter((id) => id !== elsewhere),
    );
    expect(await deletions("inventory_columns")).toEqual(
      (
        await ids(
          "SELECT id FROM {db}.inventory_columns_history FINAL WHERE is_deleted = 1 AND marked_for_deletion_at IS NOT NULL",
        )
      )
        .concat(elsewhere as string)
        .sort(),
    );
    expect(await deadLetters("inventory")).toContainEqual(
      expect.stringMatching(/dbs: expected a list of objects/),
    );
  });

  it("a link with a field of the wrong type keeps its stored version; the dead letter has the reason", async () => {
    expect(await sync("identity_links")).toBeUndefined();
    const stored = await ids(
      "SELECT id FROM {db}.native_user_identity_links FINAL",
    );
    let broken = "";
    edits.listIdentityLinks = (answer, body) => {
      const first = (answer.links as Obj[] | undefined)?.[0];
      if (first && body.cursor === undefined) {
        first.terminationProtection = "yes";
        broken = String(first.id);
      }
      return answer;
    };
    clock.set(NOON + 2000);
    expect(await sync("identity_links")).toBeUndefined();
    delete edits.listIdentityLinks;
    expect(broken).not.toBe("");
    expect(
      await ids("SELECT id FROM {db}.native_user_identity_links FINAL"),
    ).toEqual(stored);
    expect(await deletions("native_user_identity_links")).toEqual([]);
    expect(await deadLetters("identity_links")).toContainEqual(
      expect.stringMatching(/terminationProtection: expected a boolean/),
    );
  });

  it("a record without a readable id keeps the listing from proving any deletion", async () => {
    expect(await sync("clouds")).toBeUndefined();
    const stored = await ids("SELECT id FROM {db}.cloud_integrations FINAL");
    expect(stored.length).toBeGreaterThan(1);
    const gone = stored[0] as string;
    const without = (answer: Obj) => ({
      ...answer,
      clouds: (answer.clouds as Obj[]).filter((c) => c.id !== gone),
    });
    edits.listIntegrationClouds = (answer) => {
      const a = without(answer);
      a.clouds.push({ name: "no id", active: "yes" });
      return a;
    };
    clock.set(NOON + 3000);
    expect(await sync("clouds")).toBeUndefined();
    expect(await ids("SELECT id FROM {db}.cloud_integrations FINAL")).toEqual(
      stored,
    );
    expect(await deadLetters("clouds")).toContainEqual(
      expect.stringMatching(/id: missing/),
    );

    // Read whole, the listing proves the disappearance.
    edits.listIntegrationClouds = without;
    clock.set(NOON + 4000);
    expect(await sync("clouds")).toBeUndefined();
    delete edits.listIntegrationClouds;
    expect(await ids("SELECT id FROM {db}.cloud_integrations FINAL")).toEqual(
      stored.slice(1),
    );
    expect(await deletions("cloud_integrations")).toEqual([gone]);
  });

  it("an id listed twice with different content keeps its stored version, and both are dead letters", async () => {
    const before = await select<{ id: string; content_hash: string }>(
      w,
      "SELECT id, content_hash FROM {db}.native_user_identity_links FINAL ORDER BY id",
    );
    let twice = "";
    edits.listIdentityLinks = (answer, body) => {
      const links = answer.links as Obj[] | undefined;
      const first = links?.[0];
      if (links && first && body.cursor === undefined) {
        twice = String(first.id);
        links.push({ ...first, terminationProtection: true });
      }
      return answer;
    };
    clock.set(NOON + 5000);
    expect(await sync("identity_links")).toBeUndefined();
    delete edits.listIdentityLinks;
    expect(
      await select(
        w,
        "SELECT id, content_hash FROM {db}.native_user_identity_links FINAL ORDER BY id",
      ),
    ).toEqual(before);
    const versions = await select<{ n: string }>(
      w,
      "SELECT count() AS n FROM {db}.native_user_identity_links_history FINAL WHERE id = {id:String}",
      { id: twice },
    );
    expect(Number(versions[0]?.n)).toBe(1);
    const twiceLetters = (await deadLetters("identity_links")).filter((r) =>
      /listed twice/.test(r),
    );
    expect(twiceLetters).toHaveLength(2);
  });
});

describe("one parent does not block the others", () => {
  it("native users: every resource that answered is stored; the one that failed is named, keeps its rows, and the checkpoint waits", async () => {
    const resources = await ids(
      "SELECT DISTINCT resource_id AS id FROM {db}.sessions WHERE resource_id != ''",
    );
    const failing = resources[0] as string;
    const expected = (except: string) =>
      resources
        .filter((r) => r !== except)
        .flatMap((r) =>
          sim.directory
            .nativeUsersOf(r)
            .filter((n) => sim.directory.nativeUserPresent(n, clock.now()))
            .map((n) => n.id),
        )
        .sort();

    refusals.listNativeUsers = (body) =>
      body.resourceId === failing ? "not_found" : undefined;
    const err = await sync("native_users");
    expect(err).toMatchObject({ code: "PARENTS_FAILED" });
    expect(err?.message).toContain(failing);
    expect(err?.message).toContain("not_found");
    expect(await ids("SELECT id FROM {db}.native_users FINAL")).toEqual(
      expected(failing),
    );
    expect(await checkpointMs("native_users")).toBeUndefined();
    const runs = await select<{ status: string; error: string }>(
      w,
      "SELECT status, error FROM {db}.runs FINAL WHERE job = 'native_users'",
    );
    expect(runs).toHaveLength(1);
    expect(runs[0]?.status).toBe("failed");
    expect(runs[0]?.error).toContain(failing);
    expect(log.text()).toMatch(
      new RegExp(`"parent":"${failing}".*"code":"not_found"`),
    );

    // It answers again: stored, and the checkpoint moves.
    delete refusals.listNativeUsers;
    expect(await sync("native_users")).toBeUndefined();
    const all = await ids("SELECT id FROM {db}.native_users FINAL");
    expect(all).toEqual(expected(""));
    expect(await checkpointMs("native_users")).toBe(clock.now());

    // It fails again later: what was stored for it stays as it was.
    refusals.listNativeUsers = (body) =>
      body.resourceId === failing ? "unavailable" : undefined;
    clock.set(clock.now() + 1000);
    expect(await sync("native_users")).toMatchObject({
      code: "PARENTS_FAILED",
    });
    delete refusals.listNativeUsers;
    expect(await ids("SELECT id FROM {db}.native_users FINAL")).toEqual(all);
    expect(await deletions("native_users")).toEqual([]);
  });

  it("users: a GetUser that fails with another error than not_found keeps the other users", async () => {
    expect(await sync("policy_suspensions")).toBeUndefined();
    const users = await ids(
      "SELECT DISTINCT id FROM (SELECT arrayJoin([user_id, end_user_id]) AS id FROM {db}.sessions) WHERE id != ''",
    );
    const failing = users[1] as string;
    refusals.getUser = (body) =>
      body.id === failing ? "permission_denied" : undefined;
    const err = await sync("users");
    delete refusals.getUser;
    expect(err).toMatchObject({ code: "PARENTS_FAILED" });
    expect(err?.message).toContain(failing);
    const stored = await ids("SELECT id FROM {db}.users FINAL");
    expect(stored.length).toBeGreaterThan(1);
    expect(stored).not.toContain(failing);
    expect(await checkpointMs("users")).toBeUndefined();
    // Asked for again on the next run, and stored.
    expect(await sync("users")).toBeUndefined();
    expect(await ids("SELECT id FROM {db}.users FINAL")).toContain(failing);
  });

  it("user devices: one user's failing listing keeps the others and its own stored devices", async () => {
    expect(await sync("user_devices")).toBeUndefined();
    const stored = await ids("SELECT id FROM {db}.user_devices FINAL");
    expect(stored.length).toBeGreaterThan(2);
    const failing = (stored[0] as string).split("/")[0] as string;
    refusals.listUserDevices = (body) =>
      body.userId === failing ? "permission_denied" : undefined;
    clock.set(clock.now() + 1000);
    const err = await sync("user_devices");
    delete refusals.listUserDevices;
    expect(err).toMatchObject({ code: "PARENTS_FAILED" });
    expect(err?.message).toContain(failing);
    expect(await ids("SELECT id FROM {db}.user_devices FINAL")).toEqual(stored);
    expect(await deletions("user_devices")).toEqual([]);
  });
});

describe("policy suspensions", () => {
  it("are read whole when the service pages oldest first: a new one on a later page is stored", async () => {
    expect(await sync("policy_suspensions")).toBeUndefined();
    clock.set(NOON + 12 * HOUR);
    expect(await sync("policy_suspensions")).toBeUndefined();
    const listed = sim.directory
      .suspensions(clock.now())
      .map((s) => String(s.id));
    const stored = await ids(
      "SELECT DISTINCT id FROM {db}.policy_suspensions FINAL",
    );
    for (const id of listed) expect(stored, id).toContain(id);
  });

  it("one the listing no longer holds stops being in force; a dead-lettered one does not", async () => {
    const now = clock.now();
    // In force now and for the next hours.
    const inForce = await ids(
      `SELECT id FROM {db}.policy_suspensions_as_of(at = fromUnixTimestamp64Milli(${now}))
       WHERE expire_at IS NULL OR expire_at > fromUnixTimestamp64Milli(${now + 3 * HOUR})`,
    );
    expect(inForce.length).toBeGreaterThan(2);
    const [revoked, broken] = inForce as [string, string];
    edits.listPolicySuspensions = (answer) => {
      const list = (answer.policySuspensions as Obj[] | undefined) ?? [];
      for (const s of list) if (s.id === broken) s.expireAt = 7;
      return {
        ...answer,
        policySuspensions: list.filter((s) => s.id !== revoked),
      };
    };
    clock.set(now + HOUR);
    expect(await sync("policy_suspensions")).toBeUndefined();
    delete edits.listPolicySuspensions;
    const at = (ms: number) =>
      ids(
        `SELECT id FROM {db}.policy_suspensions_as_of(at = fromUnixTimestamp64Milli(${ms}))`,
      );
    const later = await at(now + HOUR + 1);
    expect(later).not.toContain(revoked);
    expect(later).toContain(broken);
    // Before it was revoked it was in force.
    expect(await at(now)).toContain(revoked);
    const latest = await select<{ id: string; removed: string }>(
      w,
      "SELECT id, toUnixTimestamp64Milli(assumeNotNull(removed_at)) AS removed FROM {db}.policy_suspensions_latest WHERE removed_at IS NOT NULL",
    );
    expect(Number(latest.find((r) => r.id === revoked)?.removed)).toBe(
      now + HOUR,
    );
    expect(latest.map((r) => r.id)).not.toContain(broken);
    expect(await deadLetters("policy_suspensions")).toContainEqual(
      expect.stringMatching(/expireAt: expected an RFC 3339 time/),
    );

    // The compliance report's suspensions in force during a period after the revocation.
    const inPeriod = await select<{ id: string }>(
      w,
      controlPlaneQueries.suspensions.sql.replaceAll("{{db}}", "{db}"),
      {
        from: chTime(now + HOUR + 1),
        to: chTime(now + HOUR + 2),
        user: "",
        resource: "",
      },
    );
    expect(inPeriod.map((r) => r.id)).toContain(broken);
    expect(inPeriod.map((r) => r.id)).not.toContain(revoked);

    // Listed again: in force again from that read.
    clock.set(now + 2 * HOUR);
    expect(await sync("policy_suspensions")).toBeUndefined();
    expect(await at(now + 2 * HOUR + 1)).toContain(revoked);
    expect(await at(now + HOUR + 1)).not.toContain(revoked);
  });
});
