// The exporter against a real ClickHouse cluster: 2 shards × 2 replicas with Keeper
// (docker-compose.yml here, started through testcontainers' compose support), in the
// replicated + distributed mode. Sync, kill a replica, sync again: every session stored once,
// FINAL right across the shards, no session on two shards, checkpoints where they belong.
// Needs a Docker engine; where none answers, the test is reported as skipped and says why.
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StartedDockerComposeEnvironment } from "testcontainers";
import type { Config } from "../../../src/config/index.js";
import { syncAggregations } from "../../../src/pipeline/aggregations.js";
import {
  aggregationName,
  SESSIONS_JOB,
  SESSIONS_STREAM,
} from "../../../src/pipeline/names.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import type { Simulator } from "../../../src/simulator/index.js";
import { aggregationJobSchema } from "../../../src/config/index.js";
import { readCheckpoint } from "../../../src/warehouse/bookkeeping.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  apiAggregationWindow,
  storedAggregationWindow,
} from "../../helpers/expected.js";
import {
  expectedSessions,
  NOON,
  run,
  runDeps,
  simulatorWarehouse,
  testSimulator,
} from "../../helpers/simulator.js";
import { select } from "../../helpers/warehouse.js";

const HOUR = 3_600_000;
const NODES = ["ch-s1r1", "ch-s1r2", "ch-s2r1", "ch-s2r2"] as const;
const SHARDED_LOCAL = [
  "sessions_local",
  "agg_histogram_local",
  "agg_top_values_local",
  "agg_windows_local",
];

/** Why the cluster cannot run here, or undefined when a Docker engine answers. */
async function dockerMissing(): Promise<string | undefined> {
  try {
    const { getContainerRuntimeClient } = await import("testcontainers");
    await getContainerRuntimeClient();
    return undefined;
  } catch (err) {
    return (err as Error).message.split("\n")[0];
  }
}

const missing = await dockerMissing();
if (missing)
  console.warn(
    `test/slow/cluster/cluster.test.ts SKIPPED: no Docker engine answers (${missing}); the 2-shard × 2-replica cluster test runs only where Docker does`,
  );

const job = aggregationJobSchema.parse({
  name: "cluster_by_tech",
  interval: "5m",
  windowMs: "1h",
  refetchMs: "2h",
  groupBy: ["resource.technology"],
});

