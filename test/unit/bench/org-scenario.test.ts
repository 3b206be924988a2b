// The organisation-shaped scale scenario's pure parts: the organisation's dimension rows are
// the simulator's (its favourites and their weights, fixed addresses, teams, the accounts'
// activity as slots), the week's traffic puts each session number at an instant and back, the
// addresses the generator draws are the simulator's ranges, and the distribution checks'
// tolerances say within or NOT within.
import { describe, expect, it } from "vitest";
import {
  AWAY_ADDRESSES,
  EPHEMERAL_ADDRESSES,
  identityLinks,
  instantAt,
  orgDimensions,
  orgInventory,
  POOL_SLOTS,
  POOLS,
  positionAt,
  SUSPENSIONS,
  UNLISTED_AFTER_SLOTS,
  weekModel,
} from "../../../bench/org-scenario.js";
import { Directory } from "../../../src/simulator/directory.js";
import { DATA_LABELS } from "../../../src/simulator/logs/catalog.js";
import { rateCheck, shareCheck } from "../../../bench/sample-distributions.js";
import { scaleShape } from "../../../bench/scale-options.js";
import {
  buildOrg,
  createSessionGenerator,
  homeIpOf,
  indexOrg,
} from "../../../src/simulator/index.js";
import { SMALL_ORG } from "../../helpers/small-org.js";

const HOUR = 3_600_000;
/** A Sunday, 00:00 UTC: where the scale scenario's year starts. */
const SUNDAY = Date.UTC(2025, 10, 16);

describe("the organisation's dimension rows", () => {
  const d = orgDimensions(1, SMALL_ORG);
  const org = buildOrg(1, SMALL_ORG);
  const index = indexOrg(org);

  it("are the simulator's accounts: people first, their teams, favourites most used first, fixed addresses", () => {
    expect(d.accounts).toHaveLength(90);
    expect(d.accounts.filter((a) => a.human === 1)).toHaveLength(60);
    expect(d.accounts.slice(0, 60).every((a) => a.pool === "human")).toBe(true);
    for (const [i, u] of org.users.entries()) {
      const a = d.accounts[i];
      expect(a?.favs.map((r) => org.resources[r]?.id)).toEqual(
        index.favourites.get(u.id)?.map((r) => r.id),
      );
      expect(a?.groups).toEqual(index.groupNamesOfUser.get(u.id));
      expect(a?.home).toBe(homeIpOf(1, u));
      if (u.type === "machine") expect(a?.pool).toBe(u.machineKind);
    }
  });

  it("weigh the i-th favourite 1 / (i + 1), as the simulator's favourite table", () => {
    const a = d.accounts.find((x) => x.favs.length >= 3);
    const n = a?.favs.length ?? 0;
    const total = Array.from({ length: n }, (_, i) => 1 / (i + 1)).reduce(
      (x, y) => x + y,
    );
    expect(a?.cum[0]).toBeCloseTo(1 / total, 9);
    expect(a?.cum[1]).toBeCloseTo((1 + 1 / 2) / total, 9);
    expect(a?.cum[n - 1]).toBe(1);
  });

  it("give every slot of every pool to exactly one account of that pool", () => {
    POOLS.forEach((pool, p) => {
      const ranges = d.slots
        .filter((s) => s.pool === p)
        .sort((a, b) => a.lo - b.lo);
      if (ranges.length === 0) return;
      expect(ranges[0]?.lo).toBe(0);
      expect(ranges.at(-1)?.hi).toBe(POOL_SLOTS[pool]);
      for (let i = 1; i < ranges.length; i++)
        expect(ranges[i]?.lo).toBe(ranges[i - 1]?.hi);
      for (const r of ranges) expect(d.accounts[r.u]?.pool).toBe(pool);
    });
  });

  it("name each resource's environment and sidecar, and its connector only when the simulator gives it one", () => {
    for (const [i, r] of org.resources.entries()) {
      const row = d.resources[i];
      expect(row?.environment).toBe(r.environment);
      expect(row?.technology).toBe(r.technology);
      expect(row?.natives).toEqual(r.nativeUsers);
      expect(row?.connector === -1).toBe(!org.connectorOfResource.has(r.id));
    }
  });
});

