// ListLogAggregations answers whose parts disagree, against the simulator and a real ClickHouse:
// two buckets under one key, two steps at one time, a top value listed twice, steps adding up
// to more than numHits, hits with no step to show them, a bucket counting more than its parent.
// Each is refused as a whole: what earlier fetches stored stays, the window stays pending with
// the reason, and the answer is dead-lettered. Answers that only look alike (sibling buckets of
// a multi-valued field adding up to more than their parent) are stored.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  aggregationJobSchema,
  type Config,
} from "../../../src/config/index.js";
import { syncAggregations } from "../../../src/pipeline/aggregations.js";
import { aggregationName } from "../../../src/pipeline/names.js";
import { createListLogAggregationsHandler } from "../../../src/simulator/logs/handler.js";
import {
  LIST_LOG_AGGREGATIONS_PATH,
  type RouteContext,
  type Simulator,
} from "../../../src/simulator/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { listWindows } from "../../../src/warehouse/windows.js";
import {
  NOON,
  run,
  runDeps,
  simulatorWarehouse,
  testSimulator,
} from "../../helpers/simulator.js";
import { select } from "../../helpers/warehouse.js";
import {
  apiAggregationWindow,
  storedAggregationWindow,
} from "../../helpers/expected.js";

const HOUR = 3_600_000;
let sim: Simulator;
// One database for the file: each test syncs a job of its own name, and every read below
// (stored windows, window states, dead letters, histogram rows) is by job.
let config: Config;
let w: Warehouse;

beforeAll(async () => {
  sim = await testSimulator();
  const made = await simulatorWarehouse(sim.url, {
    SESSIONHOUSE_INITIAL_LOOKBACK: "2h",
  });
  config = {
    ...made.config,
    api: { ...made.config.api, maxRetries: 0 },
  };
  w = made.w;
});
afterAll(async () => {
  await w?.close();
  await sim?.close();
});

const job = (name: string, groupBy = ["resource.technology"]) =>
  aggregationJobSchema.parse({
    name,
    interval: "5m",
    windowMs: "1h",
    refetchMs: "2h",
    groupBy,
  });

interface Step {
  datetime: string;
  count?: number;
  buckets?: Bucket[];
}
interface Bucket {
  key: string;
  count?: number;
  buckets?: Bucket[];
}
interface Answer {
  aggregations: Record<string, unknown> & { logsOverTime?: Step[] };
  numHits?: string;
}

type Handler = (body: Record<string, unknown>, ctx: RouteContext) => unknown;

/** Serves the real answer changed by `change` for the window starting at `startMs`. */
async function withChangedAnswer<T>(
  startMs: number,
  change: (a: Answer) => void,
  fn: () => Promise<T>,
): Promise<T> {
  const real = createListLogAggregationsHandler();
  const handler: Handler = (body, ctx) => {
    if (String(body.startTimestamp) !== String(startMs / 1000))
      return real(body, ctx);
    const answer = JSON.parse(JSON.stringify(real(body, ctx))) as Answer;
    change(answer);
    return answer;
  };
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

const steps = (a: Answer): Step[] => a.aggregations.logsOverTime ?? [];
const grouped = (a: Answer): Step => {
  const s = steps(a).find((x) => (x.buckets ?? []).length > 0);
  if (!s) throw new Error("the answer has no grouped step");
  return s;
};
const firstBucket = (a: Answer): Bucket => grouped(a).buckets?.[0] as Bucket;
const topMember = (a: Answer): { key: string; count: number }[] => {
  const values = a.aggregations.resourceTechnologies as
    { key: string; count: number }[] | undefined;
  if (!values?.length) throw new Error("no resourceTechnologies values");
  return values;
};

/** Each way the parts of an answer disagree, and what the window's last error says then. */
const DISAGREEING: ReadonlyArray<[string, (a: Answer) => void, RegExp]> = [
  [
    "two buckets under the same key",
    (a) => grouped(a).buckets?.push({ ...firstBucket(a), count: 1 }),
    /two buckets at .*"[^"]+" \(counts \d+ and 1\)/,
  ],
  [
    "two steps at the same time",
    (a) => steps(a).push({ datetime: grouped(a).datetime, count: 1 }),
    /two logsOverTime steps at /,
  ],
  [
    "a top value listed twice in one member",
    (a) => topMember(a).push({ key: topMember(a)[0]?.key ?? "", count: 1 }),
    /member resourceTechnologies lists the key "[^"]+" twice/,
  ],
  [
    "steps adding up to more than numHits",
    (a) => {
      a.numHits = String(BigInt(a.numHits ?? "0") - 1n);
    },
    /the logsOverTime counts add up to \d+, more than numHits \d+/,
  ],
  [
    "hits with no step to show them",
    (a) => {
      a.aggregations.logsOverTime = [];
    },
    /numHits is \d+ but no logsOverTime step holds a count/,
  ],
  [
    "a bucket counting more than its parent",
    (a) => {
      firstBucket(a).count = (grouped(a).count ?? 0) + 1;
    },
    /counts \d+, more than the \d+ of its parent/,
  ],
];

