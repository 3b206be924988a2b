import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import {
  SimClock,
  SimConnectError,
  TECHNOLOGIES,
  buildOrg,
  createRng,
  createSessionGenerator,
  formatDuration,
  formatTimestamp,
  hash32,
  parseClockSpec,
  parseOrgSize,
  parseRequestTimestamp,
  parseRfc3339,
  sessionToWire,
  wireEncoder,
  statusAt,
  type SimSession,
} from "../../../src/simulator/index.js";
import { DAY, HOUR, T0 } from "../../helpers/simulator-call.js";

const WEDNESDAY = Date.UTC(2026, 10, 4);
const SATURDAY = Date.UTC(2026, 10, 7);

describe("random", () => {
  it("is a pure function of the seed", () => {
    const a = createRng(42);
    const b = createRng(42);
    const xs = Array.from({ length: 50 }, () => a.next());
    expect(Array.from({ length: 50 }, () => b.next())).toEqual(xs);
    expect(createRng(43).next()).not.toBe(xs[0]);
    expect(hash32(1, "x", T0)).toBe(hash32(1, "x", T0));
    expect(hash32(1)).not.toBe(hash32("1"));
    expect(hash32("ab", "c")).not.toBe(hash32("a", "bc"));
  });

  it("has sane distributions", () => {
    const rng = createRng(7);
    const n = 20_000;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += rng.poisson(4);
    expect(sum / n).toBeGreaterThan(3.9);
    expect(sum / n).toBeLessThan(4.1);
    let big = 0;
    for (let i = 0; i < 2000; i++) big += rng.poisson(500);
    expect(big / 2000).toBeGreaterThan(495);
    expect(big / 2000).toBeLessThan(505);
    const ln = Array.from({ length: n }, () => rng.logNormal(100, 1)).sort(
      (x, y) => x - y,
    );
    expect(ln[n / 2]).toBeGreaterThan(90);
    expect(ln[n / 2]).toBeLessThan(110);
    for (let i = 0; i < 1000; i++) {
      const v = rng.int(3, 5);
      expect(v >= 3 && v <= 5 && Number.isInteger(v)).toBe(true);
    }
  });
});

describe("time formatting and parsing", () => {
  it("writes proto3 timestamps with 0, 3, 6 or 9 fractional digits", () => {
    const ms = Date.UTC(2026, 10, 2, 10, 4, 5);
    expect(formatTimestamp(ms)).toBe("2026-11-02T10:04:05Z");
    expect(formatTimestamp(ms + 120)).toBe("2026-11-02T10:04:05.120Z");
    expect(formatTimestamp(ms + 120, 500_000)).toBe(
      "2026-11-02T10:04:05.120500Z",
    );
    expect(formatTimestamp(ms, 7)).toBe("2026-11-02T10:04:05.000000007Z");
    expect(formatTimestamp(Date.UTC(2026, 11, 31, 23, 59, 59, 999))).toBe(
      "2026-12-31T23:59:59.999Z",
    );
    expect(formatDuration(3_600_000)).toBe("3600s");
    expect(formatDuration(12_500)).toBe("12.500s");
    expect(formatDuration(7)).toBe("0.007s");
  });

  it("parses RFC 3339 strictly", () => {
    expect(parseRfc3339("2026-11-02T10:04:05Z")).toBe(
      Date.UTC(2026, 10, 2, 10, 4, 5),
    );
    expect(parseRfc3339("2026-11-02T10:04:05.123456789Z")).toBe(
      Date.UTC(2026, 10, 2, 10, 4, 5, 123),
    );
    expect(parseRfc3339("2026-11-02T12:04:05+02:00")).toBe(
      Date.UTC(2026, 10, 2, 10, 4, 5),
    );
    expect(parseRfc3339("2026-02-30T00:00:00Z")).toBeUndefined();
    expect(parseRfc3339("2026-11-02")).toBeUndefined();
    expect(parseRfc3339("yesterday")).toBeUndefined();
  });

  it("parses request timestamps as Unix seconds or RFC 3339, naming the field on error", () => {
    expect(parseRequestTimestamp("1730000000", "startTimestamp")).toBe(
      1_730_000_000_000,
    );
    expect(parseRequestTimestamp("1730000000.25", "startTimestamp")).toBe(
      1_730_000_000_250,
    );
    expect(parseRequestTimestamp("2024-10-27T03:33:20Z", "x")).toBe(
      1_730_000_000_000,
    );
    for (const bad of ["", "abc", "-5", "2024-13-01T00:00:00Z", 12]) {
      try {
        parseRequestTimestamp(bad, "endTimestamp");
        expect.unreachable(`accepted ${String(bad)}`);
      } catch (err) {
        expect(err).toBeInstanceOf(SimConnectError);
        expect((err as SimConnectError).code).toBe("invalid_argument");
        expect((err as SimConnectError).message).toContain("endTimestamp");
      }
    }
  });
});

