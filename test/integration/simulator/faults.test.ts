import { describe, expect, it } from "vitest";
import {
  SimClock,
  parseFaultSpec,
  startSimulator,
  type FaultOptions,
  type Simulator,
} from "../../../src/simulator/index.js";
import {
  API_KEY,
  HOUR,
  T0,
  call,
  nextCursorOf,
  secs,
  sessionsOf,
  type WireRecord,
} from "../../helpers/simulator-call.js";

const WINDOW = { startTimestamp: secs(T0 - 4 * HOUR), endTimestamp: secs(T0) };

async function withSim(
  faults: FaultOptions,
  fn: (sim: Simulator) => Promise<void>,
): Promise<void> {
  const sim = await startSimulator({
    apiKey: API_KEY,
    seed: 1,
    clock: SimClock.fixed(T0),
    historyDays: 2,
    faults,
  });
  try {
    await fn(sim);
  } finally {
    await sim.close();
  }
}

/** Reads a response fully; "failed" when the connection broke mid-body. */
async function rawCall(
  sim: Simulator,
  body: unknown,
): Promise<{ status: number; text: string } | "failed"> {
  try {
    const res = await fetch(
      `${sim.url}/core.v1.SessionsService/ListSessionsV2`,
      {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Api-Key": API_KEY },
        body: JSON.stringify(body),
      },
    );
    return { status: res.status, text: await res.text() };
  } catch {
    return "failed";
  }
}

describe("parseFaultSpec", () => {
  it("parses rates, seed, slowMs and all=", () => {
    expect(
      parseFaultSpec(
        "rate429=0.05,rate503=0.05,rate502html=0.03,slow=0.02,reset=0.02,truncate=0.02,badRecord=0.01,duplicate=0.02,expiredCursor=0.01,seed=7",
      ),
    ).toEqual({
      rates: {
        rate429: 0.05,
        rate503: 0.05,
        rate502html: 0.03,
        slow: 0.02,
        reset: 0.02,
        truncate: 0.02,
        badRecord: 0.01,
        duplicate: 0.02,
        expiredCursor: 0.01,
      },
      seed: 7,
    });
    const all = parseFaultSpec("rate503=0.5, all=0.02, slowMs=100");
    expect(all.rates?.rate503).toBe(0.5);
    expect(all.rates?.badRecord).toBe(0.02);
    expect(all.slowMs).toBe(100);
  });

  it("names what is wrong", () => {
    expect(() => parseFaultSpec("rate418=0.1")).toThrow(
      /unknown fault "rate418"/,
    );
    expect(() => parseFaultSpec("rate503=lots")).toThrow(
      /rate503=lots is not a number/,
    );
    expect(() => parseFaultSpec("rate503=2")).toThrow(/between 0 and 1/);
    expect(() => parseFaultSpec("seed=1.5")).toThrow(/seed/);
    expect(() => parseFaultSpec("slow")).toThrow(/<name>=<value>/);
  });
});

