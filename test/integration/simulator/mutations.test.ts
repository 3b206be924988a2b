// The simulator's mutation mode over real HTTP: each mutation switched on alone, what it does to
// the answers, that a read at the same simulated time meets the same answer, and that the ground
// truth (heldIds, servedRecords, aggregationAnswers) says what was served. Without the mode the
// answers are those of a simulator started without it.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  MUTATION_KINDS,
  SimClock,
  parseMutationSpec,
  startSimulator,
  type Simulator,
} from "../../../src/simulator/index.js";
import { runSimulate } from "../../../src/cli/commands/simulate.js";
import { UsageError } from "../../../src/util/errors.js";
import { API_KEY, HOUR, T0, call, secs } from "../../helpers/simulator-call.js";

type Obj = Record<string, unknown>;
const MINUTE = 60_000;

let sim: Simulator;
let plain: Simulator;
const clock = SimClock.fixed(T0);

const options = {
  apiKey: API_KEY,
  seed: 5,
  clock,
  orgSize: "small" as const,
  historyDays: 2,
  sessionsPerDay: 2000,
};

beforeAll(async () => {
  sim = await startSimulator({ ...options, mutations: { seed: 11 } });
  plain = await startSimulator(options);
});
afterAll(async () => {
  await sim.close();
  await plain.close();
});
beforeEach(() => {
  clock.set(T0);
  for (const kind of MUTATION_KINDS) sim.setMutationRate(kind, 0);
  sim.clearServed();
});

async function list(
  s: Simulator,
  method: string,
  body: Obj = {},
): Promise<{ status: number; json: Obj; text: string }> {
  const [service, name] = method.split("/") as [string, string];
  const r = await call(s, name, { limit: 500, ...body }, { service });
  return { status: r.status, json: r.json ?? {}, text: r.text };
}

const SUSPENSIONS = "PoliciesService/ListPolicySuspensions";
const suspensionsOf = (j: Obj) =>
  (j.policySuspensions as Obj[] | undefined) ?? [];

