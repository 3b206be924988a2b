import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  aggregationJobSchema,
  type AggregationJobConfig,
  type Config,
} from "../../../src/config/index.js";
import { syncAggregations } from "../../../src/pipeline/aggregations.js";
import { createListLogAggregationsHandler } from "../../../src/simulator/logs/handler.js";
import {
  LIST_LOG_AGGREGATIONS_PATH,
  type RouteContext,
  type Simulator,
} from "../../../src/simulator/index.js";
import { readCheckpoint } from "../../../src/warehouse/bookkeeping.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { UsageError } from "../../../src/util/errors.js";
import {
  NOON,
  run,
  runDeps,
  testSimulator,
  simulatorWarehouse,
} from "../../helpers/simulator.js";
import { select } from "../../helpers/warehouse.js";
import {
  apiAggregationWindow,
  storedAggregationWindow,
} from "../../helpers/expected.js";
import { aggregationName } from "../../../src/pipeline/names.js";

const HOUR = 3_600_000;
let sim: Simulator;

beforeAll(async () => {
  sim = await testSimulator();
});
afterAll(async () => {
  await sim.close();
});

const job = (
  over: Partial<AggregationJobConfig> & { name: string },
): AggregationJobConfig =>
  aggregationJobSchema.parse({
    interval: "5m",
    windowMs: "1h",
    refetchMs: "2h",
    ...over,
  });

const byTechUserResource = job({
  name: "tech_user_res",
  groupBy: ["resource.technology", "user.email", "resource.name"],
});

async function setup(): Promise<{ config: Config; w: Warehouse }> {
  return simulatorWarehouse(sim.url, { SESSIONHOUSE_INITIAL_LOOKBACK: "6h" });
}

/** What the API says for [from, to), flattened by the test oracle independently of the exporter. */
const apiHistogram = async (
  j: AggregationJobConfig,
  fromMs: number,
  toMs: number,
) => {
  const a = await apiAggregationWindow(sim, j, fromMs, toMs);
  return { counts: a.histogram, top: a.top, numHits: a.numHits };
};
const storedHistogram = async (
  w: Warehouse,
  j: AggregationJobConfig,
  fromMs: number,
  toMs: number,
) => (await storedAggregationWindow(w, j, fromMs, toMs)).histogram;
const storedTop = async (
  w: Warehouse,
  j: AggregationJobConfig,
  windowStartMs: number,
) => (await storedAggregationWindow(w, j, windowStartMs, windowStartMs)).top;
const storedNumHits = async (
  w: Warehouse,
  j: AggregationJobConfig,
  windowStartMs: number,
) =>
  (await storedAggregationWindow(w, j, windowStartMs, windowStartMs)).numHits;