describe("fault injection", () => {
  it("rate429: resource_exhausted with rate-limit headers and Retry-After", async () => {
    await withSim({ rates: { rate429: 1 } }, async (sim) => {
      const r = await call(sim, "ListSessionsV2", { limit: 1 });
      expect(r.status).toBe(429);
      expect(r.json?.code).toBe("resource_exhausted");
      expect(r.headers.get("retry-after")).toBe("1");
      expect(r.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(r.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
      expect(sim.stats().faults.rate429).toBe(1);
    });
  });

  it("rate503: unavailable; applies to GetSession and added routes too", async () => {
    await withSim({ rates: { rate503: 1 } }, async (sim) => {
      sim.addRoute("/core.v1.LogsService/ListLogAggregations", () => ({
        numHits: "1",
      }));
      for (const [method, body] of [
        ["ListSessionsV2", { limit: 1 }],
        ["GetSession", { sessionId: "x" }],
        ["ListLogAggregations", { startTimestamp: "1", endTimestamp: "2" }],
      ] as const) {
        const r = await call(sim, method, body);
        expect(r.status, method).toBe(503);
        expect(r.json?.code).toBe("unavailable");
      }
      expect(sim.stats().faults.rate503).toBe(3);
    });
  });

  it("rate502html: an HTML Bad Gateway page", async () => {
    await withSim({ rates: { rate502html: 1 } }, async (sim) => {
      const r = await call(sim, "ListSessionsV2", { limit: 1 });
      expect(r.status).toBe(502);
      expect(r.headers.get("content-type")).toMatch(/text\/html/);
      expect(r.text).toMatch(/<html>[\s\S]*Bad Gateway[\s\S]*<\/html>/);
      expect(r.json).toBeUndefined();
    });
  });

  it("slow: delays the response", async () => {
    await withSim({ rates: { slow: 1 }, slowMs: 300 }, async (sim) => {
      const t = performance.now();
      const r = await call(sim, "ListSessionsV2", { limit: 1 });
      expect(performance.now() - t).toBeGreaterThanOrEqual(280);
      expect(r.status).toBe(200);
      expect(sim.stats().faults.slow).toBe(1);
    });
  });

  it("reset: the connection breaks mid-body", async () => {
    await withSim({ rates: { reset: 1 } }, async (sim) => {
      for (let i = 0; i < 3; i++)
        expect(await rawCall(sim, { limit: 500, ...WINDOW })).toBe("failed");
      expect(sim.stats().faults.reset).toBe(3);
    });
  });

  it("truncate: a cut body, either short with a matching length or a closed connection", async () => {
    await withSim({ rates: { truncate: 1 } }, async (sim) => {
      const outcomes = new Set<string>();
      for (let i = 0; i < 12; i++) {
        const r = await rawCall(sim, { limit: 500, ...WINDOW });
        if (r === "failed") {
          outcomes.add("failed");
        } else {
          expect(r.status).toBe(200);
          expect(() => JSON.parse(r.text) as unknown).toThrow();
          outcomes.add("short");
        }
      }
      expect(outcomes).toEqual(new Set(["failed", "short"]));
      expect(sim.stats().faults.truncate).toBe(12);
    });
  });

  it("expiredCursor: a valid cursor is rejected as expired", async () => {
    await withSim({ rates: { expiredCursor: 1 } }, async (sim) => {
      const first = await call(sim, "ListSessionsV2", { limit: 10, ...WINDOW });
      expect(first.status).toBe(200);
      const cursor = nextCursorOf(first);
      const r = await call(sim, "ListSessionsV2", {
        limit: 10,
        ...WINDOW,
        cursor,
      });
      expect(r.status).toBe(400);
      expect(r.json?.code).toBe("invalid_argument");
      expect(r.json?.message).toMatch(/cursor expired/);
      expect(sim.stats().faults.expiredCursor).toBe(1);
    });
  });

  it("duplicate: the next page repeats sessions of the previous one", async () => {
    await withSim({ rates: { duplicate: 1 } }, async (sim) => {
      const ids: string[] = [];
      let cursor: string | undefined;
      let repeatedSeen = 0;
      do {
        const r = await call(sim, "ListSessionsV2", {
          limit: 300,
          ...WINDOW,
          ...(cursor ? { cursor } : {}),
        });
        const page = sessionsOf(r).map((s) => s.id as string);
        expect(page.length).toBeLessThanOrEqual(300);
        if (cursor) {
          const overlap = page.filter((id) => ids.includes(id));
          expect(overlap.length).toBeGreaterThan(0);
          // the repeats are the tail of what came before, at the head of this page
          expect(page.slice(0, overlap.length)).toEqual(
            ids.slice(-overlap.length),
          );
          repeatedSeen += overlap.length;
        }
        ids.push(...page);
        cursor = nextCursorOf(r);
      } while (cursor);
      const unique = [...new Set(ids)];
      expect(unique).toEqual(
        sim.generator.sessionsStartingIn(T0 - 4 * HOUR, T0).map((s) => s.id),
      );
      expect(ids.length - unique.length).toBe(repeatedSeen);
      expect(sim.stats().faults.duplicate).toBeGreaterThan(0);
    });
  });

  it("badRecord: corrupts chosen sessions identically every time and records them", async () => {
    await withSim({ rates: { badRecord: 0.05 }, seed: 9 }, async (sim) => {
      const req = { limit: 100_000, ...WINDOW };
      const a = await call(sim, "ListSessionsV2", req);
      const b = await call(sim, "ListSessionsV2", req);
      expect(b.text).toBe(a.text);
      const served = sessionsOf(a);
      const isBroken = (s: WireRecord): boolean =>
        s.id === undefined ||
        typeof s.startTime === "number" ||
        s.startTime === "not-a-date";
      const brokenServed = served.filter(isBroken);
      expect(brokenServed.length).toBeGreaterThan(served.length * 0.02);
      expect(brokenServed.length).toBeLessThan(served.length * 0.1);
      const recorded = sim.brokenRecords();
      expect(recorded).toHaveLength(brokenServed.length);
      expect(new Set(recorded.map((r) => r.kind))).toEqual(
        new Set(["missingId", "numericStartTime", "invalidStartTime"]),
      );
      const rawServed = new Set(brokenServed.map((s) => JSON.stringify(s)));
      for (const r of recorded) {
        expect(rawServed.has(r.raw)).toBe(true);
        expect(JSON.parse(r.raw)).toEqual(r.record);
      }
      expect(sim.stats().faults.badRecord).toBe(2 * brokenServed.length);
      // a page's other records stay intact
      expect(
        served
          .filter((s) => !isBroken(s))
          .every((s) => typeof s.id === "string"),
      ).toBe(true);
    });
  });

  it("is reproducible: the same requests meet the same faults", async () => {
    const run = async (): Promise<string[]> => {
      const out: string[] = [];
      await withSim(
        { rates: { rate429: 0.2, rate503: 0.2, rate502html: 0.2 }, seed: 7 },
        async (sim) => {
          for (let i = 0; i < 60; i++)
            out.push(
              String((await call(sim, "ListSessionsV2", { limit: 1 })).status),
            );
        },
      );
      return out;
    };
    const first = await run();
    expect(await run()).toEqual(first);
    expect(new Set(first)).toEqual(new Set(["200", "429", "503", "502"]));
  });
});