describe("mutation mode", () => {
  it("changes nothing while every mutation is off", async () => {
    for (const method of [
      SUSPENSIONS,
      "ResourceService/ListNativeUserIdentityLinks",
      "InventoryService/ListInventoryObjects",
      "IntegrationCloudService/ListIntegrationClouds",
    ]) {
      const a = await list(sim, method);
      const b = await list(plain, method);
      expect(a.json, method).toEqual(b.json);
    }
    const body = {
      startTimestamp: secs(T0 - HOUR),
      endTimestamp: secs(T0),
      limit: 1000,
    };
    const a = await call(sim, "ListSessionsV2", body);
    const b = await call(plain, "ListSessionsV2", body);
    expect(a.status).toBe(200);
    expect(a.json).toEqual(b.json);
  });

  it("serves wrong-typed and id-less records, and says which were served broken", async () => {
    sim.setMutationRate("wrongType", 1);
    const broken = suspensionsOf((await list(sim, SUSPENSIONS)).json);
    expect(broken.length).toBeGreaterThan(0);
    for (const s of broken) expect(typeof s.createdAt).toBe("number");
    const served = sim.servedRecords("policy_suspensions");
    expect(served.size).toBe(broken.length);
    for (const s of broken)
      expect(served.get(String(s.id))).toEqual({
        readable: false,
        unreadable: true,
      });

    sim.setMutationRate("wrongType", 0);
    sim.setMutationRate("missingMember", 1);
    sim.clearServed();
    const idless = suspensionsOf((await list(sim, SUSPENSIONS)).json);
    for (const s of idless) expect(s.id).toBeUndefined();
    const marks = [...sim.servedRecords("policy_suspensions").values()];
    expect(marks).toHaveLength(idless.length);
    for (const r of marks) {
      expect(r.unreadable).toBe(true);
      // The mark is text of the record as served, by which its dead letter is found.
      expect(
        idless.some((s) => JSON.stringify(s).includes(String(r.mark))),
      ).toBe(true);
    }
  });

  it("repeats a record on a page and makes listMetadata.count disagree", async () => {
    sim.setMutationRate("duplicateId", 1);
    const dup = suspensionsOf((await list(sim, SUSPENSIONS)).json);
    const ids = dup.map((s) => s.id);
    expect(ids.length).toBe(new Set(ids).size + 1);
    sim.setMutationRate("duplicateId", 0);
    sim.setMutationRate("disagree", 1);
    const r = await list(sim, SUSPENSIONS);
    const meta = r.json.listMetadata as Obj;
    expect(meta.count).toBe(suspensionsOf(r.json).length + 1);
  });

  it("lets objects vanish for a slot and come back; a read at the same time answers the same", async () => {
    sim.setMutationRate("vanish", 0.3);
    const method = "ResourceService/ListNativeUserIdentityLinks";
    const all = new Set(
      ((await list(plain, method)).json.links as Obj[]).map((l) => l.id),
    );
    const first = await list(sim, method);
    const again = await list(sim, method);
    expect(again.text).toBe(first.text);
    const shown = new Set(((first.json.links as Obj[]) ?? []).map((l) => l.id));
    const held = sim.heldIds("identity_links");
    expect([...shown].sort()).toEqual([...held].sort());
    expect(shown.size).toBeLessThan(all.size);
    for (const id of shown) expect(all.has(id)).toBe(true);
    // The next slot: some of the vanished ones are back (the links themselves hold for hours).
    clock.set(T0 + HOUR);
    const later = new Set(
      (((await list(sim, method)).json.links as Obj[]) ?? []).map((l) => l.id),
    );
    const back = [...all].filter((id) => !shown.has(id) && later.has(id));
    expect(back.length).toBeGreaterThan(0);
    expect([...later].sort()).toEqual(
      [...sim.heldIds("identity_links")].sort(),
    );
  });

  it("answers not_found for a vanished user and lists no device of it", async () => {
    sim.setMutationRate("vanish", 0.5);
    const users = [...plain.heldIds("users")];
    const gone = users.filter((id) => !sim.heldIds("users").has(id));
    expect(gone.length).toBeGreaterThan(0);
    for (const id of gone.slice(0, 3)) {
      const r = await list(sim, "UserService/GetUser", {
        id,
        limit: undefined,
      });
      expect(r.status).toBe(404);
      expect(r.json.code).toBe("not_found");
    }
    expect(
      [...sim.heldIds("user_devices")].some((d) =>
        gone.some((u) => d.startsWith(`${u}/`)),
      ),
    ).toBe(false);
  });

  it("revokes suspensions: gone from their revocation on", async () => {
    sim.setMutationRate("revoked", 1);
    const before = sim.heldIds("policy_suspensions");
    const all = plain.heldIds("policy_suspensions");
    // Revoked 1 to 24 hours after creation: those created in the last hour are still held.
    expect(before.size).toBeGreaterThan(0);
    expect(before.size).toBeLessThan(all.size);
    const listed = suspensionsOf((await list(sim, SUSPENSIONS)).json).map(
      (s) => s.id,
    );
    expect(new Set(listed)).toEqual(before);
  });

  it("moves a session's startTime by a few minutes on reads after the correction", async () => {
    sim.setMutationRate("corrected", 1);
    const window = {
      startTimestamp: secs(T0 - 20 * MINUTE),
      endTimestamp: secs(T0 - 10 * MINUTE),
      limit: 1000,
    };
    const early = (await call(sim, "ListSessionsV2", window)).json
      ?.sessions as Obj[];
    expect(early.length).toBeGreaterThan(0);
    clock.set(T0 + HOUR);
    const late = (await call(sim, "ListSessionsV2", window)).json
      ?.sessions as Obj[];
    expect(late.map((s) => s.id)).toEqual(early.map((s) => s.id));
    for (const [i, s] of late.entries()) {
      const moved =
        Date.parse(String(s.startTime)) -
        Date.parse(String(early[i]?.startTime));
      expect(moved).toBeGreaterThanOrEqual(2 * MINUTE);
      expect(moved).toBeLessThanOrEqual(7 * MINUTE);
    }
    const got = await call(sim, "GetSession", { sessionId: late[0]?.id });
    expect((got.json?.session as Obj).startTime).toBe(late[0]?.startTime);
  });

  it("splits aggregation keys and makes a step's total disagree, and says so", async () => {
    const body = {
      startTimestamp: secs(T0 - 2 * HOUR),
      endTimestamp: secs(T0 - HOUR),
      histogramInterval: "30m",
      histogramGroupByFields: ["resource.technology"],
    };
    const keysOf = (j: Obj | undefined) =>
      (
        ((j?.aggregations as Obj).logsOverTime as Obj[])
          .flatMap((s) => (s.buckets as Obj[] | undefined) ?? [])
          .map((b) => `${String(b.key)}`) ?? []
      ).length;
    sim.setMutationRate("duplicateKey", 1);
    const split = await call(sim, "ListLogAggregations", body);
    const truth = await call(plain, "ListLogAggregations", body);
    expect(keysOf(split.json)).toBe(keysOf(truth.json) + 1);
    expect(split.json?.numHits).toBe(truth.json?.numHits);
    expect(sim.aggregationAnswers()).toMatchObject([
      {
        startMs: T0 - 2 * HOUR,
        groupBy: ["resource.technology"],
        mutation: "duplicateKey",
      },
    ]);

    sim.setMutationRate("duplicateKey", 0);
    sim.setMutationRate("disagree", 1);
    const lowered = await call(sim, "ListLogAggregations", body);
    const steps = (lowered.json?.aggregations as Obj).logsOverTime as Obj[];
    const total = steps.reduce((n, s) => n + Number(s.count ?? 0), 0);
    expect(total).toBeLessThan(Number(lowered.json?.numHits));
    expect(sim.aggregationAnswers()[0]?.mutation).toBe("disagree");

    sim.setMutationRate("disagree", 0);
    await call(sim, "ListLogAggregations", body);
    expect(sim.aggregationAnswers()[0]?.mutation).toBeUndefined();
  });

  it("is refused a rate without the mode, and a spec is parsed like --faults", () => {
    expect(() => plain.setMutationRate("vanish", 0.1)).toThrow(/mutation mode/);
    expect(plain.servedRecords("users").size).toBe(0);
    expect(parseMutationSpec("all=0.1,vanish=0.5,seed=3,slotMs=60000")).toEqual(
      {
        seed: 3,
        slotMs: 60000,
        rates: Object.fromEntries(
          MUTATION_KINDS.map((k) => [k, k === "vanish" ? 0.5 : 0.1]),
        ),
      },
    );
    expect(parseMutationSpec("duplicate-key=0.2").rates).toEqual({
      duplicateKey: 0.2,
    });
    expect(() => parseMutationSpec("sideways=1")).toThrow(/unknown mutation/);
    expect(() => parseMutationSpec("vanish=2")).toThrow(/between 0 and 1/);
  });

  it("is refused a bad --mutations spec before the simulator starts", async () => {
    const run = runSimulate({
      port: 0,
      host: "127.0.0.1",
      seed: 1,
      apiKey: API_KEY,
      clock: "real",
      brandMember: "formal",
      mutations: "vanish=often",
    });
    await expect(run).rejects.toThrow(UsageError);
    await expect(run).rejects.toThrow(
      /--mutations: vanish=often is not a number/,
    );
  });
});
