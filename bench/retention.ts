// The retention part of the bench: a year of sessions rolled up, the sessions overview's panels
// (as Grafana sends them, every filter at All) over a one-year range, where they read the
// rollups, and `archive export` of the busiest month against the engine writing the same Parquet
// file directly.
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { exportArchive } from "../src/pipeline/archive/index.js";
import { SESSIONS_STREAM } from "../src/pipeline/names.js";
import { rollUp } from "../src/pipeline/rollups.js";
import { createLogger } from "../src/util/logger.js";
import { writeCheckpoint, type Warehouse } from "../src/warehouse/index.js";
import { loadDashboards } from "../test/helpers/dashboards.js";
import {
  ALL,
  queryInterval,
  renderQuery,
  type TemplateVariable,
  type TimeRange,
} from "../test/helpers/grafana-sql.js";
import { END_MS, generateSessions, openBench } from "./dashboards.js";
import { percentile } from "./harness.js";

const DAY = 86_400_000;

export interface RetentionBench {
  sessions: number;
  rollupMs: number;
  rollupDays: number;
  /** Every panel of the sessions overview; `rollups`: it reads the rollups over this range. */
  panels: Array<{
    panel: string;
    rollups: boolean;
    p50: number;
    p95: number;
    rows: number;
  }>;
  /** The duration over time from 0013's reservoir state, as the panels read it before 0020. */
  reservoir: { p50: number; p95: number };
  month: string;
  monthSessions: number;
  exportMs: number;
  directMs: number;
}

const DASHBOARD_UID = "sessionhouse-sessions-overview";

/**
 * The duration-quantile panels' shape over 0013's reservoir state, for comparison with the
 * t-digest state (0020) the panels read.
 */
const RESERVOIR_REFERENCE = `SELECT toStartOfDay(day) AS time, quantilesMerge(0.5, 0.9, 0.99)(duration_quantiles)
  FROM bench.session_rollups_daily FINAL
  WHERE day >= toDate('${new Date(END_MS - 365 * DAY).toISOString().slice(0, 10)}') AND day < toDate('${new Date(END_MS).toISOString().slice(0, 10)}') AND sessions > 0
  GROUP BY time ORDER BY time`;

/**
 * The sessions overview's panels as Grafana sends them for `range`, every filter at All: the
 * variables resolved in order as the dashboards bench resolves them.
 */
async function overviewPanels(
  w: Warehouse,
  range: TimeRange,
): Promise<Array<{ panel: string; rollups: boolean; sql: string }>> {
  const found = loadDashboards().find((d) => d.dashboard.uid === DASHBOARD_UID);
  if (!found) throw new Error(`no dashboard ${DASHBOARD_UID}`);
  const { dashboard } = found;
  const variables: TemplateVariable[] = [];
  for (const v of dashboard.templating.list) {
    if (v.type === "constant") {
      variables.push({ name: v.name, current: v.query, options: [v.query] });
      continue;
    }
    if (v.type !== "query") continue;
    const sql = renderQuery(v.query, {
      range,
      intervalMs: queryInterval(range),
      variables,
    });
    const rs = await w.client.query({ query: sql, format: "JSONCompact" });
    const body = (await rs.json()) as unknown as { data: unknown[][] };
    variables.push({
      name: v.name,
      current: v.multi ? [ALL] : ALL,
      options: body.data.map((r) => String(r[0])),
      allValue: v.allValue,
    });
  }
  return dashboard.panels.flatMap((panel) =>
    panel.targets.map((t) => ({
      panel: panel.title,
      rollups: t.rawSql.includes("session_rollups_daily"),
      sql: renderQuery(t.rawSql, {
        range,
        intervalMs: queryInterval(range, panel.interval),
        variables,
      }),
    })),
  );
}

async function timed(
  w: Warehouse,
  sql: string,
  capSeconds?: number,
): Promise<{ ms: number; rows: number }> {
  const started = performance.now();
  const rs = await w.client.query({
    query: sql,
    format: "JSONCompact",
    ...(capSeconds === undefined
      ? {}
      : { clickhouse_settings: { max_execution_time: capSeconds } }),
  });
  try {
    const body = (await rs.json()) as unknown as { data: unknown[] };
    return { ms: performance.now() - started, rows: body.data.length };
  } catch (err) {
    // Stopped at the cap after its answer had begun: the engine ends the body with the error.
    const ms = performance.now() - started;
    if (capSeconds !== undefined && ms >= capSeconds * 1000)
      throw Object.assign(new Error("stopped at the cap"), {
        code: TIMEOUT_EXCEEDED,
      });
    throw err;
  }
}

/** ClickHouse's TIMEOUT_EXCEEDED: a query ran past its max_execution_time. */
const TIMEOUT_EXCEEDED = "159";

/**
 * One warm-up, then `runs` runs. With `capSeconds`, the engine stops a query that runs longer:
 * then no further run is made and the result says `stopped: "cap"` (p50 and p95 0).
 */
export async function measure(
  w: Warehouse,
  sql: string,
  runs = 7,
  capSeconds?: number,
): Promise<{ p50: number; p95: number; rows: number; stopped?: "cap" }> {
  const run = () => timed(w, sql, capSeconds);
  try {
    await run();
  } catch (err) {
    if ((err as { code?: unknown }).code !== TIMEOUT_EXCEEDED) throw err;
    return { p50: 0, p95: 0, rows: 0, stopped: "cap" };
  }
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < runs; i++) {
    const t = await run();
    times.push(t.ms);
    rows = t.rows;
  }
  times.sort((a, b) => a - b);
  return {
    p50: percentile(times, 0.5),
    p95: percentile(times, 0.95),
    rows,
  };
}

export async function runRetention(
  dataDir: string,
  sessions: number,
): Promise<RetentionBench> {
  const { w, config } = await openBench(dataDir);
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

  await w.client.command({ query: "USE bench" });
  const year: TimeRange = { fromMs: END_MS - 365 * DAY, toMs: END_MS };
  const panels: RetentionBench["panels"] = [];
  for (const { panel, rollups, sql } of await overviewPanels(w, year)) {
    const m = await measure(w, sql);
    panels.push({ panel, rollups, ...m });
  }
  const { p50, p95 } = await measure(w, RESERVOIR_REFERENCE);

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
  // The generated year is synced up to its end, as a sync records it: archive export refuses
  // a month no checkpoint covers.
  await writeCheckpoint(w, SESSIONS_STREAM, END_MS, {}, { retries: 0 });
  for (let i = 0; i < 2; i++) {
    const root = mkdtempSync(join(dataDir, "archive-"));
    const e = await exportArchive(w, { month, root });
    exportMs = Math.min(exportMs, e.ms);
    rmSync(root, { recursive: true, force: true });
    const dir = mkdtempSync(join(dataDir, "parquet-"));
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
    reservoir: { p50, p95 },
    month,
    monthSessions,
    exportMs,
    directMs,
  };
}