describe("the organisation's identity links and suspensions", () => {
  const d = orgDimensions(1, SMALL_ORG);
  const org = buildOrg(1, SMALL_ORG);

  it("link every native user of every resource to a person who works on it, or else to a team", () => {
    const links = identityLinks(d);
    expect(links).toHaveLength(
      org.resources.reduce((n, r) => n + r.nativeUsers.length, 0),
    );
    for (const l of links)
      if (l.identityType === "user") {
        expect(l.identityId).toBe(`usr_${l.u}`);
        expect(d.accounts[l.u]?.human).toBe(1);
        expect(d.accounts[l.u]?.favs).toContain(l.r);
      } else
        expect(d.accounts.some((a) => a.groups.includes(l.identityId))).toBe(
          true,
        );
    expect(links.some((l) => l.identityType === "user")).toBe(true);
  });

  it("come as often as the simulator's: one suspension every two hours, a fifth on a team", () => {
    const now = Date.UTC(2026, 10, 16);
    const listed = new Directory(org, indexOrg(org)).suspensions(now);
    // The simulator lists the last 30 days' suspensions.
    expect(
      Math.abs(listed.length - (30 * 24 * HOUR) / SUSPENSIONS.spacingMs),
    ).toBeLessThanOrEqual(1);
    const teams = listed.filter((s) => s.identityType === "group").length;
    expect(teams / listed.length).toBeCloseTo(
      SUSPENSIONS.groupPercent / 100,
      1,
    );
  });
  it("are removed when the simulator stops listing them, as the exporter records it", () => {
    const directory = new Directory(org, indexOrg(org));
    const origin = Date.UTC(2024, 0, 1);
    const k = 5_000;
    const slot = (s: { createdAt?: unknown }) =>
      Math.floor(
        (Date.parse(String(s.createdAt)) - origin) / SUSPENSIONS.spacingMs,
      );
    const removedAt =
      origin + (k + UNLISTED_AFTER_SLOTS) * SUSPENSIONS.spacingMs;
    expect(directory.suspensions(removedAt - 1).map(slot)).toContain(k);
    expect(directory.suspensions(removedAt).map(slot)).not.toContain(k);
    expect(directory.suspensions(removedAt).map(slot)).toContain(k + 1);
  });
});

describe("the organisation's data inventory", () => {
  const org = buildOrg(1, SMALL_ORG);
  const rows = orgInventory(SUNDAY + 365 * 24 * HOUR, 1, SMALL_ORG);
  const labelsOf = new Map<number, Set<string>>();
  for (const row of rows) {
    const set = labelsOf.get(row.r) ?? new Set<string>();
    if (row.data_label !== "") set.add(row.data_label);
    labelsOf.set(row.r, set);
  }
  const every = new Set(rows.map((r) => r.data_label).filter((l) => l !== ""));

  it("is the simulator's columns of the org's resources, by their index and name", () => {
    expect(rows.length).toBeGreaterThan(100);
    for (const row of rows) {
      expect(row.resource_name).toBe(org.resources[row.r]?.name);
      expect(row.path.endsWith(`.${row.name}`)).toBe(true);
    }
    const labels = new Set<string>(DATA_LABELS.filter((l) => l !== "none"));
    for (const row of rows)
      if (row.data_label !== "") expect(labels).toContain(row.data_label);
  });

  it("lists only some resources, with sets of labels that differ between them", () => {
    // Resources of technologies without a data store (ssh, kubernetes, …) hold no inventory.
    expect(labelsOf.size).toBeGreaterThan(0);
    expect(labelsOf.size).toBeLessThan(org.resources.length);
    const sets = new Set(
      [...labelsOf.values()].map((l) => [...l].sort().join(",")),
    );
    expect(sets.size).toBeGreaterThan(3);
    // Unlike the uniform shape, not every listed resource holds every label.
    expect(
      [...labelsOf.values()].filter((l) => l.size < every.size).length,
    ).toBeGreaterThan(labelsOf.size / 2);
  });
});

