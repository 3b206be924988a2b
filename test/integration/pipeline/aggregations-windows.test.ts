// Window state of the aggregation jobs against the simulator and a real ClickHouse: a window
// whose answer is bad stays pending and holds the checkpoint, is fetched again and stored, is
// poisoned after its last attempt until an operator skips it; a re-fetch with fewer hits keeps
// the stored counts; a job changed under the same name is refused; a window over which earlier
// fetches stored a few hundred thousand rows is stored like any other; a window the service
// refuses (invalid_argument) is kept in the ledger like one with a bad answer, while a refused
// key or an outage fails the run without counting an attempt against the window.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  aggregationJobSchema,
  type AggregationJobConfig,
  type Config,
} from "../../../src/config/index.js";
import {
  checkJob,
  syncAggregations,
} from "../../../src/pipeline/aggregations.js";
import { Metrics } from "../../../src/ops/metrics.js";
import { createListLogAggregationsHandler } from "../../../src/simulator/logs/handler.js";
import {
  LIST_LOG_AGGREGATIONS_PATH,
  RawJson,
  SimConnectError,
  type RouteContext,
  type Simulator,
} from "../../../src/simulator/index.js";
import { readCheckpoint } from "../../../src/warehouse/bookkeeping.js";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import { chTime, chTimeSeconds } from "../../../src/warehouse/format.js";
import { insertRows } from "../../../src/warehouse/insert.js";
import {
  forgetJob,
  listWindows,
  writeWindows,
} from "../../../src/warehouse/windows.js";
import { UsageError } from "../../../src/util/errors.js";
import {
  API_KEY,
  NOON,
  run,
  runDeps,
  testSimulator,
} from "../../helpers/simulator.js";
import { reusedDatabase, select, testConfig } from "../../helpers/warehouse.js";
import {
  apiAggregationWindow,
  storedAggregationWindow,
} from "../../helpers/expected.js";
import {
  aggregationName,
  backfillPrefix,
} from "../../../src/pipeline/names.js";

const HOUR = 3_600_000;
let sim: Simulator;
const db = reusedDatabase();

beforeAll(async () => {
  sim = await testSimulator();
});
afterAll(async () => {
  await db.close();
  await sim.close();
});

const job = (
  over: Partial<AggregationJobConfig> & { name: string },
): AggregationJobConfig =>
  aggregationJobSchema.parse({
    interval: "5m",
    windowMs: "1h",
    refetchMs: "2h",
    groupBy: ["resource.technology"],
    ...over,
  });

/**
 * A fresh, migrated database (one for the file, emptied for each case: reusedDatabase) and the
 * case's own handle on it, closed by the case; no API retries, so that a bad answer fails at once.
 */
async function setup(
  env: Record<string, string> = {},
): Promise<{ config: Config; w: Warehouse }> {
  const config = await testConfig(
    {
      SESSIONHOUSE_API_URL: sim.url,
      SESSIONHOUSE_API_KEY: API_KEY,
      SESSIONHOUSE_MAX_RPS: "1000",
      SESSIONHOUSE_INITIAL_LOOKBACK: "6h",
      ...env,
    },
    db.name,
  );
  await db.fresh(config);
  const w = await openWarehouse(config);
  return { config: { ...config, api: { ...config.api, maxRetries: 0 } }, w };
}

type Handler = (body: Record<string, unknown>, ctx: RouteContext) => unknown;

/** Serves `answer` for the window starting at `startMs`, the real answer for the others. */
async function withWindowAnswer<T>(
  startMs: number,
  answer: (real: () => unknown) => unknown,
  fn: () => Promise<T>,
): Promise<T> {
  const real = createListLogAggregationsHandler();
  const handler: Handler = (body, ctx) =>
    String(body.startTimestamp) === String(startMs / 1000)
      ? answer(() => real(body, ctx))
      : real(body, ctx);
  sim.addRoute(LIST_LOG_AGGREGATIONS_PATH, handler);
  try {
    return await fn();
  } finally {
    sim.addRoute(
      LIST_LOG_AGGREGATIONS_PATH,
      createListLogAggregationsHandler(),
    );
  }
}

