// The simulator's directory operations over HTTP: limits and required ids as the control plane
// checks them (docs/control-plane-wire.md, "Limits and rate limiting"), keyset paging by object
// id, and objects that change with the simulated clock.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SimClock,
  startSimulator,
  type Simulator,
} from "../../../src/simulator/index.js";

const KEY = "directory-test-key";
const T0 = Date.UTC(2026, 10, 16, 12);
type Obj = Record<string, unknown>;
let sim: Simulator;
let clock: SimClock;

beforeAll(async () => {
  clock = SimClock.fixed(T0);
  sim = await startSimulator({
    apiKey: KEY,
    seed: 5,
    clock,
    orgSize: "small",
    historyDays: 1,
    logAggregations: false,
  });
});
afterAll(async () => {
  await sim.close();
});

async function call(
  method: string,
  body: Obj,
): Promise<{ status: number; json: Obj }> {
  const res = await fetch(`${sim.url}/core.v1.${method}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-KEY": KEY },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Obj };
}

describe("directory operations", () => {
  it("refuse a limit over the operation's bound and a missing required id", async () => {
    const cases: Array<[string, Obj]> = [
      ["ResourceService/ListNativeUsers", { resourceId: "x", limit: 501 }],
      ["ResourceService/ListNativeUserIdentityLinks", { limit: 501 }],
      ["InventoryService/ListInventoryObjects", { limit: 1000 }],
      ["PoliciesService/ListPolicySuspensions", { limit: 501 }],
      ["DesktopService/ListUserDevices", { userId: "u", limit: 101 }],
      ["ResourceService/ListNativeUsers", { limit: 10 }],
      ["DesktopService/ListUserDevices", {}],
      ["UserService/GetUser", {}],
      ["PoliciesService/ListPolicySuspensions", { order: "sideways" }],
    ];
    for (const [method, body] of cases) {
      const r = await call(method, body);
      expect(r.status, method).toBe(400);
      expect(r.json.code, method).toBe("invalid_argument");
    }
    const unknown = await call("UserService/GetUser", { id: "usr_nobody" });
    expect(unknown.json.code).toBe("not_found");
    const ok = await call("ResourceService/ListNativeUserIdentityLinks", {
      limit: 500,
    });
    expect(ok.status).toBe(200);
  });

  it("pages by the id of the last object until there is no next cursor", async () => {
    const all = (
      await call("InventoryService/ListInventoryObjects", { limit: 500 })
    ).json.inventory as Obj[];
    const paged: Obj[] = [];
    let cursor = "";
    for (let pages = 0; pages < 1000; pages++) {
      const r = await call("InventoryService/ListInventoryObjects", {
        limit: 7,
        ...(cursor ? { cursor } : {}),
      });
      paged.push(...((r.json.inventory as Obj[] | undefined) ?? []));
      const next = (r.json.listMetadata as Obj).nextCursor;
      cursor = typeof next === "string" ? next : "";
      if (cursor === "") break;
    }
    expect(paged.length).toBeGreaterThan(7);
    expect(paged).toEqual(all.slice(0, paged.length));
    const kinds = new Set(paged.flatMap((o) => Object.keys(o)));
    expect([...kinds].sort()).toEqual(
      ["column", "datastore", "db", "schema", "subColumn", "table"].sort(),
    );
  });

  it("lists suspensions newest first and objects that change with the clock", async () => {
    const list = async () =>
      (await call("PoliciesService/ListPolicySuspensions", { limit: 500 })).json
        .policySuspensions as Obj[];
    const first = await list();
    const created = first.map((s) => String(s.createdAt));
    expect(created).toEqual([...created].sort().reverse());
    const links = async () =>
      (
        (
          await call("ResourceService/ListNativeUserIdentityLinks", {
            limit: 500,
          })
        ).json.links as Obj[]
      ).map((l) => String(l.id));
    const before = await links();
    clock.set(T0 + 3 * 86_400_000);
    const after = await links();
    expect((await list())[0]?.id).not.toBe(first[0]?.id);
    clock.set(T0);
    expect(after).not.toEqual(before);
  });
});
