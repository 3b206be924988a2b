// The resources' environments (the `resource_environments` view) read the same whether a day
// comes from the environment rollup (migrations/0053) or from the job's hourly buckets: a
// change of environment within a day and across days, two environments in one bucket, a day
// not rolled up yet, and a re-fetch that counts a resource's latest bucket 0 after its day was
// rolled up.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENVIRONMENT_JOB, type Config } from "../../../src/config/index.js";
import { rollUp } from "../../../src/pipeline/rollups.js";
import { createLogger } from "../../../src/util/logger.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { ENVIRONMENT_ROLLUP_SOURCE } from "../../../src/warehouse/rollups.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

let w: Warehouse;
let config: Config;
beforeAll(async () => {
  config = await testConfig();
  w = await migratedWarehouse(config);
});
afterAll(async () => {
  await w.close();
});

const logger = createLogger({ level: "silent" });

/** One hourly bucket of the job: its time ("YYYY-MM-DD HH:00:00"), environment, resource, logs. */
type Bucket = [time: string, environment: string, resource: string, n: number];

/** A fetch of the job's buckets at `fetched`: a later one replaces an earlier one's buckets. */
async function fetchBuckets(
  fetched: string,
  buckets: readonly Bucket[],
): Promise<void> {
  await w.client.insert({
    table: `${w.database}.agg_histogram`,
    values: buckets.map(([time, environment, resource, n]) => ({
      job: ENVIRONMENT_JOB,
      bucket_time: time,
      interval_s: 3600,
      level: 2,
      field1: "resource.environment",
      key1: environment,
      field2: "resource.name",
      key2: resource,
      count: n,
      window_start: `${time.slice(0, 10)} 00:00:00`,
      fetched_at: fetched,
    })),
    format: "JSONEachRow",
  });
}

interface Environment {
  resource_name: string;
  environment: string;
  last_seen: string;
}

function environments(): Promise<Environment[]> {
  return select<Environment>(
    w,
    `SELECT resource_name, environment, toString(last_seen) AS last_seen
     FROM {db}.resource_environments ORDER BY resource_name`,
  );
}

/**
 * The same from every bucket of the job as stored (the view's definition before the rollup):
 * the environment of each resource's latest bucket that counts logs, and of two in one bucket
 * the one whose name hashes greater.
 */
function fromEveryBucket(): Promise<Environment[]> {
  return select<Environment>(
    w,
    `SELECT key2 AS resource_name, argMax(key1, (bucket_time, cityHash64(key1))) AS environment,
            toString(max(bucket_time)) AS last_seen
     FROM {db}.agg_histogram FINAL
     WHERE job = {job:String} AND level = 2 AND count > 0
     GROUP BY resource_name ORDER BY resource_name`,
    { job: ENVIRONMENT_JOB },
  );
}

function rolledUpDays(): Promise<{ day: string }[]> {
  return select<{ day: string }>(
    w,
    `SELECT toString(day) AS day FROM {db}.rollup_days FINAL WHERE source = {source:String} ORDER BY day`,
    { source: ENVIRONMENT_ROLLUP_SOURCE },
  );
}

const pass = (at: string) =>
  rollUp({ config, warehouse: w, logger }, Date.parse(at));

