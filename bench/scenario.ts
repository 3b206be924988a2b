// One benchmark scenario, run in its own process so that its peak RSS is its own:
//   node .bench-dist/bench/scenario.js '<json args>'
// Prints one JSON line with the measurements.
import { rmSync } from "node:fs";
import { join } from "node:path";
import {
  aggregationJobSchema,
  loadConfig,
  type Config,
} from "../src/config/index.js";
import { ControlPlaneApi } from "../src/api/control-plane.js";
import { withRun } from "../src/pipeline/context.js";
import { syncSessions } from "../src/pipeline/session-sync.js";
import { syncAggregations } from "../src/pipeline/aggregations.js";
import { createLogger } from "../src/util/logger.js";
import {
  migrate,
  openWarehouse,
  quoteString,
  SESSION_INSERT_COLUMNS,
  sessionRowsSelect,
  type Warehouse,
} from "../src/warehouse/index.js";
import { DEFAULT_BRAND_MEMBER } from "../src/simulator/wire.js";
import { runDashboards } from "./dashboards.js";
import { runDetections } from "./detections.js";
import { runAlerts } from "./alerts.js";
import { aggregationName } from "../src/pipeline/names.js";
import { runRetention } from "./retention.js";
import { runScale } from "./scale.js";
import { loadReportsWeek } from "./reports-load.js";

/** The repository's migrations (this file runs from a compiled copy elsewhere). */
export const MIGRATIONS = join(
  process.env.SESSIONHOUSE_REPO_ROOT ?? ".",
  "migrations",
);

export type ScenarioArgs =
  | {
      kind: "sessions";
      url: string;
      apiKey: string;
      dataDir: string;
      pageSize: number;
      fromMs: number;
      toMs: number;
      /** Window length (default the whole range: one window). */
      windowMs?: number;
      /** Windows fetched at once (default 1). */
      windowConcurrency?: number;
      /** A ClickHouse server (the HTTP front) instead of the embedded engine. */
      clickhouseUrl?: string;
      /** Gzip the inserts to the server (default true, as the product's default). */
      compressRequests?: boolean;
    }
  | { kind: "engine-ingest"; dataDir: string; clickhouseUrl?: string }
  | {
      kind: "aggregations";
      url: string;
      apiKey: string;
      dataDir: string;
      fromMs: number;
      toMs: number;
    }
  | { kind: "dashboards"; dataDir: string; sessions: number }
  | { kind: "retention"; dataDir: string; sessions: number }
  | { kind: "detections"; dataDir: string; sessions: number }
  | {
      kind: "alerts";
      url: string;
      apiKey: string;
      dataDir: string;
      fromMs: number;
      toMs: number;
    }
  | { kind: "scale"; dataDir: string; sessions: number; reuse?: boolean }
  | {
      kind: "reports-load";
      url: string;
      apiKey: string;
      dataDir: string;
      fromMs: number;
      toMs: number;
    };

function config(a: {
  url?: string;
  apiKey?: string;
  dataDir: string;
  pageSize?: number;
  windowMs?: number;
  windowConcurrency?: number;
  clickhouseUrl?: string;
  compressRequests?: boolean;
}): Config {
  return loadConfig({
    env: {
      CLICKHOUSE_URL: a.clickhouseUrl,
      CLICKHOUSE_COMPRESS_REQUESTS:
        a.compressRequests === undefined
          ? undefined
          : String(a.compressRequests),
      SESSIONHOUSE_API_URL: a.url ?? "http://127.0.0.1:1",
      SESSIONHOUSE_API_KEY: a.apiKey ?? "unused-key",
      SESSIONHOUSE_DATA_DIR: a.dataDir,
      CLICKHOUSE_DATABASE: "bench",
      SESSIONHOUSE_PAGE_SIZE: String(a.pageSize ?? 10_000),
      SESSIONHOUSE_WINDOW: String(a.windowMs ?? 6 * 3_600_000),
      SESSIONHOUSE_MAX_RPS: "10000",
      SESSIONHOUSE_REQUEST_TIMEOUT: "5m",
      SESSIONHOUSE_LOG_LEVEL: "silent",
      SESSIONHOUSE_INSERT_BATCH_ROWS: process.env.BENCH_INSERT_BATCH_ROWS,
      SESSIONHOUSE_WINDOW_CONCURRENCY: String(a.windowConcurrency ?? 1),
    },
  });
}

