// The data of the reports part (bench/reports.ts): a week of the simulator's ordinary data (its
// default organisation and rates) synced into an embedded warehouse as `run` stores it: the
// sessions, every entity stream (users, groups, identity links, policy suspensions, …) and every
// default aggregation job.
import type { Config } from "../src/config/index.js";
import { ControlPlaneApi } from "../src/api/control-plane.js";
import { syncAggregations } from "../src/pipeline/aggregations.js";
import { withRun } from "../src/pipeline/context.js";
import { syncEntityStream } from "../src/pipeline/entity-streams.js";
import { aggregationName, ENTITY_STREAMS } from "../src/pipeline/names.js";
import { syncSessions } from "../src/pipeline/session-sync.js";
import { createLogger } from "../src/util/logger.js";
import { migrate, openWarehouse } from "../src/warehouse/index.js";

export interface ReportsLoad {
  sessions: number;
  suspensions: number;
  aggregationRows: number;
  ms: number;
}

export async function loadReportsWeek(
  cfg: Config,
  migrations: string,
  fromMs: number,
  toMs: number,
): Promise<ReportsLoad> {
  const logger = createLogger({ level: "silent" });
  const w = await openWarehouse(cfg);
  const api = ControlPlaneApi.fromConfig(cfg, logger);
  const started = performance.now();
  try {
    await migrate(w, { dir: migrations });
    const deps = { config: cfg, api, warehouse: w, logger };
    const synced = await withRun(deps, "sessions", (ctx) =>
      syncSessions(ctx, { fromMs, toMs, nowMs: toMs, skipOpenRefresh: true }),
    );
    for (const stream of ENTITY_STREAMS)
      await withRun(deps, stream, (ctx) => syncEntityStream(ctx, stream, toMs));
    let aggregationRows = 0;
    for (const job of cfg.aggregations.jobs.filter((j) => j.enabled))
      aggregationRows += (
        await withRun(deps, aggregationName(job), (ctx) =>
          syncAggregations(ctx, job, { fromMs, toMs, nowMs: toMs }),
        )
      ).rows;
    const rs = await w.client.query({
      query: `SELECT count() AS n FROM ${w.database}.policy_suspensions_latest`,
      format: "JSONEachRow",
    });
    const [row] = await rs.json<{ n: string }>();
    return {
      sessions: synced.rows,
      suspensions: Number(row?.n ?? 0),
      aggregationRows,
      ms: performance.now() - started,
    };
  } finally {
    await api.close();
    await w.close();
  }
}