const requests = () => sim.stats().byMethod.ListLogAggregations ?? 0;

async function checkpointOf(w: Warehouse, j: AggregationJobConfig) {
  return (await readCheckpoint(w, aggregationName(j)))?.positionMs;
}

async function stateOf(w: Warehouse, j: AggregationJobConfig, startMs: number) {
  return (await listWindows(w, { job: j.name })).find(
    (r) => r.startMs === startMs,
  );
}

describe("aggregation windows that cannot be stored", () => {
  it("keeps a dead-lettered window pending before the checkpoint, then stores it on the next run and fetches nothing else twice", async () => {
    const { config, w } = await setup();
    const j = job({ name: "dead_window" });
    const deps = runDeps(config, w);
    const bad = NOON - 6 * HOUR;
    const err = await withWindowAnswer(
      bad,
      () => ({ aggregations: { logsOverTime: "not a list" }, numHits: "12" }),
      () =>
        run(deps, aggregationName(j), (ctx) =>
          syncAggregations(ctx, j, { nowMs: NOON - 2 * HOUR }),
        ).catch((e: unknown) => e),
    );
    expect((err as { code?: string }).code).toBe("AGGREGATION_WINDOWS_FAILED");
    expect((err as Error).message).toContain(new Date(bad).toISOString());
    expect((err as Error).message).toContain("ListLogAggregations");
    // The window before it is stored and passed; the checkpoint stops at the bad one.
    expect(await checkpointOf(w, j)).toBe(bad);
    expect(await stateOf(w, j, bad)).toMatchObject({
      state: "pending",
      attempts: 1,
    });
    // The windows after it are stored all the same.
    const [after] = await select<{ n: string }>(
      w,
      "SELECT count() AS n FROM {db}.agg_windows FINAL WHERE job = 'dead_window' AND window_start > {bad:DateTime('UTC')}",
      { bad: chTimeSeconds(bad) },
    );
    expect(Number(after?.n)).toBe(3);

    // Next run, two hours later: the pending window and the two new ones, nothing stored twice.
    const before = requests();
    const r = await run(deps, aggregationName(j), (ctx) =>
      syncAggregations(ctx, j, { nowMs: NOON }),
    );
    expect(requests() - before).toBe(3);
    expect(r.windows).toBe(3);
    expect(await checkpointOf(w, j)).toBe(NOON);
    expect((await stateOf(w, j, bad))?.state).toBe("stored");
    const expected = await apiAggregationWindow(sim, j, bad, bad + HOUR);
    const stored = await storedAggregationWindow(w, j, bad, bad + HOUR);
    expect(stored.histogram).toEqual(expected.histogram);
    expect(stored.numHits).toBe(expected.numHits);
    await deps.api.close();
    await w.close();
  });

  it("poisons a window after maxWindowAttempts bad answers (BAD_RESPONSE), stops fetching it, and moves on once it is skipped", async () => {
    const { config, w } = await setup({
      SESSIONHOUSE_MAX_WINDOW_ATTEMPTS: "2",
    });
    expect(config.aggregations.maxWindowAttempts).toBe(2);
    const j = job({ name: "poison" });
    const metrics = new Metrics({ processMetrics: false });
    const deps = runDeps(config, w, { observer: metrics });
    const bad = NOON - 3 * HOUR;
    const sync = () =>
      run(deps, aggregationName(j), (ctx) =>
        syncAggregations(ctx, j, { nowMs: NOON }),
      );
    await withWindowAnswer(
      bad,
      () => RawJson.of("<html>proxy error</html>"),
      async () => {
        const first = await sync().catch((e: unknown) => e);
        expect((first as Error).message).toContain("BAD_RESPONSE");
        expect((first as Error).message).toContain("now pending");
        expect(await stateOf(w, j, bad)).toMatchObject({
          state: "pending",
          attempts: 1,
        });
        expect(await checkpointOf(w, j)).toBe(bad);
        const second = await sync().catch((e: unknown) => e);
        expect((second as Error).message).toContain("now poisoned");
        expect((second as { hint?: string }).hint).toContain("windows skip");
        expect(await stateOf(w, j, bad)).toMatchObject({
          state: "poisoned",
          attempts: 2,
        });
        // Poisoned: no longer fetched; the run succeeds and reports it; the checkpoint waits.
        const before = requests();
        const third = await sync();
        expect(third.poisoned).toEqual([{ startMs: bad, endMs: bad + HOUR }]);
        expect(requests() - before).toBe(2); // the re-fetch period only, without the bad window
        expect(await checkpointOf(w, j)).toBe(bad);
      },
    );
    expect(await metrics.text()).toMatch(
      /sessionhouse_aggregation_windows_poisoned_total\{job="aggregations.poison"\} 1/,
    );
    const poisoned = await stateOf(w, j, bad);
    if (!poisoned) throw new Error("the poisoned window is not recorded");
    await writeWindows(
      w,
      [
        {
          ...poisoned,
          state: "skipped",
          skippedBy: "ops",
          skipReason: "proxy broke",
        },
      ],
      { retries: 0 },
    );
    const after = await sync();
    expect(after.poisoned).toEqual([]);
    expect(await checkpointOf(w, j)).toBe(NOON);
    await deps.api.close();
    await w.close();
  });
});