async function scalar(w: Warehouse, sql: string): Promise<number> {
  const rs = await w.client.query({ query: sql, format: "JSONEachRow" });
  const [row] = await rs.json<Record<string, unknown>>();
  return Number(Object.values(row ?? {})[0] ?? 0);
}

const rssMB = () => Math.round(process.resourceUsage().maxRSS / 1024);

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? "{}") as ScenarioArgs;
  const logger = createLogger({ level: "silent" });
  switch (args.kind) {
    case "sessions": {
      rmSync(args.dataDir, { recursive: true, force: true });
      const cfg = config({
        ...args,
        windowMs: args.windowMs ?? args.toMs - args.fromMs,
      });
      if (args.clickhouseUrl) {
        // A server keeps its databases: every scenario starts from an empty one.
        const old = await openWarehouse(cfg);
        await old.client.command({ query: "DROP DATABASE IF EXISTS bench" });
        await old.close();
      }
      const w = await openWarehouse(cfg);
      await migrate(w, { dir: MIGRATIONS });
      const api = ControlPlaneApi.fromConfig(cfg, logger);
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      const r = await withRun(
        { config: cfg, api, warehouse: w, logger },
        "sessions",
        (ctx) =>
          syncSessions(ctx, {
            fromMs: args.fromMs,
            toMs: args.toMs,
            nowMs: args.toMs,
            skipOpenRefresh: true,
          }),
      );
      const ms = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      const bytes = await scalar(
        w,
        "SELECT sum(length(raw)) FROM bench.sessions",
      );
      const stored = await scalar(
        w,
        "SELECT count() FROM bench.sessions FINAL",
      );
      await api.close();
      await w.close();
      print({
        rows: r.rows,
        stored,
        ms,
        bytes,
        rssMB: rssMB(),
        cpuMs: (cpu.user + cpu.system) / 1000,
      });
      return;
    }
    case "engine-ingest": {
      // The records a sync stored, as received (one JSON object a line), inserted by the engine
      // from a file with the sync's own row-building SELECT: what ClickHouse does with no
      // exporter at all. Timed twice: into a copy of `sessions` with a copy of every
      // materialized view on it (the storage work of a sync: the views run on every insert),
      // and into the copy alone.
      const w = await openWarehouse(config(args));
      // In the run's directory, which goes with the run, also when this process fails.
      const file = join(args.dataDir, "records.jsonl");
      rmSync(file, { force: true });
      await w.client.command({
        query: `INSERT INTO FUNCTION file(${quoteString(file)}, 'LineAsString') SELECT raw FROM bench.sessions`,
      });
      const fetchedMs = Date.now();
      const source = `(SELECT toInt64(${fetchedMs}) AS fetched_ms, false AS held, '${DEFAULT_BRAND_MEMBER}' AS brand, raw FROM file(${quoteString(file)}, 'JSONAsString', 'raw String'))`;
      const views = await sessionViews(w);
      const withViews = await bestIngest(w, source, views);
      const tableOnly = await bestIngest(w, source, []);
      await w.close();
      rmSync(file, { force: true });
      print({
        rows: withViews.rows,
        ms: withViews.ms,
        tableOnlyMs: tableOnly.ms,
        views: views.map((v) => v.name),
      });
      return;
    }
    case "aggregations": {
      rmSync(args.dataDir, { recursive: true, force: true });
      const cfg = config(args);
      const w = await openWarehouse(cfg);
      await migrate(w, { dir: MIGRATIONS });
      const api = ControlPlaneApi.fromConfig(cfg, logger);
      const job = aggregationJobSchema.parse({
        name: "bench_three_levels",
        interval: "5m",
        windowMs: "1h",
        groupBy: ["resource.technology", "user.email", "resource.name"],
      });
      const started = performance.now();
      const r = await withRun(
        { config: cfg, api, warehouse: w, logger },
        aggregationName(job),
        (ctx) =>
          syncAggregations(ctx, job, {
            fromMs: args.fromMs,
            toMs: args.toMs,
            nowMs: args.toMs,
          }),
      );
      const ms = performance.now() - started;
      await api.close();
      await w.close();
      print({ rows: r.rows, windows: r.windows, ms, rssMB: rssMB() });
      return;
    }
    case "dashboards": {
      print(await runDashboards(args.dataDir, args.sessions));
      return;
    }
    case "retention": {
      print(await runRetention(args.dataDir, args.sessions));
      return;
    }
    case "detections": {
      print(await runDetections(args.dataDir, args.sessions));
      return;
    }
    case "alerts": {
      rmSync(args.dataDir, { recursive: true, force: true });
      print(await runAlerts(config(args), MIGRATIONS, args.fromMs, args.toMs));
      return;
    }
    case "reports-load": {
      rmSync(args.dataDir, { recursive: true, force: true });
      print(
        await loadReportsWeek(config(args), MIGRATIONS, args.fromMs, args.toMs),
      );
      return;
    }
    case "scale": {
      print(await runScale(args.dataDir, args.sessions, args.reuse));
      return;
    }
  }
}