describe("the resources' environments", () => {
  it("read the same from the rollup as from every bucket, and follow a re-fetch of a rolled-up day", async () => {
    await fetchBuckets("2026-08-12 01:00:00", [
      // db-1 moves from staging to production within the day.
      ["2026-08-10 05:00:00", "staging", "db-1", 1],
      ["2026-08-10 09:00:00", "production", "db-1", 2],
      // db-2 moves from production to staging the next day.
      ["2026-08-10 03:00:00", "production", "db-2", 4],
      ["2026-08-11 07:00:00", "staging", "db-2", 1],
      // db-3 is seen in two environments in the same bucket.
      ["2026-08-11 10:00:00", "dev", "db-3", 1],
      ["2026-08-11 10:00:00", "test", "db-3", 1],
    ]);
    const before = await environments();
    expect(before).toEqual(await fromEveryBucket());
    expect(before.map((e) => [e.resource_name, e.environment])).toEqual([
      ["db-1", "production"],
      ["db-2", "staging"],
      ["db-3", expect.stringMatching(/^(dev|test)$/)],
    ]);

    // The two days ended more than the job's re-fetch ago: both are rolled up, and read from
    // the rollup the same.
    const first = await pass("2026-08-12T12:00:00Z");
    expect(first.environmentDays).toBe(2);
    expect(await rolledUpDays()).toEqual([
      { day: "2026-08-10" },
      { day: "2026-08-11" },
    ]);
    expect(await environments()).toEqual(before);
    expect((await pass("2026-08-12T12:00:00Z")).environmentDays).toBe(0);

    // A day not rolled up yet (today) is read from its buckets at once.
    await fetchBuckets("2026-08-12 12:00:00", [
      ["2026-08-12 11:00:00", "dr", "db-1", 3],
      ["2026-08-12 11:00:00", "production", "db-4", 1],
    ]);
    const today = await environments();
    expect(today).toEqual(await fromEveryBucket());
    expect(today.map((e) => [e.resource_name, e.environment])).toEqual([
      ["db-1", "dr"],
      ["db-2", "staging"],
      ["db-3", before[2]?.environment],
      ["db-4", "production"],
    ]);

    // A later fetch of 2026-08-11 counts db-2's staging bucket 0 (and db-3's as before). Until
    // the next pass the rolled-up day reads as it was computed; the pass computes it again, and
    // db-2 is back in production, seen last on 2026-08-10.
    await fetchBuckets("2026-08-13 01:00:00", [
      ["2026-08-11 07:00:00", "staging", "db-2", 0],
      ["2026-08-11 10:00:00", "dev", "db-3", 1],
      ["2026-08-11 10:00:00", "test", "db-3", 1],
    ]);
    expect(await environments()).toEqual(today);
    const second = await pass("2026-08-13T12:00:00Z");
    expect(second.environmentDays).toBe(2); // 2026-08-11 again, and 2026-08-12
    const after = await environments();
    expect(after).toEqual(await fromEveryBucket());
    expect(after.find((e) => e.resource_name === "db-2")).toEqual({
      resource_name: "db-2",
      environment: "production",
      last_seen: "2026-08-10 03:00:00",
    });
  });

  it("read the same from the rollup as from every bucket over a month of changing environments", async () => {
    // 40 resources over 30 days, each bucket's environment drawn from four, some buckets
    // counting 0; every third day (the last among them) read again with other environments.
    const draw = (salt: number) => `INSERT INTO {db}.agg_histogram
        (job, bucket_time, interval_s, level, field1, key1, field2, key2, count, window_start, fetched_at)
      SELECT {job:String}, toDateTime('2026-06-01 00:00:00', 'UTC') + h * 3600 AS t, 3600, 2,
             'resource.environment', ['production', 'staging', 'dev', 'test'][1 + cityHash64(h, r, ${salt}) % 4],
             'resource.name', concat('res-', toString(r)), cityHash64(r, h, ${salt}) % 3, toStartOfDay(t),
             toDateTime64('2026-07-0${salt} 00:00:00', 3, 'UTC')
      FROM (SELECT number % (30 * 24) AS h, intDiv(number, 30 * 24) AS r FROM numbers(40 * 30 * 24))
      WHERE ${salt} = 1 OR intDiv(h, 24) % 3 = 2`;
    await w.client.command({
      query: draw(1).replaceAll("{db}", `\`${w.database}\``),
      query_params: { job: ENVIRONMENT_JOB },
    });
    await pass("2026-07-05T00:00:00Z");
    await w.client.command({
      query: draw(2).replaceAll("{db}", `\`${w.database}\``),
      query_params: { job: ENVIRONMENT_JOB },
    });
    const want = await fromEveryBucket();
    expect(want.length).toBe(40 + 4);
    // Read again but not rolled up again: the days read again read as computed.
    expect(await environments()).not.toEqual(want);
    await pass("2026-07-06T00:00:00Z");
    expect(await environments()).toEqual(want);
  });
});
