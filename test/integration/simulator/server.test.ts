import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SimClock,
  SimConnectError,
  startSimulator,
  statusAt,
  type Simulator,
  type SimSession,
} from "../../../src/simulator/index.js";
import {
  API_KEY,
  DAY,
  HOUR,
  T0,
  call,
  nextCursorOf,
  pageAll,
  secs,
  sessionsOf,
  type WireRecord,
} from "../../helpers/simulator-call.js";

const WINDOW = { startTimestamp: secs(T0 - 6 * HOUR), endTimestamp: secs(T0) };

describe("simulator server", () => {
  let sim: Simulator;

  beforeAll(async () => {
    sim = await startSimulator({
      apiKey: API_KEY,
      seed: 1,
      clock: SimClock.fixed(T0),
      historyDays: 30,
    });
  });
  afterAll(async () => {
    await sim.close();
  });

  it("listens on a free port of 127.0.0.1", () => {
    expect(sim.url).toBe(`http://127.0.0.1:${sim.port}`);
    expect(sim.port).toBeGreaterThan(0);
  });

  it("pages a window into exactly its sessions, in order, without duplicates", async () => {
    const pages = await pageAll(sim, { limit: 700, ...WINDOW });
    const ids = pages.flatMap((p) => sessionsOf(p).map((s) => s.id as string));
    const expected = sim.generator
      .sessionsStartingIn(T0 - 6 * HOUR, T0)
      .map((s) => s.id);
    expect(expected.length).toBeGreaterThan(2000);
    expect(ids).toEqual(expected);
    expect(new Set(ids).size).toBe(ids.length);
    const last = pages[pages.length - 1];
    expect(last && nextCursorOf(last)).toBeUndefined();
    for (const p of pages.slice(0, -1)) {
      expect(sessionsOf(p)).toHaveLength(700);
      expect((p.json?.listMetadata as { count?: number }).count).toBe(700);
    }
  });

  it("omits nextCursor when the last page is exactly full", async () => {
    const n = sim.generator.sessionsStartingIn(T0 - 6 * HOUR, T0).length;
    const r = await call(sim, "ListSessionsV2", { limit: n, ...WINDOW });
    expect(sessionsOf(r)).toHaveLength(n);
    expect(nextCursorOf(r)).toBeUndefined();
  });

  it("accepts Unix seconds and RFC 3339 alike, and empty bounds", async () => {
    const a = await call(sim, "ListSessionsV2", { limit: 50, ...WINDOW });
    const b = await call(sim, "ListSessionsV2", {
      limit: 50,
      startTimestamp: new Date(T0 - 6 * HOUR).toISOString(),
      endTimestamp: "2026-11-04T12:00:00Z",
    });
    expect(sessionsOf(b)).toEqual(sessionsOf(a));
    // no start: from the history start (30 days before T0's day)
    const c = await call(sim, "ListSessionsV2", { limit: 1 });
    const first = sessionsOf(c)[0];
    expect(Date.parse(first?.startTime as string)).toBeGreaterThanOrEqual(
      Date.UTC(2026, 10, 4) - 30 * DAY,
    );
    expect(Date.parse(first?.startTime as string)).toBeLessThan(
      Date.UTC(2026, 10, 4) - 30 * DAY + HOUR,
    );
    // no end: up to now, never sessions that have not started
    const d = await pageAll(sim, {
      limit: 100_000,
      startTimestamp: secs(T0 - HOUR),
    });
    const all = d.flatMap(sessionsOf);
    expect(all.length).toBe(
      sim.generator.sessionsStartingIn(T0 - HOUR, T0 + 1).length,
    );
    expect(all.every((s) => Date.parse(s.startTime as string) <= T0)).toBe(
      true,
    );
    // an explicit end in the future is capped at now
    const e = await call(sim, "ListSessionsV2", {
      limit: 100_000,
      startTimestamp: secs(T0 - HOUR),
      endTimestamp: secs(T0 + DAY),
    });
    expect(sessionsOf(e)).toHaveLength(all.length);
  });

  it("validates limit, timestamps, strings and cursors", async () => {
    for (const limit of [0, 100_001, "abc", 1.5, -3, null, true]) {
      const r = await call(sim, "ListSessionsV2", { limit, ...WINDOW });
      expect(r.status, `limit ${String(limit)}`).toBe(400);
      expect(r.json?.code).toBe("invalid_argument");
      expect(r.json?.message).toMatch(/limit/);
    }
    const missing = await call(sim, "ListSessionsV2", { ...WINDOW });
    expect(missing.json?.code).toBe("invalid_argument");
    const asString = await call(sim, "ListSessionsV2", {
      limit: "5",
      ...WINDOW,
    });
    expect(sessionsOf(asString)).toHaveLength(5);
    const badTs = await call(sim, "ListSessionsV2", {
      limit: 5,
      startTimestamp: "last tuesday",
    });
    expect(badTs.status).toBe(400);
    expect(badTs.json?.message).toMatch(/startTimestamp/);
    const badType = await call(sim, "ListSessionsV2", { limit: 5, query: 7 });
    expect(badType.json?.code).toBe("invalid_argument");
    const garbage = await call(sim, "ListSessionsV2", {
      limit: 5,
      ...WINDOW,
      cursor: "not a cursor!",
    });
    expect(garbage.status).toBe(400);
    expect(garbage.json?.code).toBe("invalid_argument");
    const first = await call(sim, "ListSessionsV2", { limit: 5, ...WINDOW });
    const cursor = nextCursorOf(first);
    expect(cursor).toBeDefined();
    const otherFilter = await call(sim, "ListSessionsV2", {
      limit: 5,
      startTimestamp: WINDOW.startTimestamp,
      cursor,
    });
    expect(otherFilter.json?.code).toBe("invalid_argument");
    expect(otherFilter.json?.message).toMatch(/cursor/);
    const tampered =
      (cursor ?? "").slice(0, -2) +
      ((cursor ?? "").endsWith("A") ? "BB" : "AA");
    const t = await call(sim, "ListSessionsV2", {
      limit: 5,
      ...WINDOW,
      cursor: tampered,
    });
    expect(t.json?.code).toBe("invalid_argument");
    // another limit with the same filter is fine: the cursor is a position
    const more = await call(sim, "ListSessionsV2", {
      limit: 7,
      ...WINDOW,
      cursor,
    });
    expect(sessionsOf(more)).toHaveLength(7);
  });

  it("honours simple field:value queries", async () => {
    const r = await call(sim, "ListSessionsV2", {
      limit: 100_000,
      ...WINDOW,
      query: "resource.technology:postgres AND sessionStatus:completed",
    });
    const got = sessionsOf(r);
    expect(got.length).toBeGreaterThan(10);
    expect(
      got.every(
        (s) =>
          (s.resource as { technology: string }).technology === "postgres" &&
          s.sessionStatus === "completed",
      ),
    ).toBe(true);
    const human = sim.generator.index.humans[0];
    const byEmail = await call(sim, "ListSessionsV2", {
      limit: 1000,
      startTimestamp: secs(T0 - 20 * DAY),
      endTimestamp: secs(T0),
      query: `user.email:"${human?.email ?? ""}"`,
    });
    for (const s of sessionsOf(byEmail)) {
      const ident = (s.user as Record<string, { user: { email?: string } }>)
        .formal?.user;
      expect(ident?.email).toBe(human?.email);
    }
  });

  it("rejects missing and wrong API keys without echoing them", async () => {
    const missing = await call(
      sim,
      "ListSessionsV2",
      { limit: 1 },
      { key: null },
    );
    expect(missing.status).toBe(401);
    expect(missing.json?.code).toBe("unauthenticated");
    const wrong = await call(
      sim,
      "ListSessionsV2",
      { limit: 1 },
      { key: "sekrit-wrong-key-42" },
    );
    expect(wrong.status).toBe(401);
    expect(wrong.json?.code).toBe("unauthenticated");
    expect(wrong.text).not.toContain("sekrit");
    const lower = await fetch(
      `${sim.url}/core.v1.SessionsService/ListSessionsV2`,
      {
        method: "POST",
        headers: {
          "content-type": "application/json; charset=utf-8",
          "x-api-key": API_KEY,
        },
        body: JSON.stringify({ limit: 1 }),
      },
    );
    expect(lower.status).toBe(200);
  });

  it("answers protocol errors as Connect errors with rate-limit headers", async () => {
    const get = await fetch(
      `${sim.url}/core.v1.SessionsService/ListSessionsV2`,
      { headers: { "X-Api-Key": API_KEY } },
    );
    expect(get.status).toBe(405);
    expect(((await get.json()) as { code: string }).code).toBe("unimplemented");
    expect(get.headers.get("x-ratelimit-limit")).toBe("6000");
    const unknown = await call(
      sim,
      "ListThings",
      {},
      { service: "ThingService" },
    );
    expect(unknown.status).toBe(404);
    expect(unknown.json?.code).toBe("unimplemented");
    const text = await call(
      sim,
      "ListSessionsV2",
      {},
      { headers: { "Content-Type": "text/plain" }, raw: "{}" },
    );
    expect(text.status).toBe(415);
    expect(text.json?.code).toBe("invalid_argument");
    const notJson = await call(sim, "ListSessionsV2", {}, { raw: "{limit:" });
    expect(notJson.status).toBe(400);
    expect(notJson.json?.code).toBe("invalid_argument");
    const array = await call(sim, "ListSessionsV2", {}, { raw: "[1]" });
    expect(array.json?.code).toBe("invalid_argument");
    for (const r of [unknown, text, notJson, array]) {
      expect(r.headers.get("x-ratelimit-limit")).toBe("6000");
      expect(Number(r.headers.get("x-ratelimit-remaining"))).toBeGreaterThan(0);
      expect(Number(r.headers.get("x-ratelimit-reset"))).toBeGreaterThan(
        Date.now() / 1000 - 1,
      );
    }
  });

  it("serves GetSession", async () => {
    const page = sessionsOf(
      await call(sim, "ListSessionsV2", { limit: 3, ...WINDOW }),
    );
    const id = page[1]?.id as string;
    const r = await call(sim, "GetSession", { sessionId: id });
    expect(r.status).toBe(200);
    expect(r.json?.session).toEqual(page[1]);
    expect((await call(sim, "GetSession", {})).json?.code).toBe(
      "invalid_argument",
    );
    expect((await call(sim, "GetSession", { sessionId: "" })).json?.code).toBe(
      "invalid_argument",
    );
    const unknown = await call(sim, "GetSession", {
      sessionId: "ses_doesnotexist",
    });
    expect(unknown.status).toBe(404);
    expect(unknown.json?.code).toBe("not_found");
    const future = sim.generator.sessionsStartingIn(
      T0 + HOUR,
      T0 + 2 * HOUR,
    )[0] as SimSession;
    expect(
      (await call(sim, "GetSession", { sessionId: future.id })).json?.code,
    ).toBe("not_found");
  });

  it("writes proto3 JSON: zero values omitted, brand member, varying fractional digits", async () => {
    const r = await call(sim, "ListSessionsV2", {
      limit: 100_000,
      startTimestamp: secs(T0 - 3 * HOUR),
    });
    const all = sessionsOf(r);
    expect(all.length).toBeGreaterThan(1000);
    const digits = new Set<number>();
    const seen = {
      open: 0,
      child: 0,
      endUser: 0,
      machine: 0,
      sidecar: 0,
      connector: 0,
      native: 0,
    };
    const checkNoZero = (v: unknown, where: string): void => {
      if (
        v === "" ||
        (Array.isArray(v) && v.length === 0) ||
        v === 0 ||
        v === false ||
        v === null
      ) {
        throw new Error(`zero value at ${where}`);
      }
      if (v && typeof v === "object")
        for (const [k, x] of Object.entries(v)) checkNoZero(x, `${where}.${k}`);
    };
    for (const s of all) {
      checkNoZero(s, s.id as string);
      const start = s.startTime as string;
      const m = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.(\d+))?Z$/.exec(start);
      expect(m, start).not.toBeNull();
      digits.add(m?.[1]?.length ?? 0);
      expect([0, 3, 6, 9]).toContain(m?.[1]?.length ?? 0);
      const user = s.user as Record<string, unknown>;
      expect(user.service).toBeUndefined();
      if (user.type === "native") {
        // Made through a native user: no identity of the service's own.
        expect(user.formal).toBeUndefined();
        expect(user.native).toEqual({ username: user.username });
        seen.native++;
        continue;
      }
      const brand = user.formal as {
        user: Record<string, unknown>;
        endUser?: Record<string, unknown>;
      };
      expect(brand.user.id).toMatch(/^usr_/);
      expect(user.type).toBe(brand.user.type);
      expect(["human", "machine"]).toContain(user.type);
      if (user.type === "machine") {
        seen.machine++;
        expect(brand.user.email).toBeUndefined();
      } else {
        expect(brand.user.email).toMatch(/@/);
      }
      if (brand.endUser) {
        seen.endUser++;
        expect(brand.endUser.type).toBe("human");
      }
      expect(Boolean(s.sidecar) !== Boolean(s.connector)).toBe(true);
      if (s.sidecar) seen.sidecar++;
      else seen.connector++;
      if (s.parentSessionId) seen.child++;
      if (s.sessionStatus === "completed") {
        expect(s.endTime).toMatch(/Z$/);
        expect(s.duration).toMatch(/^\d+(\.\d{3}|\.\d{6}|\.\d{9})?s$/);
      } else {
        seen.open++;
        expect(["active", "idle"]).toContain(s.sessionStatus);
        expect(s.endTime).toBeUndefined();
        expect(s.duration).toBeUndefined();
      }
      expect(["aws", "datastore", "instance"]).toContain(
        (s.resource as { type: string }).type,
      );
    }
    expect(digits).toEqual(new Set([0, 3, 6, 9]));
    for (const [k, v] of Object.entries(seen)) expect(v, k).toBeGreaterThan(0);
  });

  it("runs the clock: open sessions complete and new sessions appear", async () => {
    const clock = SimClock.fixed(T0);
    const s2 = await startSimulator({
      apiKey: API_KEY,
      seed: 1,
      clock,
      historyDays: 2,
    });
    try {
      const open = s2.generator
        .sessionsStartingIn(T0 - HOUR, T0)
        .find(
          (s) =>
            statusAt(s, T0) !== "completed" &&
            s.startMs + s.durationMs < T0 + HOUR,
        );
      expect(open).toBeDefined();
      if (!open) return;
      const before = (await call(s2, "GetSession", { sessionId: open.id })).json
        ?.session as WireRecord;
      expect(["active", "idle"]).toContain(before.sessionStatus);
      expect(before.endTime).toBeUndefined();
      const window = { limit: 100_000, startTimestamp: secs(T0 - HOUR) };
      const n1 = sessionsOf(await call(s2, "ListSessionsV2", window)).length;
      clock.advance(HOUR);
      const after = (await call(s2, "GetSession", { sessionId: open.id })).json
        ?.session as WireRecord;
      expect(after.sessionStatus).toBe("completed");
      expect(Date.parse(after.endTime as string)).toBe(
        open.startMs + open.durationMs,
      );
      const n2 = sessionsOf(await call(s2, "ListSessionsV2", window)).length;
      expect(n2).toBeGreaterThan(n1 + 100);
    } finally {
      await s2.close();
    }
  });

  it("shows sessions arriving while paging an open-ended window on later pages", async () => {
    const clock = SimClock.fixed(T0);
    const s2 = await startSimulator({
      apiKey: API_KEY,
      seed: 1,
      clock,
      historyDays: 2,
    });
    try {
      const req = { limit: 200, startTimestamp: secs(T0 - HOUR) };
      const ids: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; ; i++) {
        const r = await call(s2, "ListSessionsV2", {
          ...req,
          ...(cursor ? { cursor } : {}),
        });
        ids.push(...sessionsOf(r).map((s) => s.id as string));
        cursor = nextCursorOf(r);
        if (i === 1) clock.advance(30 * 60_000);
        if (!cursor) break;
      }
      const expected = s2.generator
        .sessionsStartingIn(T0 - HOUR, clock.now() + 1)
        .map((s) => s.id);
      expect(ids).toEqual(expected);
    } finally {
      await s2.close();
    }
  });

  it("is deterministic across simulators, clocks and history lengths", async () => {
    const other = await startSimulator({
      apiKey: "k2",
      seed: 1,
      clock: SimClock.fixed(T0 + 2 * DAY),
      historyDays: 5,
    });
    const sameNow = await startSimulator({
      apiKey: "k3",
      seed: 1,
      clock: SimClock.fixed(T0),
      historyDays: 3,
    });
    const seed2 = await startSimulator({
      apiKey: "k4",
      seed: 2,
      clock: SimClock.fixed(T0),
    });
    try {
      const req = { limit: 400, ...WINDOW };
      const a = await call(sim, "ListSessionsV2", req);
      const b = await call(sameNow, "ListSessionsV2", req, { key: "k3" });
      expect(b.text).toBe(a.text);
      const c = await call(other, "ListSessionsV2", req, { key: "k2" });
      const key = (s: WireRecord): string =>
        `${String(s.id)} ${String(s.startTime)} ${JSON.stringify(s.user)}`;
      expect(sessionsOf(c).map(key)).toEqual(sessionsOf(a).map(key));
      const d = await call(seed2, "ListSessionsV2", req, { key: "k4" });
      expect(sessionsOf(d).map((s) => s.id)).not.toEqual(
        sessionsOf(a).map((s) => s.id),
      );
    } finally {
      await Promise.all([other.close(), sameNow.close(), seed2.close()]);
    }
  });

  it("serves added routes with the request context and Connect errors", async () => {
    let seenNow = 0;
    sim.addRoute("/core.v1.LogsService/ListLogAggregations", (body, ctx) => {
      seenNow = ctx.nowMs;
      expect(ctx.generator).toBe(sim.generator);
      expect(ctx.seed).toBe(1);
      if (body.startTimestamp === undefined)
        throw new SimConnectError(
          "invalid_argument",
          "startTimestamp: required",
        );
      return Promise.resolve({ aggregations: {}, numHits: "3" });
    });
    const ok = await call(sim, "ListLogAggregations", {
      startTimestamp: "1",
      endTimestamp: "2",
    });
    expect(ok.json).toEqual({ aggregations: {}, numHits: "3" });
    expect(seenNow).toBe(T0);
    const bad = await call(sim, "ListLogAggregations", {});
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({
      code: "invalid_argument",
      message: "startTimestamp: required",
    });
    const stats = sim.stats();
    expect(stats.byMethod.ListLogAggregations).toBe(2);
    expect(stats.requests).toBeGreaterThan(
      stats.byMethod.ListLogAggregations ?? 0,
    );
  });

  it("enforces the rate limit with headers", async () => {
    const s2 = await startSimulator({
      apiKey: API_KEY,
      clock: SimClock.fixed(T0),
      historyDays: 1,
      rateLimit: { limit: 3, windowMs: 1e12 },
    });
    try {
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 5; i++) {
        last = await call(s2, "ListSessionsV2", { limit: 1 });
        statuses.push(last.status);
        expect(last.headers.get("x-ratelimit-limit")).toBe("3");
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      expect(last?.json?.code).toBe("resource_exhausted");
      expect(last?.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(Number(last?.headers.get("x-ratelimit-reset"))).toBeGreaterThan(
        Date.now() / 1000,
      );
    } finally {
      await s2.close();
    }
  });

  it("bench mode serves the same pages and aggregations from its cache", async () => {
    const bench = await startSimulator({
      apiKey: API_KEY,
      seed: 1,
      clock: SimClock.fixed(T0),
      historyDays: 30,
      benchPages: true,
    });
    let plainSim: Simulator | undefined;
    try {
      const req = { limit: 500, ...WINDOW };
      const plain = await pageAll(sim, req);
      for (let round = 0; round < 2; round++) {
        const cached = await pageAll(bench, req);
        expect(cached.map((p) => p.text)).toEqual(plain.map((p) => p.text));
      }

      // Aggregations of ended windows are cached too, byte for byte the same answer; a window
      // that has not ended yet is computed again each time (T0 + 1 h is after the fixed clock).
      const agg = {
        ...WINDOW,
        histogramInterval: "5m",
        histogramGroupByFields: ["resource.technology", "user.email"],
      };
      // A simulator of its own: another test replaces routes of the shared one.
      plainSim = await startSimulator({
        apiKey: API_KEY,
        seed: 1,
        clock: SimClock.fixed(T0),
        historyDays: 30,
      });
      const expected = await call(plainSim, "ListLogAggregations", agg);
      expect(expected.status).toBe(200);
      expect(expected.text.length).toBeGreaterThan(1000);
      for (let round = 0; round < 2; round++) {
        const cached = await call(bench, "ListLogAggregations", agg);
        expect(cached.text).toBe(expected.text);
      }
      const open = { ...agg, endTimestamp: secs(T0 + HOUR) };
      expect((await call(bench, "ListLogAggregations", open)).text).toBe(
        (await call(plainSim, "ListLogAggregations", open)).text,
      );
      const bad = await call(bench, "ListLogAggregations", {
        ...agg,
        histogramGroupByFields: ["a.b", "c.d", "e.f", "g.h"],
      });
      expect(bad.json?.code).toBe("invalid_argument");
    } finally {
      await plainSim?.close();
      await bench.close();
    }
  });

  it("serves a 100000-session page whole, with its length", async () => {
    const s2 = await startSimulator({
      apiKey: API_KEY,
      seed: 3,
      clock: SimClock.fixed(T0),
      historyDays: 20,
    });
    try {
      const res = await fetch(
        `${s2.url}/core.v1.SessionsService/ListSessionsV2`,
        {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-Api-Key": API_KEY },
          body: JSON.stringify({
            limit: 100_000,
            startTimestamp: secs(T0 - 14 * DAY),
            endTimestamp: secs(T0),
          }),
        },
      );
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(Number(res.headers.get("content-length"))).toBe(bytes.length);
      const body = JSON.parse(bytes.toString("utf8")) as {
        sessions: WireRecord[];
        listMetadata: { nextCursor?: string };
      };
      expect(body.sessions).toHaveLength(100_000);
      expect(body.listMetadata.nextCursor).toBeDefined();
    } finally {
      await s2.close();
    }
  });
});