/** A materialized view on `sessions`: its name, its target table and its SELECT. */
interface SessionView {
  name: string;
  target: string;
  select: string;
}

/** The materialized views whose source is bench.sessions. */
async function sessionViews(w: Warehouse): Promise<SessionView[]> {
  const rs = await w.client.query({
    query: `SELECT name, as_select, create_table_query FROM system.tables
            WHERE database = 'bench' AND engine = 'MaterializedView'
              AND name IN (SELECT arrayJoin(dependencies_table) FROM system.tables
                           WHERE database = 'bench' AND name = 'sessions')
            ORDER BY name`,
    format: "JSONEachRow",
  });
  const rows = await rs.json<{
    name: string;
    as_select: string;
    create_table_query: string;
  }>();
  return rows.map((r) => {
    const target = / TO bench\.(\w+)/.exec(r.create_table_query)?.[1];
    if (!target) throw new Error(`view ${r.name} names no target table`);
    return { name: r.name, target, select: r.as_select };
  });
}

const COPY = "_engine_ingest";

/**
 * The engine's best of three inserts of the records in `source` into a fresh copy of
 * `sessions`, with a fresh copy of each of `views` (and of its target) on it.
 */
async function bestIngest(
  w: Warehouse,
  source: string,
  views: readonly SessionView[],
): Promise<{ rows: number; ms: number }> {
  const run = (query: string) => w.client.command({ query });
  const drop = async () => {
    for (const v of views) {
      await run(`DROP TABLE IF EXISTS bench.${v.name}${COPY}`);
      await run(`DROP TABLE IF EXISTS bench.${v.target}${COPY}`);
    }
    await run(`DROP TABLE IF EXISTS bench.sessions${COPY}`);
  };
  // The best of three: the limit is what the engine can do, not what one noisy try did.
  let ms = Infinity;
  let rows = 0;
  for (let i = 0; i < 3; i++) {
    await drop();
    await run(`CREATE TABLE bench.sessions${COPY} AS bench.sessions`);
    for (const v of views) {
      await run(`CREATE TABLE bench.${v.target}${COPY} AS bench.${v.target}`);
      const select = v.select.replace(
        /\bbench\.sessions(?![A-Za-z0-9_])/g,
        `bench.sessions${COPY}`,
      );
      await run(
        `CREATE MATERIALIZED VIEW bench.${v.name}${COPY} TO bench.${v.target}${COPY} AS ${select}`,
      );
    }
    const started = performance.now();
    await w.client.command({
      query: `INSERT INTO bench.sessions${COPY} (${SESSION_INSERT_COLUMNS.join(", ")}) ${sessionRowsSelect(source)}`,
      clickhouse_settings: { insert_deduplicate: 0 },
    });
    ms = Math.min(ms, performance.now() - started);
    rows = await scalar(w, `SELECT count() FROM bench.sessions${COPY}`);
    for (const v of views)
      if (
        (await scalar(w, `SELECT count() FROM bench.${v.target}${COPY}`)) === 0
      )
        throw new Error(`the copy of ${v.name} stored nothing`);
  }
  await drop();
  return { rows, ms };
}

function print(result: object): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
