// The sessions sync against the simulator with one fault switched on at a time (then all at
// once behind a proxy that times every request): the fault is met, retried where it should be,
// and the stored data equals a fault-free twin's, with the broken records dead-lettered exactly.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import {
  SimClock,
  type FaultKind,
  type FaultOptions,
  type Simulator,
} from "../../../src/simulator/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { fromChTime } from "../../../src/warehouse/format.js";
import { memoryLogger } from "../../helpers/logs.js";
import {
  API_KEY,
  NOON,
  run,
  runDeps,
  testSimulator,
} from "../../helpers/simulator.js";
import { reusedDatabase, select, testConfig } from "../../helpers/warehouse.js";
import {
  deadLetterDifferences,
  readSessions,
  sessionDifferences,
  storedDeadLetters,
  storedSessions,
  type WireRecord,
} from "../../helpers/expected.js";
import {
  hasOpenssl,
  makeCertificates,
  maxInWindow,
  recordingProxy,
} from "../../helpers/servers.js";
import { SESSIONS_JOB } from "../../../src/pipeline/names.js";

const HOUR = 3_600_000;
const FROM = NOON - 12 * HOUR;
let clean: Simulator;
let expected: Map<string, WireRecord>;
// Every case syncs into one database, emptied before each as a fresh one is.
const db = reusedDatabase();

beforeAll(async () => {
  clean = await testSimulator();
  expected = await readSessions(clean, FROM, NOON);
});
afterAll(async () => {
  await clean.close();
  await db.close();
});

async function setup(
  url: string,
  env: Record<string, string> = {},
): Promise<{ config: Config; w: Warehouse }> {
  const config = await testConfig(
    {
      SESSIONHOUSE_API_URL: url,
      SESSIONHOUSE_API_KEY: API_KEY,
      SESSIONHOUSE_MAX_RPS: "1000",
      SESSIONHOUSE_PAGE_SIZE: "40",
      SESSIONHOUSE_WINDOW: "2h",
      ...env,
    },
    db.name,
  );
  return { config, w: await db.fresh(config) };
}

interface Outcome {
  sim: Simulator;
  w: Warehouse;
  /** When each request reached the simulator (through a recording proxy). */
  requestTimes: number[];
  logs: string[];
  retries: number;
  rowsInserted: number;
}

/** A backfill of [FROM, NOON) from a simulator with these faults; fast retries. */
async function syncWith(
  faults: FaultOptions,
  env: Record<string, string> = {},
): Promise<Outcome> {
  // A short rate-limit window: an injected 429 announces "nothing remains until the reset",
  // which the client obeys; the default window is a minute.
  const sim = await testSimulator({
    faults,
    rateLimit: { limit: 100_000, windowMs: 1_000 },
  });
  const proxy = await recordingProxy(sim.url);
  const { config, w } = await setup(proxy.url, env);
  const fast = {
    ...config,
    api: { ...config.api, retryBaseMs: 5, retryMaxMs: 50 },
  };
  const mem = memoryLogger([API_KEY]);
  const deps = runDeps(fast, w, { logger: mem.logger });
  try {
    await run(deps, SESSIONS_JOB, (ctx) =>
      syncSessions(ctx, {
        fromMs: FROM,
        toMs: NOON,
        nowMs: NOON,
        skipOpenRefresh: true,
      }),
    );
  } finally {
    await deps.api.close();
    await proxy.close();
  }
  const [r] = await select<{ retries: string; rows_inserted: string }>(
    w,
    "SELECT retries, rows_inserted FROM {db}.runs FINAL",
  );
  return {
    sim,
    w,
    requestTimes: proxy.requests.map((q) => q.at),
    logs: mem.lines,
    retries: Number(r?.retries),
    rowsInserted: Number(r?.rows_inserted),
  };
}

async function expectComplete(o: Outcome): Promise<void> {
  const broken = o.sim.brokenRecords();
  const { rows, finalRows } = await storedSessions(o.w);
  expect(finalRows).toBe(rows.size);
  expect(
    sessionDifferences(expected, rows, new Set(broken.map((b) => b.sessionId))),
  ).toEqual([]);
  expect(
    deadLetterDifferences(await storedDeadLetters(o.w, SESSIONS_JOB), broken),
  ).toEqual([]);
  // The key never reaches a log line, whatever the fault.
  expect(o.logs.join("")).not.toContain(API_KEY);
}

const logged = (o: Outcome, msg: string) =>
  o.logs
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === msg);

