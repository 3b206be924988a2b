// Every entity stream against the simulator, compared with an independent read of it (plain
// fetch, no exporter code): what ClickHouse holds as current state after a sync, and the
// history after the simulated clock moved on (changes, disappearances, nothing for unchanged
// objects). Then sessions_enriched: a session made through a native user resolves to the
// person its identity link named at the session's start, before and after the link changed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { syncEntityStream } from "../../../src/pipeline/entity-streams.js";
import {
  ENTITY_STREAMS,
  type EntityStream,
} from "../../../src/pipeline/names.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import { SimClock, type Simulator } from "../../../src/simulator/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { memoryLogger } from "../../helpers/logs.js";
import {
  API_KEY,
  NOON,
  run,
  runDeps,
  simulatorWarehouse,
  testSimulator,
} from "../../helpers/simulator.js";
import { select } from "../../helpers/warehouse.js";

const HOUR = 3_600_000;
const T0 = NOON;
/** Three days on: every identity link has been replaced at least once. */
const T1 = NOON + 72 * HOUR;

type Obj = Record<string, unknown>;

let sim: Simulator;
let clock: SimClock;
let config: Config;
let w: Warehouse;
const log = memoryLogger();

/** The simulator as an outsider reads it. */
async function call(method: string, body: Obj): Promise<Obj> {
  const res = await fetch(`${sim.url}/core.v1.${method}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-KEY": API_KEY },
    body: JSON.stringify(body),
  });
  return (await res.json()) as Obj;
}

async function listAll(
  method: string,
  member: string,
  body: Obj = {},
): Promise<Obj[]> {
  const out: Obj[] = [];
  let cursor = "";
  for (;;) {
    const page = await call(method, {
      ...body,
      limit: method.endsWith("ListUserDevices") ? 100 : 500,
      ...(cursor ? { cursor } : {}),
    });
    out.push(...((page[member] as Obj[] | undefined) ?? []));
    cursor =
      ((page.listMetadata as Obj | undefined)?.nextCursor as
        string | undefined) ?? "";
    if (cursor === "") return out;
  }
}

/** Drops what moves on every read and every secret value, recursively. */
function content(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(content);
  if (typeof v !== "object" || v === null) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v as Obj)) {
    if (
      [
        "updatedAt",
        "lastSeenAt",
        "secret",
        "password",
        "value",
        "token",
      ].includes(k)
    )
      continue;
    if (k === "key" && typeof x === "string" && x.startsWith("SIMSECRET-"))
      continue;
    out[k] = content(x);
  }
  return out;
}

function inventoryColumnsOf(objects: Obj[]): Map<string, Obj> {
  const out = new Map<string, Obj>();
  const walk = (o: unknown, key: string): void => {
    if (Array.isArray(o)) return o.forEach((x) => walk(x, key));
    if (typeof o !== "object" || o === null) return;
    const obj = o as Obj;
    if (key === "column" || key === "columns" || key === "subColumn")
      out.set(String(obj.id), obj);
    for (const [k, x] of Object.entries(obj))
      if (typeof x === "object") walk(x, k);
  };
  objects.forEach((o) => walk(o, ""));
  return out;
}

/** What one stream's objects are, read from the simulator: fingerprint by id (deleted: null). */
type Truth = Map<string, string | null>;

async function truth(stream: EntityStream): Promise<Truth> {
  const fp = (o: unknown) => JSON.stringify(content(o));
  const out: Truth = new Map();
  switch (stream) {
    case "users": {
      const ids = await select<{ id: string }>(
        w,
        `SELECT DISTINCT id FROM (
           SELECT arrayJoin([user_id, end_user_id]) AS id FROM {db}.sessions
           UNION ALL SELECT identity_id FROM {db}.policy_suspensions WHERE identity_type = 'user'
         ) WHERE id != ''`,
      );
      for (const { id } of ids) {
        const r = await call("UserService/GetUser", { id });
        if (r.user) {
          const u = r.user as Obj;
          out.set(
            id,
            fp({
              ...u,
              groupIds: [
                ...((u.groupIds as string[] | undefined) ?? []),
              ].sort(),
            }),
          );
        } else out.set(id, null);
      }
      return out;
    }
    case "user_devices": {
      const ids = await select<{ id: string }>(
        w,
        "SELECT id FROM {db}.users FINAL WHERE type = 'human'",
      );
      for (const { id } of ids)
        for (const d of await listAll(
          "DesktopService/ListUserDevices",
          "devices",
          { userId: id },
        ))
          out.set(`${id}/${String(d.deviceId)}`, fp(d));
      return out;
    }
    case "native_users": {
      const ids = await select<{ id: string }>(
        w,
        "SELECT DISTINCT resource_id AS id FROM {db}.sessions",
      );
      for (const { id } of ids)
        for (const n of await listAll(
          "ResourceService/ListNativeUsers",
          "nativeUsers",
          { resourceId: id },
        ))
          out.set(String(n.id), fp(n));
      return out;
    }
    case "identity_links":
      for (const l of await listAll(
        "ResourceService/ListNativeUserIdentityLinks",
        "links",
      )) {
        const nu = l.nativeUser as Obj;
        const who = (l.user ?? l.group ?? l.resourceHostname) as Obj;
        out.set(
          String(l.id),
          fp([
            nu.id,
            nu.resourceId,
            nu.username,
            who.id,
            (l.user as Obj | undefined)?.fullName,
            who.name,
            who.hostname,
          ]),
        );
      }
      return out;
    case "inventory":
      for (const [id, c] of inventoryColumnsOf(
        await listAll("InventoryService/ListInventoryObjects", "inventory"),
      ))
        out.set(
          id,
          c.markedForDeletionAt
            ? null
            : fp({ ...c, markedForDeletionAt: undefined }),
        );
      return out;
    case "clouds":
      for (const c of (
        await call("IntegrationCloudService/ListIntegrationClouds", {})
      ).clouds as Obj[])
        out.set(String(c.id), fp(c));
      return out;
    case "policy_suspensions":
      for (const s of await listAll(
        "PoliciesService/ListPolicySuspensions",
        "policySuspensions",
      ))
        out.set(
          `${String(s.id)}|${typeof s.expireAt === "string" ? s.expireAt : ""}`,
          fp(s),
        );
      return out;
  }
}

const TABLE: Record<Exclude<EntityStream, "policy_suspensions">, string> = {
  users: "users",
  user_devices: "user_devices",
  native_users: "native_users",
  identity_links: "native_user_identity_links",
  inventory: "inventory_columns",
  clouds: "cloud_integrations",
};

/** Sessions up to the simulated now, then every stream, as if the exporter ran at that time. */
async function syncAll(): Promise<void> {
  const deps = runDeps(config, w, { logger: log.logger });
  const nowMs = clock.now();
  await run(deps, "sessions", (ctx) => syncSessions(ctx, { nowMs }));
  for (const stream of ENTITY_STREAMS)
    await run(deps, stream, (ctx) => syncEntityStream(ctx, stream, nowMs));
}

const before = new Map<EntityStream, Truth>();
const after = new Map<EntityStream, Truth>();

beforeAll(async () => {
  clock = SimClock.fixed(T0);
  sim = await testSimulator({
    clock,
    orgSize: {
      humans: 12,
      machines: 4,
      groups: 4,
      resources: 10,
      sidecars: 2,
      connectors: 1,
      spaces: 1,
    },
    sessionsPerDay: 3000,
    historyDays: 3,
  });
  ({ config, w } = await simulatorWarehouse(sim.url, {
    SESSIONHOUSE_INITIAL_LOOKBACK: "1d",
    SESSIONHOUSE_PAGE_SIZE: "5000",
  }));
  await syncAll();
  for (const s of ENTITY_STREAMS) before.set(s, await truth(s));
  clock.set(T1);
  await syncAll();
  for (const s of ENTITY_STREAMS) after.set(s, await truth(s));
}, 120_000);

afterAll(async () => {
  await w.close();
  await sim.close();
});

const HISTORY_STREAMS = ENTITY_STREAMS.filter(
  (s): s is keyof typeof TABLE => s !== "policy_suspensions",
);

describe.each(HISTORY_STREAMS)("stream %s", (stream) => {
  it("holds the objects the simulator lists now, and each one's history", async () => {
    const t0 = before.get(stream) as Truth;
    const t1 = after.get(stream) as Truth;
    const table = TABLE[stream];
    const current = await select<{ id: string }>(
      w,
      `SELECT id FROM {db}.${table} FINAL ORDER BY id`,
    );
    const live = [...t1]
      .filter(([, v]) => v !== null)
      .map(([id]) => id)
      .sort();
    expect(current.map((r) => r.id)).toEqual(live);

    const versions = await select<{
      id: string;
      live: string;
      deleted: string;
      open: string;
    }>(
      w,
      `SELECT id, countIf(is_deleted = 0) AS live, countIf(is_deleted = 1) AS deleted, countIf(valid_to IS NULL) AS open FROM {db}.${table}_history FINAL GROUP BY id`,
    );
    const byId = new Map(versions.map((v) => [v.id, v]));
    let changed = 0;
    let gone = 0;
    let same = 0;
    for (const [id, v0] of t0) {
      if (v0 === null) continue;
      const v1 = t1.get(id);
      const h = byId.get(id);
      expect(h, id).toBeDefined();
      expect(Number(h?.open), id).toBe(1);
      if (v1 === undefined || v1 === null) {
        gone++;
        expect(Number(h?.deleted), `${id} gone`).toBe(1);
        expect(Number(h?.live), id).toBe(1);
      } else if (v1 !== v0) {
        changed++;
        expect(Number(h?.live), `${id} changed`).toBe(2);
      } else {
        same++;
        expect(Number(h?.live), `${id} unchanged`).toBe(1);
        expect(Number(h?.deleted), id).toBe(0);
      }
    }
    expect(same + changed + gone).toBeGreaterThan(0);
    // The organisation moved on between the reads: something changed or went away.
    expect(changed + gone, "changes between the reads").toBeGreaterThan(0);
  });
});

describe("stream policy_suspensions", () => {
  it("keeps every version read, the old one beside the new", async () => {
    const rows = await select<{ k: string }>(
      w,
      "SELECT concat(id, '|', if(expire_at IS NULL, '', formatDateTime(expire_at, '%Y-%m-%dT%H:%i:%SZ'))) AS k FROM {db}.policy_suspensions FINAL",
    );
    const stored = new Set(rows.map((r) => r.k));
    const norm = (k: string) => k.replace(/\.\d+Z$/, "Z");
    for (const k of [
      ...(before.get("policy_suspensions") as Truth).keys(),
      ...(after.get("policy_suspensions") as Truth).keys(),
    ])
      expect(stored.has(norm(k)), k).toBe(true);
    const multi = await select<{ n: string }>(
      w,
      "SELECT count() AS n FROM (SELECT id FROM {db}.policy_suspensions FINAL GROUP BY id HAVING count() > 1)",
    );
    expect(Number(multi[0]?.n)).toBeGreaterThan(0);
  });
});

describe("sessions_enriched", () => {
  it("names the person behind a native-user session as linked at its start, before and after the link changed", async () => {
    const sessions = await select<{
      id: string;
      start_ms: string;
      resource_id: string;
      native_username: string;
      person_id: string;
      person_via: string;
    }>(
      w,
      "SELECT id, toUnixTimestamp64Milli(start_time) AS start_ms, resource_id, native_username, person_id, person_via FROM {db}.sessions_enriched WHERE user_type = 'native'",
    );
    expect(sessions.length).toBeGreaterThan(20);
    // The links the exporter read, at T0 and T1, by native user.
    const observed = (at: number) => {
      const links = sim.directory.links(at);
      return new Map(
        links.map((l) => {
          const nu = l.nativeUser as Obj;
          return [`${String(nu.resourceId)}|${String(nu.username)}`, l];
        }),
      );
    };
    const atT0 = observed(T0);
    const atT1 = observed(T1);
    const truthCache = new Map<number, Map<string, Obj>>();
    let checked = 0;
    const personsByNative = new Map<string, Set<string>>();
    for (const s of sessions) {
      const start = Number(s.start_ms);
      const period = Math.floor(start / (6 * HOUR));
      let at = truthCache.get(period);
      if (!at) {
        at = observed(start);
        truthCache.set(period, at);
      }
      const key = `${s.resource_id}|${s.native_username}`;
      const link = at.get(key);
      // Only links the exporter saw: the one of T0 or of T1.
      if (
        !link ||
        (link.id !== atT0.get(key)?.id && link.id !== atT1.get(key)?.id)
      )
        continue;
      const who = (link.user ?? link.group) as Obj | undefined;
      if (!who) continue;
      expect(s.person_via, s.id).toBe(link.user ? "link_user" : "link_group");
      expect(s.person_id, s.id).toBe(who.id);
      checked++;
      const set = personsByNative.get(key) ?? new Set();
      set.add(s.person_id);
      personsByNative.set(key, set);
    }
    expect(checked).toBeGreaterThan(10);
    // The same native user led to one person before the link changed and another after.
    expect([...personsByNative.values()].some((p) => p.size > 1)).toBe(true);
  });

  it("gives brand sessions their end user or user, and every session its resource's labels", async () => {
    const rows = await select<{ n: string }>(
      w,
      `SELECT count() AS n FROM {db}.sessions_enriched
       WHERE user_type != 'native' AND (person_via != 'brand' OR person_id != if(end_user_id != '', end_user_id, user_id))`,
    );
    expect(Number(rows[0]?.n)).toBe(0);
    const labelled = await select<{
      resource_id: string;
      data_labels: string[];
    }>(
      w,
      "SELECT DISTINCT resource_id, data_labels FROM {db}.sessions_enriched WHERE notEmpty(data_labels)",
    );
    expect(labelled.length).toBeGreaterThan(0);
    const inventory = inventoryColumnsOf(
      await listAll("InventoryService/ListInventoryObjects", "inventory"),
    );
    for (const r of labelled) {
      const labels = new Set<string>();
      for (const c of inventory.values())
        if (
          c.resourceId === r.resource_id &&
          !c.markedForDeletionAt &&
          c.dataLabel
        )
          labels.add(c.dataLabel as string);
      expect(r.data_labels, r.resource_id).toEqual([...labels].sort());
    }
  });
});