describe("clock", () => {
  it("fixed moves only when told", () => {
    const c = SimClock.fixed(T0);
    expect(c.now()).toBe(T0);
    c.advance(5000);
    expect(c.now()).toBe(T0 + 5000);
    c.set(T0);
    expect(c.now()).toBe(T0);
  });

  it("accelerated runs factor× real time from its start", () => {
    let real = 1_000;
    const c = new SimClock(
      { mode: "accelerated", factor: 60, startMs: T0 },
      () => real,
    );
    expect(c.now()).toBe(T0);
    real += 1000;
    expect(c.now()).toBe(T0 + 60_000);
  });

  it("parses CLI specs and names what is wrong", () => {
    expect(parseClockSpec("real").mode).toBe("real");
    const f = parseClockSpec("fixed:2026-11-04T12:00:00Z");
    expect(f.mode).toBe("fixed");
    expect(f.now()).toBe(T0);
    const a = parseClockSpec("accelerated:10@2026-11-04T12:00:00Z", () => 0);
    expect(a.rate).toBe(10);
    expect(a.now()).toBe(T0);
    expect(parseClockSpec("accelerated:2.5").rate).toBe(2.5);
    expect(() => parseClockSpec("fixed:tomorrow")).toThrow(/RFC 3339/);
    expect(() => parseClockSpec("accelerated:-1")).toThrow(/positive/);
    expect(() => parseClockSpec("sundial")).toThrow(/unknown clock/);
  });
});

describe("org", () => {
  const org = buildOrg(1, "mid");

  it("is deterministic and seed-dependent", () => {
    const again = buildOrg(1, "mid");
    expect(again.users).toEqual(org.users);
    expect(again.resources).toEqual(org.resources);
    expect(buildOrg(2, "mid").users[0]?.id).not.toBe(org.users[0]?.id);
  });

  it("has the mid-size shape with realistic, valid names", () => {
    const humans = org.users.filter((u) => u.type === "human");
    const machines = org.users.filter((u) => u.type === "machine");
    expect(humans).toHaveLength(400);
    expect(machines).toHaveLength(60);
    expect(org.groups).toHaveLength(25);
    expect(org.resources).toHaveLength(150);
    expect(org.sidecars).toHaveLength(12);
    expect(org.connectors).toHaveLength(4);
    expect(new Set(org.resources.map((r) => r.technology)).size).toBe(
      TECHNOLOGIES.length,
    );
    expect(new Set(org.resources.map((r) => r.environment))).toEqual(
      new Set(["prod", "staging", "dev", "sandbox"]),
    );
    for (const h of humans) {
      expect(h.email).toMatch(/^[a-z]+\.[a-z]+\d*@[a-z.-]+$/);
      expect(h.id).toMatch(/^usr_[0-9a-z]{20}$/);
      expect(h.groupIds.length).toBeGreaterThan(0);
    }
    expect(new Set(humans.map((h) => h.email)).size).toBe(humans.length);
    for (const m of machines) {
      expect(m.email).toBe("");
      expect(m.username).toMatch(/^svc-[a-z0-9-]+$/);
    }
    expect(org.groups.map((g) => g.name)).toEqual(
      expect.arrayContaining([
        "data-engineering",
        "finance-analysts",
        "sre-oncall",
      ]),
    );
    const ids = new Set<string>();
    for (const r of org.resources) {
      expect(r.name).toMatch(/^[0-9a-z-]{3,256}$/);
      expect(r.id).toMatch(/^res_/);
      expect(["aws", "datastore", "instance"]).toContain(r.type);
      expect(r.nativeUsers.length).toBeGreaterThan(0);
      expect(r.serverIpAddress).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      // exactly one way in
      expect(
        org.sidecarOfResource.has(r.id) !== org.connectorOfResource.has(r.id),
      ).toBe(true);
      ids.add(r.name);
    }
    expect(ids.size).toBe(org.resources.length);
    expect(org.sidecars.every((s) => s.id.startsWith("sdc_"))).toBe(true);
    expect(org.connectors.every((c) => c.id.startsWith("con_"))).toBe(true);
    expect(org.spaces.every((s) => s.id.startsWith("spc_"))).toBe(true);
    expect(org.groups.every((g) => g.id.startsWith("grp_"))).toBe(true);
  });

  it("supports presets and explicit sizes", () => {
    expect(buildOrg(1, "small").users.length).toBe(52);
    expect(
      buildOrg(1, { humans: 10, machines: 5, resources: 30 }).resources,
    ).toHaveLength(30);
    expect(parseOrgSize("large")).toBe("large");
    expect(parseOrgSize("humans=50,resources=25")).toEqual({
      humans: 50,
      resources: 25,
    });
    expect(() => parseOrgSize("people=3")).toThrow(/org size/);
  });
});