describe("each fault of the simulator, alone", () => {
  it("has a window with enough sessions and pages to meet every fault", () => {
    expect(expected.size).toBeGreaterThan(400);
  });

  const retried: [FaultKind, string][] = [
    ["rate429", "resource_exhausted"],
    ["rate503", "unavailable"],
    ["rate502html", "HTTP_502"],
    // A reset may come before the status line was read: then it is a network error.
    ["reset", "BODY_CUT|NETWORK"],
    ["truncate", "BODY_CUT"],
  ];
  for (const [kind, code] of retried) {
    it(`${kind}: retried as ${code}${kind === "rate429" ? " after the reset the refusal announces" : ""}, nothing lost or doubled`, async () => {
      // A 429 costs the second its Retry-After announces: met a few times at 0.06 (seed 11), the
      // others at 0.2.
      const rate = kind === "rate429" ? 0.06 : 0.2;
      const o = await syncWith({ rates: { [kind]: rate }, seed: 11 });
      try {
        const met = o.sim.stats().faults[kind] ?? 0;
        expect(met).toBeGreaterThan(1);
        const retries = logged(o, "api call failed, retrying");
        expect(retries.length).toBe(met);
        for (const r of retries)
          expect(String(r.code)).toMatch(new RegExp(`^(${code})$`));
        expect(o.retries).toBe(met);
        await expectComplete(o);
        if (kind === "rate429") {
          // Waits for the rate-limit reset the refusal announces: after each 429 (Retry-After
          // 1 s, nothing remaining until the window resets) the next request comes at least a
          // second later, although the backoff alone would be at most 50 ms.
          const gaps = o.requestTimes
            .slice(1)
            .map((at, i) => at - (o.requestTimes[i] ?? 0));
          expect(gaps.filter((g) => g >= 990).length).toBeGreaterThanOrEqual(
            met,
          );
        }
      } finally {
        await o.sim.close();
      }
    });
  }

  it("slow: a response slower than the request timeout is retried as TIMEOUT", async () => {
    const o = await syncWith(
      { rates: { slow: 0.06 }, seed: 11, slowMs: 1_000 },
      { SESSIONHOUSE_REQUEST_TIMEOUT: "500ms" },
    );
    try {
      const met = o.sim.stats().faults.slow ?? 0;
      expect(met).toBeGreaterThan(1);
      const retries = logged(o, "api call failed, retrying");
      expect(retries.length).toBe(met);
      expect(new Set(retries.map((r) => r.code))).toEqual(new Set(["TIMEOUT"]));
      await expectComplete(o);
    } finally {
      await o.sim.close();
    }
  });

  it("badRecord: exactly the broken records are dead-lettered, with their raw text and reason, and the page goes on", async () => {
    const o = await syncWith({ rates: { badRecord: 0.05 }, seed: 11 });
    try {
      const broken = o.sim.brokenRecords();
      expect(broken.length).toBeGreaterThan(10);
      expect(new Set(broken.map((b) => b.kind))).toEqual(
        new Set(["missingId", "numericStartTime", "invalidStartTime"]),
      );
      expect(o.retries).toBe(0);
      await expectComplete(o);
      const [counts] = await select<{ dead: string }>(
        o.w,
        "SELECT dead_letters AS dead FROM {db}.runs FINAL",
      );
      expect(Number(counts?.dead)).toBe(broken.length);
    } finally {
      await o.sim.close();
    }
  });

  it("duplicate: sessions repeated across pages are stored once", async () => {
    const o = await syncWith({ rates: { duplicate: 0.5 }, seed: 11 });
    try {
      expect(o.sim.stats().faults.duplicate).toBeGreaterThan(0);
      // More rows were written than there are sessions: the repeats reached ClickHouse, and
      // FINAL still shows each session once.
      expect(o.rowsInserted).toBeGreaterThan(expected.size);
      await expectComplete(o);
    } finally {
      await o.sim.close();
    }
  });

  it("expiredCursor: the window is read again from its start instead of failing the run", async () => {
    const o = await syncWith({ rates: { expiredCursor: 0.15 }, seed: 11 });
    try {
      const met = o.sim.stats().faults.expiredCursor ?? 0;
      expect(met).toBeGreaterThan(0);
      expect(
        logged(o, "cursor refused by the service, restarting the window"),
      ).toHaveLength(met);
      // Each restart is paid from the run's retry budget.
      expect(o.retries).toBe(met);
      await expectComplete(o);
    } finally {
      await o.sim.close();
    }
  });

  it("expiredCursor on every page: gives up with what to change, no checkpoint past the data", async () => {
    const sim = await testSimulator({
      faults: { rates: { expiredCursor: 1 }, seed: 11 },
    });
    const { config, w } = await setup(sim.url);
    const deps = runDeps(config, w);
    try {
      const err = await run(deps, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx, {
          fromMs: FROM,
          toMs: NOON,
          nowMs: NOON,
          skipOpenRefresh: true,
        }),
      ).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "CURSOR_EXPIRED" });
      expect((err as Error).message).toMatch(
        /refused its own cursor .* after 10 restarts/,
      );
      expect((err as { hint?: string }).hint).toMatch(/SESSIONHOUSE_WINDOW/);
      const [cp] = await select<{ n: string }>(
        w,
        "SELECT count() AS n FROM {db}.checkpoints",
      );
      expect(Number(cp?.n)).toBe(0);
    } finally {
      await deps.api.close();
      await sim.close();
    }
  });
});