describe.skipIf(missing !== undefined)(
  "a 2-shard × 2-replica cluster with Keeper (skipped without Docker)",
  () => {
    let env: StartedDockerComposeEnvironment;
    let sim: Simulator;
    let config: Config;
    let w: Warehouse;

    beforeAll(async () => {
      const { DockerComposeEnvironment, Wait } = await import("testcontainers");
      let compose = new DockerComposeEnvironment(
        dirname(fileURLToPath(import.meta.url)),
        "docker-compose.yml",
      ).withStartupTimeout(180_000);
      for (const node of NODES)
        compose = compose.withWaitStrategy(
          `${node}-1`,
          Wait.forHttp("/ping", 8123),
        );
      env = await compose.up();
      const entry = env.getContainer("ch-s1r1-1");
      sim = await testSimulator();
      ({ config, w } = await simulatorWarehouse(sim.url, {
        CLICKHOUSE_URL: `http://default:test@${entry.getHost()}:${entry.getMappedPort(8123)}`,
        CLICKHOUSE_CLUSTER: "sessionhouse_cluster",
        CLICKHOUSE_REPLICATED: "true",
        CLICKHOUSE_DISTRIBUTED: "true",
        SESSIONHOUSE_PAGE_SIZE: "500",
        SESSIONHOUSE_WINDOW: "6h",
        SESSIONHOUSE_INITIAL_LOOKBACK: "1d",
        SESSIONHOUSE_LOOKBACK: "6h",
        SESSIONHOUSE_WINDOW_CONCURRENCY: "2",
      }));
    }, 600_000);

    afterAll(async () => {
      await w?.close();
      await sim?.close();
      await env?.down();
    }, 120_000);

    /** Sessions FINAL, distinct ids, ids on more than one shard, rows per shard. */
    async function counts() {
      const [row] = await select<Record<string, string>>(
        w,
        `SELECT
           (SELECT count() FROM {db}.sessions FINAL) AS final,
           (SELECT uniqExact(id) FROM {db}.sessions) AS ids,
           (SELECT count() FROM (SELECT id FROM {db}.sessions GROUP BY id HAVING uniqExact(_shard_num) > 1)) AS split,
           (SELECT uniqExact(_shard_num) FROM {db}.sessions) AS shards`,
      );
      return {
        final: Number(row?.final),
        ids: Number(row?.ids),
        split: Number(row?.split),
        shards: Number(row?.shards),
      };
    }

    /** Runs a statement on one node, over its own HTTP port. */
    async function onNode(node: string, query: string): Promise<void> {
      const c = env.getContainer(`${node}-1`);
      const rs = await fetch(
        `http://${c.getHost()}:${c.getMappedPort(8123)}/?query=${encodeURIComponent(query)}`,
        {
          method: "POST",
          headers: {
            "X-ClickHouse-User": "default",
            "X-ClickHouse-Key": "test",
          },
        },
      );
      if (!rs.ok) throw new Error(`${node}: ${query}: ${await rs.text()}`);
    }

    async function syncAll(nowMs: number) {
      const deps = runDeps(config, w);
      await run(deps, SESSIONS_JOB, (ctx) => syncSessions(ctx, { nowMs }));
      await run(deps, aggregationName(job), (ctx) =>
        syncAggregations(ctx, job, { nowMs }),
      );
      await deps.api.close();
    }

    it("syncs, loses a replica, syncs again: nothing lost or doubled, FINAL right across shards", async () => {
      await syncAll(NOON);
      const first = await expectedSessions(sim, NOON - 24 * HOUR, NOON);
      expect(first.length).toBeGreaterThan(1000);
      expect(await counts()).toEqual({
        final: first.length,
        ids: first.length,
        split: 0,
        shards: 2,
      });
      expect((await readCheckpoint(w, SESSIONS_STREAM))?.positionMs).toBe(NOON);

      // The replica of shard 2 that took its writes (the first one: load_balancing=in_order)
      // goes away once its peer has fetched them; the sync goes on with the three left (the
      // bookkeeping's quorum is a majority of four), shard 2 on its other replica. Open
      // sessions are re-read, so every session's latest state is the one the service gives now.
      for (const table of SHARDED_LOCAL)
        await onNode("ch-s2r2", `SYSTEM SYNC REPLICA ${w.database}.${table}`);
      await env.getContainer("ch-s2r1-1").stop();
      const later = NOON + 6 * HOUR;
      sim.clock.set(later);
      await syncAll(later);

      const all = await expectedSessions(sim, NOON - 24 * HOUR, later);
      expect(all.length).toBeGreaterThan(first.length);
      expect(await counts()).toEqual({
        final: all.length,
        ids: all.length,
        split: 0,
        shards: 2,
      });
      const [latest] = await select<{ n: string }>(
        w,
        `SELECT count() AS n FROM {db}.sessions FINAL
         WHERE (id, session_status) IN {pairs:Array(Tuple(String, String))}`,
        {
          pairs: all.map((s) => [String(s.id), String(s.sessionStatus)]),
        },
      );
      expect(Number(latest?.n)).toBe(all.length);
      expect((await readCheckpoint(w, SESSIONS_STREAM))?.positionMs).toBe(
        later,
      );
      for (let ws = later - 4 * HOUR; ws < later; ws += HOUR) {
        const api = await apiAggregationWindow(sim, job, ws, ws + HOUR);
        const got = await storedAggregationWindow(w, job, ws, ws + HOUR);
        expect(got.histogram).toEqual(api.histogram);
        expect((await storedAggregationWindow(w, job, ws, ws)).numHits).toBe(
          api.numHits,
        );
      }
    }, 600_000);
  },
);
