// The data of the reports part (bench/reports.ts): a week of the simulator's ordinary data (its
// default organisation and rates) synced into an embedded warehouse as `run` stores it: the
// sessions, every entity stream (users, groups, identity links, policy suspensions, …) and every
// default aggregation job.
import type { Config } from "../src/config/index.js";
import { syncAggregations } from "../src/pipeline/aggregations.js";
import { withRun } from "../src/pipeline/context.js";
import { aggregationName } from "../src/pipeline/names.js";
import { withSyncedPeriod } from "./alerts.js";

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
  const started = performance.now();
  return withSyncedPeriod(
    cfg,
    migrations,
    fromMs,
    toMs,
    async ({ w, deps, sessions }) => {
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
        sessions,
        suspensions: Number(row?.n ?? 0),
        aggregationRows,
        ms: performance.now() - started,
      };
    },
  );
}