describe("an answer whose parts disagree", () => {
  it.each(DISAGREEING)(
    "%s: replaces nothing stored, keeps the window pending with the reason, dead-letters the answer; the next good answer is stored",
    async (name, change, reason) => {
      const j = job(`disagree_${DISAGREEING.findIndex((d) => d[0] === name)}`);
      const deps = runDeps(config, w);
      const sync = () =>
        run(deps, aggregationName(j), (ctx) =>
          syncAggregations(ctx, j, { nowMs: NOON }),
        );
      await sync();
      const last = NOON - HOUR;
      const kept = await storedAggregationWindow(w, j, last, NOON);
      expect(kept.numHits).toBeGreaterThan(0);

      const err = await withChangedAnswer(last, change, sync).catch(
        (e: unknown) => e,
      );
      expect((err as { code?: string }).code).toBe(
        "AGGREGATION_WINDOWS_FAILED",
      );
      expect((err as Error).message).toMatch(reason);
      // Nothing of the answer replaced what was stored.
      const after = await storedAggregationWindow(w, j, last, NOON);
      expect(after).toEqual(kept);
      const state = (await listWindows(w, { job: j.name })).find(
        (r) => r.startMs === last,
      );
      expect(state).toMatchObject({ state: "pending", attempts: 1 });
      expect(state?.lastError).toMatch(reason);
      const dead = await select<{ reason: string; raw: string }>(
        w,
        "SELECT reason, raw FROM {db}.dead_letters FINAL WHERE job = {job:String}",
        { job: aggregationName(j) },
      );
      expect(dead).toHaveLength(1);
      expect(dead[0]?.reason).toMatch(reason);
      expect(JSON.parse(dead[0]?.raw ?? "null")).toHaveProperty("aggregations");

      // The real answer again: stored, the window settled.
      await sync();
      expect(
        (await listWindows(w, { job: j.name })).find((r) => r.startMs === last)
          ?.state,
      ).toBe("stored");
      const expected = await apiAggregationWindow(sim, j, last, NOON);
      const stored = await storedAggregationWindow(w, j, last, NOON);
      expect(stored.histogram).toEqual(expected.histogram);
      expect(stored.numHits).toBe(expected.numHits);
      await deps.api.close();
    },
  );

  it("refuses a re-fetch whose step counts fewer hits than stored while numHits did not fall", async () => {
    const j = job("fallen_step");
    const deps = runDeps(config, w);
    const sync = () =>
      run(deps, aggregationName(j), (ctx) =>
        syncAggregations(ctx, j, { nowMs: NOON }),
      );
    await sync();
    const last = NOON - HOUR;
    const kept = await storedAggregationWindow(w, j, last, NOON);
    // One hit fewer in a step and in one of its buckets; numHits as before. Each part agrees
    // with the others; only the stored answer says the step held more.
    const err = await withChangedAnswer(
      last,
      (a) => {
        const step = grouped(a);
        const bucket = (step.buckets ?? []).find((b) => (b.count ?? 0) > 0);
        step.count = (step.count ?? 0) - 1;
        if (bucket) bucket.count = (bucket.count ?? 0) - 1;
      },
      sync,
    ).catch((e: unknown) => e);
    const reason =
      /counts \d+, fewer than the \d+ stored, while numHits did not fall/;
    expect((err as Error).message).toMatch(reason);
    expect(await storedAggregationWindow(w, j, last, NOON)).toEqual(kept);
    const state = (await listWindows(w, { job: j.name })).find(
      (r) => r.startMs === last,
    );
    expect(state).toMatchObject({ state: "pending", attempts: 1 });
    expect(state?.lastError).toMatch(reason);
    await sync();
    expect(
      (await listWindows(w, { job: j.name })).find((r) => r.startMs === last)
        ?.state,
    ).toBe("stored");
    await deps.api.close();
  });

  it("stores an answer whose sibling buckets of a multi-valued field add up to more than their parent", async () => {
    const j = job("multi_valued", ["user.groups"]);
    const deps = runDeps(config, w);
    await run(deps, aggregationName(j), (ctx) =>
      syncAggregations(ctx, j, { nowMs: NOON }),
    );
    // The answers held such buckets: level 1 adds up to more than level 0 at some step.
    const [over] = await select<{ n: string }>(
      w,
      `SELECT count() AS n FROM (
         SELECT bucket_time, sumIf(count, level = 1) AS children, sumIf(count, level = 0) AS total
         FROM {db}.agg_histogram FINAL WHERE job = 'multi_valued' GROUP BY bucket_time
       ) WHERE children > total`,
    );
    expect(Number(over?.n)).toBeGreaterThan(0);
    const open = await listWindows(w, {
      job: j.name,
      states: ["pending", "poisoned"],
    });
    expect(open).toEqual([]);
    await deps.api.close();
  });
});