describe("sync aggregations against the simulator", () => {
  it("stores exactly what the API returned: every level, key and count, the top values and numHits", async () => {
    const { config, w } = await setup();
    const deps = runDeps(config, w);
    const r = await run(deps, aggregationName(byTechUserResource), (ctx) =>
      syncAggregations(ctx, byTechUserResource, { nowMs: NOON }),
    );
    expect(r.windows).toBe(6);
    for (let ws = NOON - 6 * HOUR; ws < NOON; ws += HOUR) {
      const expected = await apiHistogram(byTechUserResource, ws, ws + HOUR);
      expect(expected.counts.size).toBeGreaterThan(50);
      // All three nesting levels are there.
      expect(
        new Set([...expected.counts.keys()].map((k) => k.split("|")[1])),
      ).toEqual(new Set(["0", "1", "2", "3"]));
      expect(
        await storedHistogram(w, byTechUserResource, ws, ws + HOUR),
      ).toEqual(expected.counts);
      expect(await storedTop(w, byTechUserResource, ws)).toEqual(expected.top);
      expect(await storedNumHits(w, byTechUserResource, ws)).toBe(
        expected.numHits,
      );
    }
    // A member the exporter does not know is stored too.
    const [unknown] = await select<{ n: string }>(
      w,
      "SELECT count() AS n FROM {db}.agg_top_values FINAL WHERE member = 'llmToolCallCounts'",
    );
    expect(Number(unknown?.n)).toBeGreaterThan(0);
    expect(
      (await readCheckpoint(w, aggregationName(byTechUserResource)))
        ?.positionMs,
    ).toBe(NOON);
    await deps.api.close();
    await w.close();
  });

  it("fetches several windows at once and still checkpoints them in order, storing the same", async () => {
    const { config: base, w } = await simulatorWarehouse(sim.url, {
      SESSIONHOUSE_INITIAL_LOOKBACK: "12h",
      SESSIONHOUSE_AGG_WINDOW_CONCURRENCY: "4",
    });
    // No API retries: the bad answer below fails its window at once.
    const config = { ...base, api: { ...base.api, maxRetries: 0 } };
    const j = job({ name: "side_by_side", groupBy: ["resource.technology"] });
    const bad = NOON - 7 * HOUR;
    const real = createListLogAggregationsHandler();
    let inFlight = 0;
    let peak = 0;
    const answered: number[] = [];
    // Every fourth window answers slowly, so later windows finish before earlier ones; one
    // window in the middle answers with a body of the wrong shape.
    const route =
      (badWindow: boolean) =>
      async (body: Record<string, unknown>, ctx: RouteContext) => {
        const startMs = Number(body.startTimestamp) * 1000;
        peak = Math.max(peak, ++inFlight);
        await sleep(((startMs - NOON) / HOUR) % 4 === 0 ? 80 : 5);
        inFlight--;
        answered.push(startMs);
        return badWindow && startMs === bad
          ? { aggregations: { logsOverTime: "not a list" }, numHits: "1" }
          : real(body, ctx);
      };
    const checkpoints: number[] = [];
    const deps = runDeps(config, w, {
      observer: { onCheckpoint: (e) => checkpoints.push(e.positionMs) },
    });
    sim.addRoute(LIST_LOG_AGGREGATIONS_PATH, route(true));
    try {
      const err = await run(deps, aggregationName(j), (ctx) =>
        syncAggregations(ctx, j, { nowMs: NOON }),
      ).catch((e: unknown) => e);
      expect((err as { code?: string }).code).toBe(
        "AGGREGATION_WINDOWS_FAILED",
      );
      expect(peak).toBeGreaterThan(1);
      expect(peak).toBeLessThanOrEqual(4);
      // Answers came out of window order, yet the checkpoint moved over the stored prefix only.
      expect(answered).toHaveLength(12);
      expect([...answered].sort((a, b) => a - b)).not.toEqual(answered);
      expect(checkpoints.at(-1)).toBe(bad);
      expect((await readCheckpoint(w, aggregationName(j)))?.positionMs).toBe(
        bad,
      );
      // The windows after the bad one are stored all the same.
      for (let ws = bad + HOUR; ws < NOON; ws += HOUR)
        expect(await storedHistogram(w, j, ws, ws + HOUR)).toEqual(
          (await apiHistogram(j, ws, ws + HOUR)).counts,
        );

      sim.addRoute(LIST_LOG_AGGREGATIONS_PATH, route(false));
      await run(deps, aggregationName(j), (ctx) =>
        syncAggregations(ctx, j, { nowMs: NOON }),
      );
    } finally {
      sim.addRoute(
        LIST_LOG_AGGREGATIONS_PATH,
        createListLogAggregationsHandler(),
      );
    }
    expect([...checkpoints].sort((a, b) => a - b)).toEqual(checkpoints);
    expect((await readCheckpoint(w, aggregationName(j)))?.positionMs).toBe(
      NOON,
    );
    for (let ws = NOON - 12 * HOUR; ws < NOON; ws += HOUR) {
      const expected = await apiHistogram(j, ws, ws + HOUR);
      expect(await storedHistogram(w, j, ws, ws + HOUR)).toEqual(
        expected.counts,
      );
      expect(await storedNumHits(w, j, ws)).toBe(expected.numHits);
    }
    await deps.api.close();
    await w.close();
  });

  it("replaces a re-fetched window's numbers exactly when more logs arrived, without double counting", async () => {
    const { config, w } = await setup();
    const j = job({ name: "by_tech", groupBy: ["resource.technology"] });
    const deps = runDeps(config, w);
    await run(deps, aggregationName(j), (ctx) =>
      syncAggregations(ctx, j, { nowMs: NOON - 30 * 60_000 }),
    );
    const lastWindow = NOON - HOUR;
    const early = await storedHistogram(w, j, lastWindow, NOON);
    // Half an hour later the same window holds more logs (and open sessions logged more).
    sim.clock.set(NOON);
    try {
      await run(deps, aggregationName(j), (ctx) =>
        syncAggregations(ctx, j, { nowMs: NOON }),
      );
      const expected = await apiHistogram(j, lastWindow, NOON);
      const later = await storedHistogram(w, j, lastWindow, NOON);
      expect(later).toEqual(expected.counts);
      const total = (m: Map<string, number>) =>
        [...m.entries()]
          .filter(([k]) => k.split("|")[1] === "0")
          .reduce((a, [, v]) => a + v, 0);
      expect(total(later)).toBeGreaterThan(total(early));
      expect(total(later)).toBe(expected.numHits);
      expect(await storedNumHits(w, j, lastWindow)).toBe(expected.numHits);
    } finally {
      sim.clock.set(NOON);
    }
    await deps.api.close();
    await w.close();
  });

  it("makes a bucket that vanished from a re-fetch disappear", async () => {
    const { config, w } = await setup();
    const j = job({ name: "vanish", groupBy: ["resource.technology"] });
    const deps = runDeps(config, w);
    await run(deps, aggregationName(j), (ctx) =>
      syncAggregations(ctx, j, { nowMs: NOON }),
    );
    const before = await storedHistogram(w, j, NOON - HOUR, NOON);
    const dropped = [...before.keys()].find(
      (k) => k.split("|")[1] === "1" && k.includes("|postgres|"),
    );
    expect(dropped).toBeDefined();
    // The service now answers without postgres (its logs re-classified out of the field): its
    // buckets must go. The steps still count those logs, as numHits does: a step that fell while
    // numHits did not would be an answer that disagrees (aggregations-answers.test.ts).
    const real = createListLogAggregationsHandler();
    type B = { key: string; count?: number; buckets?: B[] };
    sim.addRoute(
      LIST_LOG_AGGREGATIONS_PATH,
      (body: Record<string, unknown>, ctx: RouteContext) => {
        const res = real(body, ctx) as unknown as {
          aggregations: { logsOverTime?: { count?: number; buckets?: B[] }[] };
        };
        for (const e of res.aggregations.logsOverTime ?? [])
          e.buckets = (e.buckets ?? []).filter((b) => b.key !== "postgres");
        return res;
      },
    );
    try {
      await run(deps, aggregationName(j), (ctx) =>
        syncAggregations(ctx, j, { nowMs: NOON }),
      );
      const after = await storedHistogram(w, j, NOON - HOUR, NOON);
      expect([...after.keys()].some((k) => k.includes("|postgres|"))).toBe(
        false,
      );
      expect(after).toEqual((await apiHistogram(j, NOON - HOUR, NOON)).counts);
      const [sum] = await select<{ s: string }>(
        w,
        "SELECT sum(count) AS s FROM {db}.agg_histogram FINAL WHERE job = 'vanish' AND level = 1 AND key1 = 'postgres'",
      );
      expect(Number(sum?.s)).toBeGreaterThan(0); // older windows keep their postgres counts
    } finally {
      sim.addRoute(
        LIST_LOG_AGGREGATIONS_PATH,
        createListLogAggregationsHandler(),
      );
    }
    await deps.api.close();
    await w.close();
  });

  it("refuses four group-by fields before any request", async () => {
    const { config, w } = await setup();
    const deps = runDeps(config, w);
    const bad: AggregationJobConfig = {
      ...byTechUserResource,
      name: "four",
      groupBy: ["a.b", "c.d", "e.f", "g.h"],
    };
    const before = sim.stats().byMethod.ListLogAggregations ?? 0;
    const err = await run(deps, "aggregations.four", (ctx) =>
      syncAggregations(ctx, bad, { nowMs: NOON }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/at most 3/);
    expect(sim.stats().byMethod.ListLogAggregations ?? 0).toBe(before);
    await deps.api.close();
    await w.close();
  });

  it("resumes a backfill that crashed in the middle with nothing lost or doubled", async () => {
    const { config, w } = await setup();
    const j = job({
      name: "backfill",
      groupBy: ["resource.technology", "user.type"],
    });
    const from = NOON - 3 * 24 * HOUR;
    const to = NOON - 24 * HOUR;
    const abort = new AbortController();
    const crashing = runDeps(config, w, {
      signal: abort.signal,
      observer: { onCheckpoint: () => abort.abort(new Error("crash")) },
    });
    await expect(
      run(crashing, aggregationName(j), (ctx) =>
        syncAggregations(ctx, j, { fromMs: from, toMs: to, nowMs: NOON }),
      ),
    ).rejects.toThrow();
    const [{ windows } = { windows: "0" }] = await select<{ windows: string }>(
      w,
      "SELECT count() AS windows FROM {db}.agg_windows FINAL WHERE job = 'backfill'",
    );
    expect(Number(windows)).toBeGreaterThan(0);
    expect(Number(windows)).toBeLessThan(48);

    const deps = runDeps(config, w);
    await run(deps, aggregationName(j), (ctx) =>
      syncAggregations(ctx, j, { fromMs: from, toMs: to, nowMs: NOON }),
    );
    const expected = await apiHistogram(j, from, to);
    expect(await storedHistogram(w, j, from, to)).toEqual(expected.counts);
    const [hits] = await select<{ n: string; w: string }>(
      w,
      "SELECT sum(num_hits) AS n, count() AS w FROM {db}.agg_windows FINAL WHERE job = 'backfill'",
    );
    expect(Number(hits?.w)).toBe(48);
    expect(Number(hits?.n)).toBe(expected.numHits);
    await crashing.api.close();
    await deps.api.close();
    await w.close();
    // Two backfills of 48 windows each; on the server pass under load one took over 60 s.
  }, 180_000);
});
