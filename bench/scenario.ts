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
import { pidCpuSeconds } from "./harness.js";
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
      /**
       * The server's process: its CPU is measured over the sync alone (not the migration
       * before it nor the checks after it), as the engine-ingest scenario measures an insert.
       */
      serverPid?: number;
    }
  | {
      kind: "engine-ingest";
      dataDir: string;
      clickhouseUrl?: string;
      /** Time every setup (ingestSetups), not only the bare table. */
      breakdown: boolean;
      /** The server's process, whose CPU an insert is measured by (default this process). */
      serverPid?: number;
    }
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
      const serverBefore =
        args.serverPid === undefined ? 0 : pidCpuSeconds(args.serverPid);
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
      const serverCpuS =
        args.serverPid === undefined
          ? undefined
          : pidCpuSeconds(args.serverPid) - serverBefore;
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
        ...(serverCpuS === undefined ? {} : { serverCpuS }),
      });
      return;
    }
    case "engine-ingest": {
      // The records a sync stored, as received (one JSON object a line), inserted by the engine
      // from a file with the sync's own row-building SELECT: what ClickHouse does with no
      // exporter at all. The limit is the insert into a bare copy of `sessions` (its columns,
      // engine and order; no codec, no skip index, no view); each materialized view alone, the
      // codecs and skip indexes alone, and everything (`sessions` as migrated) are timed beside
      // it, so that what each costs is printed.
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
      const setups = args.breakdown
        ? ingestSetups(views)
        : ingestSetups([]).slice(0, 1);
      // The limit, timed the same way in every run: two tries of the bare table back to back
      // before anything else, the best kept (what the engine can do, not what one noisy try
      // did). Run 1's breakdown then times every setup, the bare one again, for its table only;
      // the other runs' setups are the bare table's limit.
      type Timing = { ms: number; cpuS: number; bytes: number };
      type Timings = Map<string, Timing>;
      const limit: Timings = new Map<string, Timing>();
      const timed: Timings = args.breakdown ? new Map<string, Timing>() : limit;
      let rows = 0;
      const time = async (setup: IngestSetup, into: Timings) => {
        const r = await ingestOnce(w, source, setup, args.serverPid);
        rows = r.rows;
        const best = into.get(setup.name);
        // Each setup's least wall time and least CPU, each of its own try.
        into.set(setup.name, {
          ms: Math.min(r.ms, best?.ms ?? Infinity),
          cpuS: Math.min(r.cpuS, best?.cpuS ?? Infinity),
          bytes: r.bytes,
        });
      };
      const [bare] = setups;
      if (bare === undefined) throw new Error("no bare setup to time");
      for (let round = 0; round < 2; round++) await time(bare, limit);
      // The breakdown (run 1): two rounds of every setup, interleaved, each setup's best kept.
      if (args.breakdown)
        for (let round = 0; round < 2; round++)
          for (const setup of setups) await time(setup, timed);
      await w.close();
      rmSync(file, { force: true });
      const result: EngineIngest = {
        rows,
        ms: limit.get(BARE)?.ms ?? NaN,
        setups: setups.map((s) => ({
          name: s.name,
          ms: timed.get(s.name)?.ms ?? NaN,
          cpuS: timed.get(s.name)?.cpuS ?? NaN,
          bytes: timed.get(s.name)?.bytes ?? NaN,
        })),
        views: views.map((v) => v.name),
      };
      print(result);
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
/** The name of the bare table's setup: the limit. */
const BARE = "bare";
/** The name of the setup that is `sessions` as migrated: codecs, skip indexes and every view. */
const EVERYTHING = "everything";
const CODECS = "codecs and skip indexes";

/** One measured form of `sessions`: with or without its codecs and skip indexes, and views. */
interface IngestSetup {
  name: string;
  codecs: boolean;
  views: readonly SessionView[];
}

/** What the engine-ingest scenario prints (bench/sessions.ts reads it). */
export interface EngineIngest {
  rows: number;
  /** The insert into the bare table: the limit. */
  ms: number;
  /**
   * Every setup's best time, its least CPU seconds (of the engine's process: this one embedded,
   * the server's otherwise) and the bytes its copy of `sessions` took on disk.
   */
  setups: { name: string; ms: number; cpuS: number; bytes: number }[];
  views: string[];
}

/** The bare table, + each view alone, + codecs and skip indexes alone, + everything. */
function ingestSetups(views: readonly SessionView[]): IngestSetup[] {
  return [
    { name: BARE, codecs: false, views: [] },
    ...views.map((v) => ({ name: `+ ${v.name}`, codecs: false, views: [v] })),
    { name: `+ ${CODECS}`, codecs: true, views: [] },
    { name: EVERYTHING, codecs: true, views },
  ];
}

interface ColumnRow {
  name: string;
  type: string;
  default_kind: string;
  default_expression: string;
  compression_codec: string;
}

async function columnsOf(w: Warehouse, table: string): Promise<ColumnRow[]> {
  const rs = await w.client.query({
    query: `SELECT name, type, default_kind, default_expression, compression_codec
            FROM system.columns WHERE database = 'bench' AND table = ${quoteString(table)}
            ORDER BY position`,
    format: "JSONEachRow",
  });
  return rs.json<ColumnRow>();
}

/**
 * A copy of `sessions` with its columns (names, types, defaults read from system.columns, the
 * one list the migrations made), its engine, partitions and order, and nothing else: the
 * engine's default compression, no skip index. Throws when the copy's columns differ from
 * those of `sessions` or it kept a codec or an index.
 */
async function createBare(w: Warehouse, name: string): Promise<void> {
  const columns = await columnsOf(w, "sessions");
  const engine = await scalarText(
    w,
    "SELECT engine_full FROM system.tables WHERE database = 'bench' AND name = 'sessions'",
  );
  const ddl = columns
    .map(
      (c) =>
        `\`${c.name}\` ${c.type}${c.default_kind ? ` ${c.default_kind} ${c.default_expression}` : ""}`,
    )
    .join(", ");
  await w.client.command({
    query: `CREATE TABLE bench.${name} (${ddl}) ENGINE = ${engine}`,
  });
  const key = (c: ColumnRow) =>
    `${c.name} ${c.type} ${c.default_kind} ${c.default_expression}`;
  const copy = await columnsOf(w, name);
  const want = columns.map(key).join("\n");
  const got = copy.map(key).join("\n");
  if (got !== want)
    throw new Error(
      `the bare copy's columns differ from those of sessions:\n${got}\n---\n${want}`,
    );
  const indexes = await scalar(
    w,
    `SELECT count() FROM system.data_skipping_indices WHERE database = 'bench' AND table = ${quoteString(name)}`,
  );
  if (indexes !== 0 || copy.some((c) => c.compression_codec !== ""))
    throw new Error("the bare copy of sessions kept a codec or a skip index");
}

async function scalarText(w: Warehouse, sql: string): Promise<string> {
  const rs = await w.client.query({ query: sql, format: "JSONEachRow" });
  const [row] = await rs.json<Record<string, string>>();
  return Object.values(row ?? {})[0] ?? "";
}

/**
 * One insert of the records in `source` into a fresh copy of `sessions` in the form `setup`
 * names, with a fresh copy of each of its views (and of the view's target) on it: the time,
 * the rows stored and the bytes the copy of `sessions` took on disk.
 */
async function ingestOnce(
  w: Warehouse,
  source: string,
  setup: IngestSetup,
  serverPid: number | undefined,
): Promise<{ rows: number; ms: number; cpuS: number; bytes: number }> {
  const run = (query: string) => w.client.command({ query });
  const table = `sessions${COPY}`;
  const drop = async () => {
    for (const v of setup.views) {
      await run(`DROP TABLE IF EXISTS bench.${v.name}${COPY}`);
      await run(`DROP TABLE IF EXISTS bench.${v.target}${COPY}`);
    }
    await run(`DROP TABLE IF EXISTS bench.${table}`);
  };
  await drop();
  if (setup.codecs) await run(`CREATE TABLE bench.${table} AS bench.sessions`);
  else await createBare(w, table);
  for (const v of setup.views) {
    await run(`CREATE TABLE bench.${v.target}${COPY} AS bench.${v.target}`);
    const select = v.select.replace(
      /\bbench\.sessions(?![A-Za-z0-9_])/g,
      `bench.${table}`,
    );
    await run(
      `CREATE MATERIALIZED VIEW bench.${v.name}${COPY} TO bench.${v.target}${COPY} AS ${select}`,
    );
  }
  const cpu = () => {
    if (serverPid !== undefined) return pidCpuSeconds(serverPid);
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  const cpuBefore = cpu();
  const started = performance.now();
  await w.client.command({
    query: `INSERT INTO bench.${table} (${SESSION_INSERT_COLUMNS.join(", ")}) ${sessionRowsSelect(source)}`,
    clickhouse_settings: { insert_deduplicate: 0 },
  });
  const ms = performance.now() - started;
  const cpuS = cpu() - cpuBefore;
  const rows = await scalar(w, `SELECT count() FROM bench.${table}`);
  const bytes = await scalar(
    w,
    `SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'bench' AND table = ${quoteString(table)} AND active`,
  );
  for (const v of setup.views)
    if ((await scalar(w, `SELECT count() FROM bench.${v.target}${COPY}`)) === 0)
      throw new Error(`the copy of ${v.name} stored nothing`);
  await drop();
  return { rows, ms, cpuS, bytes };
}

function print(result: object): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