describe("the week's traffic", () => {
  const m = weekModel(SUNDAY);

  it("puts a position at an instant and back", () => {
    for (const ms of [0, 1, 5 * HOUR + 17, 3 * 24 * HOUR + 123_456, 400 * HOUR])
      expect(instantAt(m, positionAt(m, ms))).toBeCloseTo(ms, 3);
  });

  it("has people in office hours on weekdays, machines all the time", () => {
    const monday10 = 24 + 10;
    const monday03 = 24 + 3;
    expect(m.weights[monday10]).toBeGreaterThan(3 * (m.weights[monday03] ?? 0));
    expect(m.humanShare[monday10]).toBeGreaterThan(0.8);
    expect(m.humanShare[10]).toBeLessThan(0.5); // Sunday 10:00
    expect(m.cum[168]).toBeCloseTo(m.week, 9);
  });
});

describe("the addresses the generator draws", () => {
  it("are the simulator's ranges for the machines without a fixed address and a person away from home", () => {
    const gen = createSessionGenerator({
      seed: 1,
      orgSize: SMALL_ORG,
      sessionsPerDay: 3_000,
      historyStartMs: SUNDAY,
    });
    const seen = new Set<string>();
    const within = (ip: string, r: { prefix: string; thirdOctets: number }) =>
      ip.startsWith(r.prefix) &&
      Number(ip.split(".")[2]) < r.thirdOctets &&
      Number(ip.split(".")[3]) >= 2 &&
      Number(ip.split(".")[3]) <= 254;
    for (const s of gen.sessionsStartingIn(
      SUNDAY + 24 * HOUR,
      SUNDAY + 48 * HOUR,
    )) {
      if (s.parentSessionId !== "") continue;
      const u = gen.index.userById.get(s.userId);
      if (!u) continue;
      const kind = u.type === "human" ? "human" : (u.machineKind ?? "batch");
      const home = homeIpOf(1, u);
      if (kind === "ci" || kind === "app" || kind === "agent") {
        expect(within(s.clientIpAddress, EPHEMERAL_ADDRESSES[kind])).toBe(true);
        seen.add(kind);
      } else if (kind === "human" && s.clientIpAddress !== home) {
        expect(within(s.clientIpAddress, AWAY_ADDRESSES)).toBe(true);
        seen.add("away");
      } else expect(s.clientIpAddress).toBe(home);
    }
    expect([...seen].sort()).toEqual(["agent", "app", "away", "ci"]);
  });
});

describe("the distributions' tolerances", () => {
  it("hold a mean or a rate to 10 % of the simulator's", () => {
    expect(rateCheck(1.09, 1)).toEqual({ tolerance: 0.1, within: true });
    expect(rateCheck(1.11, 1).within).toBe(false);
    expect(rateCheck(0.89, 1).within).toBe(false);
  });

  it("hold a share to three standard errors of the difference plus the floor", () => {
    const c = shareCheck({ k: 500, n: 1000 }, { k: 500, n: 1000 }, 0.002);
    expect(c.tolerance).toBeCloseTo(3 * Math.sqrt(0.25 * 0.002) + 0.002, 9);
    expect(c.within).toBe(true);
    expect(
      shareCheck({ k: 600, n: 1000 }, { k: 500, n: 1000 }, 0.002).within,
    ).toBe(false);
  });
});

describe("BENCH_SCALE_SHAPE", () => {
  it("is the organisation unless uniform is asked for; another name is refused with the nearest first", () => {
    expect(scaleShape({})).toBe("org");
    expect(scaleShape({ BENCH_SCALE_SHAPE: "uniform" })).toBe("uniform");
    expect(() => scaleShape({ BENCH_SCALE_SHAPE: "unifrom" })).toThrow(
      'BENCH_SCALE_SHAPE=unifrom: no shape named "unifrom"; give one of uniform, org',
    );
  });
});