describe("every fault at once", () => {
  it("keeps under the request-rate ceiling, retries included, and stores exactly the service's data", async () => {
    const sim = await testSimulator({
      faults: {
        rates: {
          rate429: 0.05,
          rate503: 0.05,
          rate502html: 0.05,
          slow: 0.05,
          reset: 0.05,
          truncate: 0.05,
          badRecord: 0.02,
          duplicate: 0.05,
          expiredCursor: 0.05,
        },
        seed: 5,
        slowMs: 100,
      },
      rateLimit: { limit: 100_000, windowMs: 1_000 },
    });
    const proxy = await recordingProxy(sim.url);
    const { config, w } = await setup(proxy.url, {
      SESSIONHOUSE_MAX_RPS: "15",
    });
    const mem = memoryLogger([API_KEY]);
    const deps = runDeps(
      { ...config, api: { ...config.api, retryBaseMs: 5, retryMaxMs: 50 } },
      w,
      { logger: mem.logger },
    );
    try {
      await run(deps, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx, {
          fromMs: FROM,
          toMs: NOON,
          nowMs: NOON,
          skipOpenRefresh: true,
        }),
      );
      expect(proxy.requests.length).toBeGreaterThan(30);
      expect(
        maxInWindow(
          proxy.requests.map((r) => r.at),
          1000 - 15,
        ),
      ).toBeLessThanOrEqual(15);
      const o: Outcome = {
        sim,
        w,
        logs: mem.lines,
        retries: 0,
        rowsInserted: 0,
        requestTimes: proxy.requests.map((q) => q.at),
      };
      expect(logged(o, "api call failed, retrying").length).toBeGreaterThan(0);
      await expectComplete(o);
    } finally {
      await deps.api.close();
      await proxy.close();
      await sim.close();
    }
  }, 120_000);
});

describe("new sessions arriving while a window is being paged", () => {
  it("are picked up by the keyset cursor, and what arrives after the last page by the next run's lookback", async () => {
    // The service's clock runs 120× real time; the exporter's runs 10 minutes ahead of it (clock
    // skew), so its newest window is still filling while it is paged.
    const sim = await testSimulator({ clock: SimClock.accelerated(120, NOON) });
    const { config, w } = await setup(sim.url, {
      SESSIONHOUSE_PAGE_SIZE: "5",
      SESSIONHOUSE_WINDOW: "15m",
      SESSIONHOUSE_LOOKBACK: "30m",
      SESSIONHOUSE_INITIAL_LOOKBACK: "1h",
      SESSIONHOUSE_MAX_RPS: "20",
    });
    const deps = runDeps(config, w);
    const skewMs = 10 * 60_000;
    try {
      const serviceNowAtStart = sim.clock.now();
      const first = await run(deps, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx, {
          nowMs: sim.clock.now() + skewMs,
          skipOpenRefresh: true,
        }),
      );
      const afterFirst = await storedSessions(w);
      const arrivedWhilePaging = [...afterFirst.rows.values()].filter(
        (s) => fromChTime(s.start_time) > serviceNowAtStart,
      );
      expect(arrivedWhilePaging.length).toBeGreaterThan(0);

      // Once the service's clock has passed the first run's end, the next run re-reads its lookback.
      while (sim.clock.now() < first.endMs + 60_000)
        await new Promise((r) => setTimeout(r, 100));
      await run(deps, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx, {
          nowMs: sim.clock.now() + skewMs,
          skipOpenRefresh: true,
        }),
      );
      const service = await readSessions(sim, first.startMs, first.endMs);
      const { rows, finalRows } = await storedSessions(w);
      expect(finalRows).toBe(rows.size);
      expect([...service.keys()].filter((id) => !rows.has(id))).toEqual([]);
    } finally {
      await deps.api.close();
      await sim.close();
    }
  }, 120_000);
});

describe.runIf(hasOpenssl)("TLS to the API with a private CA", () => {
  it("syncs through an https front of the simulator when SESSIONHOUSE_API_CA_FILE names the CA", async () => {
    const { caFile, key, cert } = makeCertificates();
    const sim = await testSimulator();
    const front = await recordingProxy(sim.url, { key, cert });
    expect(front.url).toMatch(/^https:/);
    const { config, w } = await setup(front.url, {
      SESSIONHOUSE_API_CA_FILE: caFile,
    });
    const deps = runDeps(config, w);
    try {
      await run(deps, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx, {
          fromMs: FROM,
          toMs: NOON,
          nowMs: NOON,
          skipOpenRefresh: true,
        }),
      );
      expect(front.requests.length).toBeGreaterThan(5);
      const { rows } = await storedSessions(w);
      expect(sessionDifferences(expected, rows, new Set())).toEqual([]);
      // Without the CA a sync (of a range not read yet) fails at once, not after retries.
      const untrusted = runDeps(
        { ...config, api: { ...config.api, caFile: undefined } },
        w,
      );
      const before = front.requests.length;
      const err = await run(untrusted, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx, {
          fromMs: FROM - 6 * HOUR,
          toMs: FROM,
          nowMs: NOON,
          skipOpenRefresh: true,
        }),
      ).catch((e: unknown) => e);
      await untrusted.api.close();
      expect(err).toMatchObject({
        code: "TLS",
        hint: expect.stringMatching(/SESSIONHOUSE_API_CA_FILE/) as unknown,
      });
      expect(front.requests.length).toBe(before);
    } finally {
      await deps.api.close();
      await front.close();
      await sim.close();
    }
  });
});
