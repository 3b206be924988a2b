// `sessionhouse status`: what it reports against a real ClickHouse — after real runs of the jobs,
// on a database that is not migrated yet, and without the aggregation tables.
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ControlPlaneApi } from "../../../src/api/control-plane.js";
import {
  humanDuration,
  printStatus,
} from "../../../src/cli/commands/status.js";
import { collectStatus, type StatusReport } from "../../../src/ops/status.js";
import { main } from "../../../src/cli/main.js";
import { loadConfig, type Config } from "../../../src/config/index.js";
import {
  Scheduler,
  pipelineJobs,
  planJobs,
} from "../../../src/scheduler/index.js";
import type { Simulator } from "../../../src/simulator/index.js";
import { createLogger } from "../../../src/util/logger.js";
import {
  insertDeadLetters,
  readCheckpoint,
} from "../../../src/warehouse/bookkeeping.js";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import { ENTITY_STREAMS } from "../../../src/pipeline/names.js";
import { API_KEY, testSimulator } from "../../helpers/simulator.js";
import {
  freshDatabaseName,
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

const SIM_NOW = Math.floor(Date.now() / 60_000) * 60_000;
let sim: Simulator;

beforeAll(async () => {
  sim = await testSimulator({ atMs: SIM_NOW, historyDays: 2 });
});
afterAll(async () => {
  await sim.close();
});

/** A config with two aggregation jobs, one disabled, as a config file would give it. */
async function configWithJobs(database = freshDatabaseName()): Promise<Config> {
  const base = await testConfig(
    { SESSIONHOUSE_API_URL: sim.url, SESSIONHOUSE_API_KEY: API_KEY },
    database,
  );
  return loadConfig({
    env: {
      SESSIONHOUSE_API_URL: sim.url,
      SESSIONHOUSE_API_KEY: API_KEY,
      SESSIONHOUSE_DATA_DIR: base.clickhouse.dataDir,
      CLICKHOUSE_DATABASE: database,
      SESSIONHOUSE_LOG_LEVEL: "silent",
      // The reconciliation lists again only what the sessions job synced.
      SESSIONHOUSE_INITIAL_LOOKBACK: "1d",
      SESSIONHOUSE_RECONCILE_DAYS: "1",
      SESSIONHOUSE_WINDOW: "2h",
      SESSIONHOUSE_MAX_RPS: "1000",
      ...(base.clickhouse.url ? { CLICKHOUSE_URL: base.clickhouse.url } : {}),
    },
    overrides: {
      "aggregations.jobs": [
        {
          name: "tech",
          groupBy: ["resource.technology"],
          windowMs: "1h",
          refetchMs: "1h",
          schedule: "*/5 * * * *",
        },
        { name: "off", groupBy: ["user.email"], enabled: false },
      ],
    },
  });
}

async function runJobs(
  config: Config,
  w: Warehouse,
  names: string[],
): Promise<void> {
  const logger = createLogger({ level: "silent" });
  const api = ControlPlaneApi.fromConfig(config, logger);
  const scheduler = new Scheduler({
    jobs: pipelineJobs({ config, api, warehouse: w, logger }),
    maxConcurrentJobs: 1,
    shutdownDeadlineMs: 10_000,
    logger,
  });
  for (const name of names) {
    scheduler.trigger(name);
    while (scheduler.jobs().find((j) => j.job === name)?.phase !== "idle")
      await new Promise((r) => setTimeout(r, 50));
  }
  await scheduler.shutdown();
  await api.close();
}

let ran: Promise<Config> | undefined;

/**
 * One database of the file on which the sessions jobs and aggregations.tech ran once (a
 * simulator day synced): the first test reports on it, the `status --json` run reads it too.
 */
function databaseAfterJobs(): Promise<Config> {
  ran ??= (async () => {
    const config = await configWithJobs();
    const w = await migratedWarehouse(config);
    try {
      await runJobs(config, w, [
        "sessions",
        "sessions.refresh",
        "sessions.reconcile",
        "aggregations.tech",
      ]);
    } finally {
      await w.close();
    }
    return config;
  })();
  return ran;
}

async function n(w: Warehouse, sql: string): Promise<number> {
  const [r] = await select<{ n: string }>(w, sql);
  return Number(r?.n ?? 0);
}

describe("status", () => {
  it("reports every job's checkpoint, lag, last run, rows, dead letters and next run", async () => {
    const config = await databaseAfterJobs();
    const w = await openWarehouse(config);
    try {
      // A session the re-read no longer follows (session_polls: vanished).
      await w.client.insert({
        table: `\`${w.database}\`.session_polls`,
        values: [
          {
            session_id: "ses-gone",
            misses: 3,
            vanished: true,
            last_polled_at: "2026-11-20 10:00:00.000",
            last_error: "not_found",
            updated_at: "2026-11-20 10:00:00.000",
          },
        ],
        format: "JSONEachRow",
      });
      await insertDeadLetters(
        w,
        { job: "sessions", runId: "r" },
        [{ recordId: "s-1", reason: "test", raw: "{" }],
        { retries: 0 },
      );
      const now = Date.now();
      const report = await collectStatus(w, config, now);

      expect(report.warehouse).toMatchObject({
        database: config.clickhouse.database,
        migrated: true,
      });
      expect(report.jobs.map((j) => j.job)).toEqual([
        "sessions",
        "sessions.refresh",
        "sessions.reconcile",
        "rollups",
        "aggregations.tech",
        "aggregations.off",
        ...ENTITY_STREAMS,
        "detections",
      ]);
      const [sessions, refresh, reconcile, rollups, tech, off] = report.jobs;
      expect(rollups).toMatchObject({
        kind: "rollups",
        enabled: true,
        schedule: "41 * * * *",
        stream: null,
      });
      const cp = await readCheckpoint(w, "sessions");
      const stored = await n(w, "SELECT count() AS n FROM {db}.sessions FINAL");
      expect(stored).toBeGreaterThan(0);
      expect(sessions).toMatchObject({
        kind: "sessions",
        enabled: true,
        schedule: "* * * * *",
        stream: "sessions",
        checkpoint: new Date(cp?.positionMs ?? 0).toISOString(),
        lagSeconds: Math.round((now - (cp?.positionMs ?? 0)) / 1000),
        rowsStored: stored,
        rowsByTable: { sessions: stored },
        openSessions: null,
        deadLetters: 1,
        lastRun: { status: "succeeded", error: "" },
      });
      expect(sessions?.lastRun?.rowsInserted).toBe(stored);
      expect(sessions?.lastSuccessAt).toBe(sessions?.lastRun?.finishedAt);
      expect(Date.parse(sessions?.nextRunAt ?? "")).toBeGreaterThan(now);
      expect(Date.parse(sessions?.nextRunAt ?? "") % 60_000).toBe(0);

      expect(refresh).toMatchObject({
        kind: "open-refresh",
        stream: null,
        checkpoint: null,
        lagSeconds: null,
        rowsStored: null,
        openSessions: await n(
          w,
          "SELECT count() AS n FROM {db}.sessions FINAL WHERE session_status IN ('active', 'idle')",
        ),
        vanishedSessions: 1,
        lastRun: { status: "succeeded" },
        deadLetters: 0,
      });
      expect(Date.parse(refresh?.nextRunAt ?? "") % 180_000).toBe(0);
      expect(reconcile).toMatchObject({
        kind: "reconcile",
        enabled: true,
        schedule: "17 * * * *",
        stream: null,
        checkpoint: null,
        rowsStored: null,
        openSessions: null,
        vanishedSessions: null,
        lastRun: { status: "succeeded", error: "" },
      });
      expect(new Date(reconcile?.nextRunAt ?? "").getUTCMinutes()).toBe(17);

      const hist = await n(
        w,
        "SELECT count() AS n FROM {db}.agg_histogram FINAL WHERE job = 'tech' AND count > 0",
      );
      const top = await n(
        w,
        "SELECT count() AS n FROM {db}.agg_top_values FINAL WHERE job = 'tech' AND count > 0",
      );
      const windows = await n(
        w,
        "SELECT count() AS n FROM {db}.agg_windows FINAL WHERE job = 'tech'",
      );
      expect(hist).toBeGreaterThan(0);
      expect(tech).toMatchObject({
        kind: "aggregation",
        stream: "aggregations.tech",
        rowsByTable: {
          agg_histogram: hist,
          agg_top_values: top,
          agg_windows: windows,
        },
        rowsStored: hist + top + windows,
        lastRun: { status: "succeeded" },
      });
      expect(tech?.checkpoint).not.toBeNull();
      expect(off).toMatchObject({
        enabled: false,
        checkpoint: null,
        lastRun: null,
        rowsStored: 0,
        nextRunAt: null,
      });

      const out = capture();
      printStatus(report, out.stream);
      const text = out.text();
      expect(text).toContain("aggregations.tech");
      expect(text).toContain("(disabled)");
      expect(text).toMatch(/succeeded \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z/);
      expect(text).toContain(`${refresh?.openSessions} open, 1 vanished`);
      expect(text).toContain("sessions.reconcile");
    } finally {
      await w.close();
    }
  });

  it("works on a database that is not migrated yet, and without the aggregation tables", async () => {
    const config = await configWithJobs();
    const w = await openWarehouse(config);
    try {
      const empty = await collectStatus(w, config);
      expect(empty.warehouse.migrated).toBe(false);
      expect(
        empty.jobs.every(
          (j) =>
            j.checkpoint === null && j.lastRun === null && j.deadLetters === 0,
        ),
      ).toBe(true);
      const out = capture();
      printStatus(empty, out.stream);
      expect(out.text()).toContain("not created yet");
    } finally {
      await w.close();
    }
    const migrated = await migratedWarehouse(config);
    try {
      for (const t of ["agg_histogram", "agg_top_values", "agg_windows"]) {
        await migrated.client.command({
          query: `DROP TABLE \`${migrated.database}\`.\`${t}\``,
        });
      }
      const report = await collectStatus(migrated, config);
      expect(report.warehouse.migrated).toBe(true);
      expect(
        report.jobs.find((j) => j.job === "aggregations.tech"),
      ).toMatchObject({ rowsStored: 0, rowsByTable: {} });
      // A directory stream's tables, by its history rule: current rows and their history, or
      // the versions read and the removals.
      const byStream = (stream: string) =>
        report.jobs.find((j) => j.stream === stream)?.rowsByTable;
      expect(byStream("users")).toEqual({ users: 0, users_history: 0 });
      expect(byStream("policy_suspensions")).toEqual({
        policy_suspensions: 0,
        policy_suspension_removals: 0,
      });
    } finally {
      await migrated.close();
    }
  });

  it("runs as `sessionhouse status --json` without any API settings", async () => {
    // The database the jobs ran on (the first test's, whichever of them runs first).
    const config = await databaseAfterJobs();
    const env = { ...process.env };
    const written: string[] = [];
    const spy = vi
      .spyOn(process.stdout, "write")
      .mockImplementation((chunk: string | Uint8Array) => {
        written.push(String(chunk));
        return true;
      });
    try {
      for (const k of Object.keys(process.env))
        if (k.startsWith("SESSIONHOUSE_") || k.startsWith("CLICKHOUSE_"))
          delete process.env[k];
      process.env.SESSIONHOUSE_DATA_DIR = config.clickhouse.dataDir;
      process.env.CLICKHOUSE_DATABASE = config.clickhouse.database;
      if (config.clickhouse.url)
        process.env.CLICKHOUSE_URL = config.clickhouse.url;
      expect(await main(["node", "sessionhouse", "status", "--json"])).toBe(0);
    } finally {
      spy.mockRestore();
      process.env = env;
    }
    const report = JSON.parse(written.join("")) as StatusReport;
    // Without a config file the default aggregation jobs are listed; only sessions ran.
    expect(report.jobs.map((j) => j.job)).toEqual(
      planJobs(loadConfig({ needsApi: false, env: {} }), {
        includeDisabled: true,
      }).map((p) => p.name),
    );
    expect(report.jobs[0]).toMatchObject({
      job: "sessions",
      lastRun: { status: "succeeded" },
    });
    expect(report.jobs[0]?.rowsStored).toBeGreaterThan(0);
  });

  it("writes durations the way people read them", () => {
    expect(humanDuration(0)).toBe("0s");
    expect(humanDuration(42)).toBe("42s");
    expect(humanDuration(60)).toBe("1m");
    expect(humanDuration(725)).toBe("12m 5s");
    expect(humanDuration(3 * 86_400 + 4 * 3_600 + 59)).toBe("3d 4h");
    expect(humanDuration(3_600 + 30)).toBe("1h 0m");
  });
});

function capture(): { stream: NodeJS.WritableStream; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString("utf8"));
      cb();
    },
  });
  return { stream, text: () => chunks.join("") };
}