describe("a window the service refuses", () => {
  const refuse =
    (code: "invalid_argument" | "unauthenticated" | "unavailable") => () => {
      throw new SimConnectError(
        code,
        "histogram: too many buckets for this window",
      );
    };

  it("keeps a window answered invalid_argument pending, then poisoned, with the error; the others are stored; once skipped, the checkpoint passes it", async () => {
    const { config, w } = await setup({
      SESSIONHOUSE_MAX_WINDOW_ATTEMPTS: "2",
    });
    const j = job({ name: "refused" });
    const deps = runDeps(config, w);
    const bad = NOON - 3 * HOUR;
    const sync = () =>
      run(deps, aggregationName(j), (ctx) =>
        syncAggregations(ctx, j, { nowMs: NOON }),
      );
    await withWindowAnswer(bad, refuse("invalid_argument"), async () => {
      const first = await sync().catch((e: unknown) => e);
      expect((first as { code?: string }).code).toBe(
        "AGGREGATION_WINDOWS_FAILED",
      );
      expect((first as Error).message).toContain(new Date(bad).toISOString());
      expect((first as Error).message).toContain("invalid_argument");
      expect((first as Error).message).toContain("now pending");
      expect(await stateOf(w, j, bad)).toMatchObject({
        state: "pending",
        attempts: 1,
        lastError: expect.stringMatching(
          /invalid_argument.*too many buckets for this window/,
        ) as unknown,
      });
      expect(await checkpointOf(w, j)).toBe(bad);
      // The windows after it are stored all the same.
      for (const later of [bad + HOUR, bad + 2 * HOUR])
        expect((await stateOf(w, j, later))?.state).toBe("stored");
      const second = await sync().catch((e: unknown) => e);
      expect((second as Error).message).toContain("now poisoned");
      expect(await stateOf(w, j, bad)).toMatchObject({
        state: "poisoned",
        attempts: 2,
      });
      const third = await sync();
      expect(third.poisoned).toEqual([{ startMs: bad, endMs: bad + HOUR }]);
      expect(await checkpointOf(w, j)).toBe(bad);
    });
    const poisoned = await stateOf(w, j, bad);
    if (!poisoned) throw new Error("the poisoned window is not recorded");
    await writeWindows(
      w,
      [{ ...poisoned, state: "skipped", skippedBy: "ops", skipReason: "x" }],
      { retries: 0 },
    );
    await sync();
    expect(await checkpointOf(w, j)).toBe(NOON);
    await deps.api.close();
    await w.close();
  });

  it.each(["unauthenticated", "unavailable"] as const)(
    "fails the run on %s for one window without counting an attempt against it",
    async (code) => {
      const { config, w } = await setup();
      const j = job({ name: `not_the_window_${code}` });
      const deps = runDeps(config, w);
      const bad = NOON - 3 * HOUR;
      const err = await withWindowAnswer(bad, refuse(code), () =>
        run(deps, aggregationName(j), (ctx) =>
          syncAggregations(ctx, j, { nowMs: NOON }),
        ).catch((e: unknown) => e),
      );
      expect((err as { code?: string }).code).toBe(code);
      expect(await stateOf(w, j, bad)).toBeUndefined();
      expect(
        await listWindows(w, { job: j.name, states: ["pending", "poisoned"] }),
      ).toEqual([]);
      expect((await checkpointOf(w, j)) ?? 0).toBeLessThanOrEqual(bad);
      await deps.api.close();
      await w.close();
    },
  );
});

