// The retention part of the bench: a year of sessions rolled up, the sessions overview's panel
// shapes over the rollups for a one-year range, and `archive export` of the busiest month
// against the engine writing the same Parquet file directly.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config/index.js";
import { exportArchive } from "../src/pipeline/archive.js";
import { rollUp } from "../src/pipeline/rollups.js";
import { createLogger } from "../src/util/logger.js";
import { openWarehouse, type Warehouse } from "../src/warehouse/client.js";
import { migrate } from "../src/warehouse/migrate.js";
import { END_MS, generateSessions } from "./dashboards.js";

const DAY = 86_400_000;

export interface RetentionBench {
  sessions: number;
  rollupMs: number;
  rollupDays: number;
  panels: Array<{ panel: string; p50: number; p95: number; rows: number }>;
  month: string;
  monthSessions: number;
  exportMs: number;
  directMs: number;
}

const R = "bench.session_rollups_daily FINAL";
/** The one-year range of the panels, as the dashboard's time filter gives it. */
const YEAR = `day >= toDate('${new Date(END_MS - 365 * DAY).toISOString().slice(0, 10)}') AND day < toDate('${new Date(END_MS).toISOString().slice(0, 10)}') AND sessions > 0`;

/** The sessions overview's panels as they read the rollups over a long range. */
const PANELS: ReadonlyArray<readonly [string, string]> = [
  [
    "Sessions started",
    `SELECT sum(sessions), uniqExact(user_key), uniqExact(resource_name) FROM ${R} WHERE ${YEAR}`,
  ],
  [
    "Session duration",
    `SELECT quantilesMerge(0.5, 0.9, 0.99)(duration_quantiles) FROM ${R} WHERE ${YEAR}`,
  ],
  [
    "Child sessions",
    `SELECT sum(child_sessions), round(100 * sum(child_sessions) / greatest(sum(sessions), 1), 1) FROM ${R} WHERE ${YEAR}`,
  ],
  [
    "Sessions by status",
    `SELECT session_status, sum(sessions) FROM ${R} WHERE ${YEAR} GROUP BY session_status`,
  ],
  [
    "Sessions over time by technology",
    `SELECT toStartOfDay(day) AS time, resource_technology, sum(sessions) FROM ${R} WHERE ${YEAR} GROUP BY time, resource_technology ORDER BY time`,
  ],
  [
    "Session duration over time",
    `SELECT toStartOfDay(day) AS time, quantilesMerge(0.5, 0.9, 0.99)(duration_quantiles) FROM ${R} WHERE ${YEAR} GROUP BY time ORDER BY time`,
  ],
  [
    "Duration by technology",
    `SELECT resource_technology, sum(sessions), quantilesMerge(0.5, 0.9, 0.99)(duration_quantiles) FROM ${R} WHERE ${YEAR} GROUP BY resource_technology`,
  ],
  [
    "Busiest users",
    `SELECT user_key, sum(sessions) AS n, uniqExact(resource_name), sum(duration_ms_sum) FROM ${R} WHERE ${YEAR} GROUP BY user_key ORDER BY n DESC LIMIT 100`,
  ],
  [
    "Busiest resources",
    `SELECT resource_name, any(resource_technology), sum(sessions) AS n, uniqExact(user_key) FROM ${R} WHERE ${YEAR} GROUP BY resource_name ORDER BY n DESC LIMIT 100`,
  ],
];

async function timed(
  w: Warehouse,
  sql: string,
): Promise<{ ms: number; rows: number }> {
  const started = performance.now();
  const rs = await w.client.query({ query: sql, format: "JSONCompact" });
  const body = (await rs.json()) as unknown as { data: unknown[] };
  return { ms: performance.now() - started, rows: body.data.length };
}

const at = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))] ??
  NaN;

export async function runRetention(
  dataDir: string,
  sessions: number,
): Promise<RetentionBench> {
  rmSync(dataDir, { recursive: true, force: true });
  const config = loadConfig({
    env: {
      SESSIONHOUSE_API_URL: "http://127.0.0.1:1",
      SESSIONHOUSE_API_KEY: "unused-key",
      SESSIONHOUSE_DATA_DIR: dataDir,
      CLICKHOUSE_DATABASE: "bench",
      SESSIONHOUSE_LOG_LEVEL: "silent",
    },
  });
  const w = await openWarehouse(config);
  await migrate(w, {
    dir: join(process.env.SESSIONHOUSE_REPO_ROOT ?? ".", "migrations"),
  });
  await generateSessions(w, sessions);
  await w.client.command({
    query: "OPTIMIZE TABLE bench.sessions FINAL",
    clickhouse_settings: { max_execution_time: 3600 },
  });

  const rolled = performance.now();
  const r = await rollUp(
    { config, warehouse: w, logger: createLogger({ level: "silent" }) },
    END_MS,
  );
  const rollupMs = performance.now() - rolled;
  await w.client.command({
    query: "OPTIMIZE TABLE bench.session_rollups_daily FINAL",
  });

  const panels: RetentionBench["panels"] = [];
  for (const [panel, sql] of PANELS) {
    await timed(w, sql);
    const times: number[] = [];
    let rows = 0;
    for (let i = 0; i < 7; i++) {
      const t = await timed(w, sql);
      times.push(t.ms);
      rows = t.rows;
    }
    times.sort((a, b) => a - b);
    panels.push({ panel, p50: at(times, 0.5), p95: at(times, 0.95), rows });
  }

  // The busiest whole month of the generated year.
  const month = "2026-10";
  const rs = await w.client.query({
    query:
      "SELECT count() AS n FROM bench.sessions FINAL WHERE toStartOfMonth(start_time) = '2026-10-01'",
    format: "JSONEachRow",
  });
  const monthSessions = Number((await rs.json<{ n: string }>())[0]?.n ?? 0);
  let exportMs = Infinity;
  let directMs = Infinity;
  const columns = "* EXCEPT legal_hold, legal_hold";
  for (let i = 0; i < 2; i++) {
    const root = mkdtempSync(join(tmpdir(), "sessionhouse-bench-archive-"));
    const e = await exportArchive(w, { month, root });
    exportMs = Math.min(exportMs, e.ms);
    rmSync(root, { recursive: true, force: true });
    const dir = mkdtempSync(join(tmpdir(), "sessionhouse-bench-parquet-"));
    const started = performance.now();
    await w.client.command({
      query: `INSERT INTO FUNCTION file('${join(dir, "sessions.parquet")}', 'Parquet')
        SELECT ${columns} FROM bench.sessions FINAL
        WHERE start_time >= '2026-10-01' AND start_time < '2026-11-01' ORDER BY start_time, id`,
    });
    directMs = Math.min(directMs, performance.now() - started);
    rmSync(dir, { recursive: true, force: true });
  }
  await w.close();
  return {
    sessions,
    rollupMs,
    rollupDays: r.sessionDays,
    panels,
    month,
    monthSessions,
    exportMs,
    directMs,
  };
}