describe("session generator", () => {
  const gen = createSessionGenerator({
    seed: 1,
    historyStartMs: WEDNESDAY - 30 * DAY,
  });

  it("depends only on seed and absolute time", () => {
    const other = createSessionGenerator({
      seed: 1,
      historyStartMs: WEDNESDAY - 2 * DAY,
    });
    // Warm the other generator's cache differently first: order of questions must not matter.
    other.sessionsStartingIn(WEDNESDAY + 5 * HOUR, WEDNESDAY + 6 * HOUR);
    const a = gen.sessionsStartingIn(WEDNESDAY, WEDNESDAY + 6 * HOUR);
    const b = other.sessionsStartingIn(WEDNESDAY, WEDNESDAY + 6 * HOUR);
    expect(b).toEqual(a);
    const c = createSessionGenerator({
      seed: 2,
      historyStartMs: WEDNESDAY - DAY,
    }).sessionsStartingIn(WEDNESDAY, WEDNESDAY + 6 * HOUR);
    expect(c.map((s) => s.id)).not.toEqual(a.map((s) => s.id));
    // history start hides, but does not change, what exists
    expect(
      other.sessionsStartingIn(WEDNESDAY - 3 * DAY, WEDNESDAY - 2 * DAY - 1),
    ).toEqual([]);
  });

  it("adds one session a day from each intruder address, and nothing else", () => {
    const addresses = ["69.42.98.86", "89.185.234.145"];
    const withIntruder = createSessionGenerator({
      seed: 1,
      historyStartMs: WEDNESDAY - 30 * DAY,
      intruderAddresses: addresses,
    });
    const days = 2;
    const plain = gen.sessionsStartingIn(WEDNESDAY, WEDNESDAY + days * DAY);
    const all = withIntruder.sessionsStartingIn(
      WEDNESDAY,
      WEDNESDAY + days * DAY,
    );
    const fromIntruder = all.filter((s) =>
      addresses.includes(s.clientIpAddress),
    );
    expect(plain.filter((s) => addresses.includes(s.clientIpAddress))).toEqual(
      [],
    );
    expect(fromIntruder).toHaveLength(addresses.length * days);
    for (const a of addresses)
      for (let d = 0; d < days; d++)
        expect(
          fromIntruder.filter(
            (s) =>
              s.clientIpAddress === a &&
              Math.floor((s.startMs - WEDNESDAY) / DAY) === d,
          ),
          `${a} on day ${d}`,
        ).toHaveLength(1);
    // Every other session is the plain generator's, unchanged.
    // expect's deep comparison of thousands of sessions only to show a difference (it is slow).
    const others = all.filter((s) => !fromIntruder.includes(s));
    if (!isDeepStrictEqual(others, plain)) expect(others).toEqual(plain);
    // An intruder's session is a human user's, and found again by its id.
    const users = new Map(withIntruder.org.users.map((u) => [u.id, u]));
    for (const s of fromIntruder) {
      expect(users.get(s.userId)?.type).toBe("human");
      expect(withIntruder.getSession(s.id)).toEqual(s);
    }
  });

  it("returns sorted windows and regenerates single sessions by id", () => {
    const list = gen.sessionsStartingIn(
      WEDNESDAY + 9 * HOUR + 1234,
      WEDNESDAY + 11 * HOUR + 77,
    );
    expect(list.length).toBeGreaterThan(500);
    for (let i = 1; i < list.length; i++) {
      const p = list[i - 1] as SimSession;
      const s = list[i] as SimSession;
      expect(
        p.startMs < s.startMs || (p.startMs === s.startMs && p.id < s.id),
      ).toBe(true);
    }
    expect((list[0] as SimSession).startMs).toBeGreaterThanOrEqual(
      WEDNESDAY + 9 * HOUR + 1234,
    );
    const fresh = createSessionGenerator({
      seed: 1,
      historyStartMs: WEDNESDAY - DAY,
    });
    for (const s of list.slice(0, 50))
      expect(fresh.getSession(s.id)).toEqual(s);
    expect(fresh.getSession("ses_nope")).toBeUndefined();
    const forged =
      (list[0] as SimSession).id.slice(0, -1) +
      ((list[0] as SimSession).id.endsWith("a") ? "b" : "a");
    expect(fresh.getSession(forged)).toBeUndefined();
  });

  it("has a realistic weekday / weekend distribution", () => {
    const day = gen.sessionsStartingIn(WEDNESDAY, WEDNESDAY + DAY);
    expect(day.length).toBeGreaterThan(7500);
    expect(day.length).toBeLessThan(12500);
    const weekend = gen.sessionsStartingIn(SATURDAY, SATURDAY + DAY);
    expect(weekend.length).toBeLessThan(day.length * 0.7);
    const type = (s: SimSession): string =>
      gen.index.userById.get(s.userId)?.type ?? "?";
    const byHour = (h: number): SimSession[] =>
      day.filter((s) => new Date(s.startMs).getUTCHours() === h);
    expect(byHour(10).length).toBeGreaterThan(byHour(3).length * 2.5);
    // machines run at night, humans mostly do not
    const night = byHour(2);
    expect(night.filter((s) => type(s) === "machine").length).toBeGreaterThan(
      night.length * 0.7,
    );
    expect(day.filter((s) => type(s) === "human").length).toBeGreaterThan(
      day.length * 0.4,
    );

    const children = day.filter((s) => s.parentSessionId !== "");
    expect(children.length).toBeGreaterThan(day.length * 0.04);
    expect(children.length).toBeLessThan(day.length * 0.2);
    for (const c of children.slice(0, 200)) {
      const parent = gen.getSession(c.parentSessionId);
      expect(parent).toBeDefined();
      expect(parent && parent.startMs < c.startMs).toBe(true);
      expect(Math.floor((parent?.startMs ?? 0) / HOUR)).toBe(
        Math.floor(c.startMs / HOUR),
      );
    }
    const withEndUser = day.filter((s) => s.endUserId !== "");
    expect(withEndUser.length).toBeGreaterThan(0);
    for (const s of withEndUser) {
      expect(type(s)).toBe("machine");
      expect(gen.index.userById.get(s.endUserId)?.type).toBe("human");
    }
    const durations = day.map((s) => s.durationMs).sort((a, b) => a - b);
    const median = durations[durations.length >> 1] ?? 0;
    expect(median).toBeGreaterThan(30_000);
    expect(median).toBeLessThan(15 * 60_000);
    const long = day.filter((s) => s.durationMs >= HOUR);
    expect(long.length).toBeGreaterThan(day.length * 0.005);
    expect(Math.max(...durations)).toBeLessThanOrEqual(gen.maxDurationMs);
    for (const s of day.slice(0, 500)) {
      expect(s.clientIpAddress).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(s.applicationName).not.toBe("");
      expect(gen.index.resourceById.get(s.resourceId)?.nativeUsers).toContain(
        s.nativeUsername,
      );
    }
  });

  it("covers every technology, humans and machines over a week", () => {
    const week = gen.sessionsStartingIn(WEDNESDAY - 7 * DAY, WEDNESDAY);
    const techs = new Set(
      week.map((s) => gen.index.resourceById.get(s.resourceId)?.technology),
    );
    expect(techs.size).toBe(TECHNOLOGIES.length);
    const kinds = new Set(
      week.map((s) => gen.index.userById.get(s.userId)?.machineKind ?? "human"),
    );
    expect(kinds).toEqual(
      new Set(["human", "batch", "bi", "ci", "app", "agent"]),
    );
  });

  it("derives status from the clock only", () => {
    const s = gen
      .sessionsStartingIn(WEDNESDAY + 10 * HOUR, WEDNESDAY + 11 * HOUR)
      .find((x) => x.durationMs > 20 * 60_000);
    expect(s).toBeDefined();
    if (!s) return;
    expect(statusAt(s, s.startMs - 1)).toBeUndefined();
    const open = statusAt(s, s.startMs + 1000);
    expect(["active", "idle"]).toContain(open);
    expect(statusAt(s, s.startMs + 1000)).toBe(open);
    expect(statusAt(s, s.startMs + s.durationMs)).toBe("completed");
    const statuses = new Set<string>();
    for (let t = s.startMs; t < s.startMs + s.durationMs; t += 60_000)
      statuses.add(statusAt(s, t) ?? "");
    expect(statuses.has("active")).toBe(true);
  });

  it("encodes the wire object and its JSON identically", () => {
    const list = gen.sessionsStartingIn(
      WEDNESDAY + 10 * HOUR,
      WEDNESDAY + 10 * HOUR + 20 * 60_000,
    );
    const now = WEDNESDAY + 10 * HOUR + 20 * 60_000;
    for (const s of list) {
      expect(wireEncoder(gen, "acme").json(s, now)).toBe(
        JSON.stringify(sessionToWire(s, gen, now, "acme")),
      );
    }
    expect(() =>
      sessionToWire(list[list.length - 1] as SimSession, gen, WEDNESDAY),
    ).toThrow(/not started/);
  });
});