describe("a pending window far behind", () => {
  it("is fetched alone by the next incremental run, however old, and stored", async () => {
    const { config, w } = await setup({ SESSIONHOUSE_INITIAL_LOOKBACK: "2h" });
    const j = job({ name: "old_pending" });
    const deps = runDeps(config, w);
    const bad = NOON - 5 * 24 * HOUR;
    const backfill = await withWindowAnswer(
      bad,
      () => ({ aggregations: { logsOverTime: 7 }, numHits: "1" }),
      () =>
        run(deps, aggregationName(j), (ctx) =>
          syncAggregations(ctx, j, {
            fromMs: bad - HOUR,
            toMs: bad + 2 * HOUR,
            nowMs: NOON,
          }),
        ).catch((e: unknown) => e),
    );
    expect((backfill as { code?: string }).code).toBe(
      "AGGREGATION_WINDOWS_FAILED",
    );
    expect((await stateOf(w, j, bad))?.state).toBe("pending");
    // The incremental sync covers the last two hours, and the pending window five days back.
    const before = requests();
    const r = await run(deps, aggregationName(j), (ctx) =>
      syncAggregations(ctx, j, { nowMs: NOON }),
    );
    expect(r.windows).toBe(3);
    expect(requests() - before).toBe(3);
    expect((await stateOf(w, j, bad))?.state).toBe("stored");
    const expected = await apiAggregationWindow(sim, j, bad, bad + HOUR);
    expect(
      (await storedAggregationWindow(w, j, bad, bad + HOUR)).histogram,
    ).toEqual(expected.histogram);
    expect(await checkpointOf(w, j)).toBe(NOON);
    await deps.api.close();
    await w.close();
  });
});

describe("a re-fetch with fewer hits", () => {
  it("keeps the stored counts, marks the window shrunk and counts it; an equal re-fetch supersedes again", async () => {
    const { config, w } = await setup();
    const j = job({ name: "shrink" });
    const metrics = new Metrics({ processMetrics: false });
    const deps = runDeps(config, w, { observer: metrics });
    const sync = () =>
      run(deps, aggregationName(j), (ctx) =>
        syncAggregations(ctx, j, { nowMs: NOON }),
      );
    await sync();
    const last = NOON - HOUR;
    const kept = await storedAggregationWindow(w, j, last, NOON);
    expect(kept.numHits).toBeGreaterThan(0);
    // The service's retention expired: the window answers with nothing.
    await withWindowAnswer(last, () => ({ aggregations: {} }), sync);
    const after = await storedAggregationWindow(w, j, last, NOON);
    expect(after.histogram).toEqual(kept.histogram);
    expect(after.top).toEqual(kept.top);
    expect(after.numHits).toBe(kept.numHits);
    const [row] = await select<{ state: string; r: string }>(
      w,
      "SELECT state, toString(refetched_num_hits) AS r FROM {db}.agg_windows FINAL WHERE job = 'shrink' AND window_start = {ws:DateTime('UTC')}",
      { ws: chTimeSeconds(last) },
    );
    expect(row).toEqual({ state: "shrunk", r: "0" });
    expect((await stateOf(w, j, last))?.state).toBe("shrunk");
    expect(await checkpointOf(w, j)).toBe(NOON);
    expect(await metrics.text()).toMatch(
      /sessionhouse_aggregation_windows_shrunk_total\{job="aggregations.shrink"\} 1/,
    );
    // The real answer again (equal hits): stored as usual.
    await sync();
    const [again] = await select<{ state: string }>(
      w,
      "SELECT state FROM {db}.agg_windows FINAL WHERE job = 'shrink' AND window_start = {ws:DateTime('UTC')}",
      { ws: chTimeSeconds(last) },
    );
    expect(again?.state).toBe("stored");
    expect((await storedAggregationWindow(w, j, last, NOON)).histogram).toEqual(
      kept.histogram,
    );
    await deps.api.close();
    await w.close();
  });
});

describe("job definitions", () => {
  it("refuses a job whose group-by, interval, window or query changed under the same name, before any request", async () => {
    const { config, w } = await setup();
    const deps = runDeps(config, w);
    const j = job({ name: "defined" });
    await run(deps, aggregationName(j), (ctx) =>
      syncAggregations(ctx, j, { nowMs: NOON }),
    );
    for (const changed of [
      { ...j, groupBy: ["user.email"] },
      { ...j, interval: "1m" },
      { ...j, windowMs: 2 * HOUR },
      { ...j, query: "resource.technology:postgres" },
    ]) {
      const before = requests();
      const err = await run(deps, aggregationName(changed), (ctx) =>
        syncAggregations(ctx, changed, { nowMs: NOON }),
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toMatch(
        /changed since its rows were stored/,
      );
      expect((err as UsageError).hint).toContain("new name");
      expect((err as UsageError).hint).toContain("windows forget defined");
      expect(requests()).toBe(before);
    }
    // After the old rows are dropped, the new definition runs and is the one recorded.
    const changed = { ...j, groupBy: ["user.email"] };
    await forgetJob(w, j.name, {
      stream: aggregationName(j),
      backfillPrefix: backfillPrefix(aggregationName(j)),
    });
    await run(deps, aggregationName(changed), (ctx) =>
      syncAggregations(ctx, changed, { nowMs: NOON }),
    );
    const [fields] = await select<{ f: string[] }>(
      w,
      "SELECT groupUniqArray(field1) AS f FROM {db}.agg_histogram FINAL WHERE job = 'defined' AND level = 1 AND count > 0",
    );
    expect(fields?.f).toEqual(["user.email"]);
    await deps.api.close();
    await w.close();
  });

  it("refuses an aggregation job named sessions: the window ledger keys the sessions stream's windows so", () => {
    expect(() => checkJob(job({ name: "sessions" }))).toThrow(UsageError);
    expect(() => checkJob(job({ name: "sessions" }))).toThrow(
      /sessions stream/,
    );
  });

  it("refuses a zero window or interval in the configuration", () => {
    expect(
      aggregationJobSchema.safeParse({ name: "z", windowMs: 0 }).success,
    ).toBe(false);
    expect(
      aggregationJobSchema.safeParse({ name: "z", windowMs: "0h" }).success,
    ).toBe(false);
    expect(
      aggregationJobSchema.safeParse({ name: "z", interval: "0m" }).success,
    ).toBe(false);
  });
});

describe("a window with many earlier rows", () => {
  it("stores a re-fetch over 160,000 earlier rows of the window (more than a spread into Math.max takes)", async () => {
    const { config, w } = await setup({ SESSIONHOUSE_INITIAL_LOOKBACK: "1h" });
    const j = job({ name: "wide" });
    const ws = NOON - HOUR;
    const fetchedAt = chTime(NOON - HOUR);
    const rows = Array.from({ length: 160_000 }, (_, i) => ({
      job: j.name,
      bucket_time: chTimeSeconds(ws + (i % 12) * 300_000),
      interval_s: 300,
      level: 1,
      field1: "resource.technology",
      key1: `old-${i}`,
      field2: "",
      key2: "",
      field3: "",
      key3: "",
      count: 1,
      window_start: chTimeSeconds(ws),
      fetched_at: fetchedAt,
    }));
    await insertRows(w, "agg_histogram", rows, { retries: 0 });
    const deps = runDeps(config, w);
    await run(deps, aggregationName(j), (ctx) =>
      syncAggregations(ctx, j, { nowMs: NOON }),
    );
    const expected = await apiAggregationWindow(sim, j, ws, NOON);
    expect((await storedAggregationWindow(w, j, ws, NOON)).histogram).toEqual(
      expected.histogram,
    );
    expect(await checkpointOf(w, j)).toBe(NOON);
    await deps.api.close();
    await w.close();
  });
});
