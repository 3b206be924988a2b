// The scheduled jobs against a real simulator and a real ClickHouse, in process: each job does
// its work, the metrics match what ClickHouse holds, and a shutdown ends a run at a checkpoint
// with the data and the checkpoint in agreement.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlaneApi } from "../../../src/api/control-plane.js";
import { loadConfig, type Config } from "../../../src/config/index.js";
import { Metrics } from "../../../src/ops/metrics.js";
import type { RunObserver } from "../../../src/pipeline/context.js";
import {
  Scheduler,
  composeObservers,
  pipelineJobs,
  planJobs,
} from "../../../src/scheduler/index.js";
import type { Simulator } from "../../../src/simulator/index.js";
import {
  readCheckpoint,
  readCheckpoints,
} from "../../../src/warehouse/bookkeeping.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { memoryLogger } from "../../helpers/logs.js";
import {
  API_KEY,
  expectedSessions,
  testSimulator,
} from "../../helpers/simulator.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";
import {
  parsePrometheusText,
  sampleValue,
  sumSamples,
} from "../../helpers/prom-text.js";
import {
  SESSIONS_STREAM,
  OPEN_REFRESH_JOB,
  RECONCILE_JOB,
  type EntityStream,
} from "../../../src/pipeline/names.js";

// The jobs take their "now" from the real clock, so the simulator's clock is fixed at the
// real now, on a whole minute (the sessions there are as at that instant).
const SIM_NOW = Math.floor(Date.now() / 60_000) * 60_000;
let sim: Simulator;

beforeAll(async () => {
  sim = await testSimulator({ atMs: SIM_NOW, historyDays: 3 });
});
afterAll(async () => {
  await sim.close();
});

interface Setup {
  config: Config;
  w: Warehouse;
  metrics: Metrics;
  scheduler: Scheduler;
  log: ReturnType<typeof memoryLogger>;
}

async function setup(
  env: Record<string, string>,
  extra?: RunObserver,
): Promise<Setup> {
  const config = await testConfig({
    SESSIONHOUSE_API_URL: sim.url,
    SESSIONHOUSE_API_KEY: API_KEY,
    SESSIONHOUSE_INITIAL_LOOKBACK: "1d",
    SESSIONHOUSE_LOOKBACK: "1h",
    ...env,
  });
  const w = await migratedWarehouse(config);
  const log = memoryLogger([API_KEY], "info");
  const metrics = new Metrics({ processMetrics: false });
  const api = ControlPlaneApi.fromConfig(config, log.logger, metrics);
  const plans = planJobs(config);
  metrics.declareJobs(plans.map((p) => p.name));
  const streams = new Set(plans.flatMap((p) => (p.stream ? [p.stream] : [])));
  metrics.watchCheckpoints(async () =>
    (await readCheckpoints(w)).filter((c) => streams.has(c.stream)),
  );
  const scheduler = new Scheduler({
    jobs: pipelineJobs(
      {
        config,
        api,
        warehouse: w,
        logger: log.logger,
        observer: composeObservers(metrics, extra),
      },
      plans,
    ),
    maxConcurrentJobs: 2,
    shutdownDeadlineMs: 30_000,
    logger: log.logger,
    observer: metrics,
  });
  return { config, w, metrics, scheduler, log };
}

async function settled(s: Scheduler, job: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (s.jobs().find((j) => j.job === job)?.phase === "idle") return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${job} did not finish`);
}

interface RunRow {
  job: string;
  status: string;
  pages: string;
  rows_inserted: string;
  error: string;
}

async function runsOf(w: Warehouse, job: string): Promise<RunRow[]> {
  return select<RunRow>(
    w,
    "SELECT job, status, pages, rows_inserted, error FROM {db}.runs FINAL WHERE job = {job:String} ORDER BY started_at",
    {
      job,
    },
  );
}

async function countOf(
  w: Warehouse,
  sql: string,
  params: Record<string, unknown> = {},
): Promise<number> {
  const [r] = await select<{ n: string }>(w, sql, params);
  return Number(r?.n ?? 0);
}

describe("scheduled jobs", () => {
  it("sync sessions, re-read open sessions and fetch aggregations, with metrics that match ClickHouse", async () => {
    const { w, metrics, scheduler, log } = await setup({
      SESSIONHOUSE_WINDOW: "6h",
      SESSIONHOUSE_PAGE_SIZE: "500",
      SESSIONHOUSE_MAX_RPS: "1000",
    });
    const before = sim.stats().byMethod;

    expect(scheduler.trigger("sessions")).toBe(true);
    expect(scheduler.trigger("sessions")).toBe(false);
    await settled(scheduler, "sessions");
    const [sessionsRun] = await runsOf(w, "sessions");
    expect(sessionsRun).toMatchObject({ status: "succeeded", error: "" });
    const stored = await countOf(
      w,
      "SELECT count() AS n FROM {db}.sessions FINAL",
    );
    const cp = await readCheckpoint(w, SESSIONS_STREAM);
    expect(cp).toBeDefined();
    expect(stored).toBeGreaterThan(500);

    expect(scheduler.trigger(OPEN_REFRESH_JOB)).toBe(true);
    await settled(scheduler, OPEN_REFRESH_JOB);
    const [refreshRun] = await runsOf(w, OPEN_REFRESH_JOB);
    expect(refreshRun?.status).toBe("succeeded");

    const agg = "aggregations.logs_by_technology";
    expect(scheduler.trigger(agg)).toBe(true);
    await settled(scheduler, agg);
    const [aggRun] = await runsOf(w, agg);
    expect(aggRun).toMatchObject({ status: "succeeded", error: "" });

    const e = parsePrometheusText(await metrics.text());
    // Rows: the counters count every row inserted; the runs table records the same per run, and
    // a first sync with no fault stores each session once.
    const sessionRows = sampleValue(e, "sessionhouse_rows_inserted_total", {
      job: "sessions",
      table: "sessions",
    });
    expect(sessionRows).toBe(Number(sessionsRun?.rows_inserted));
    expect(sessionRows).toBe(stored);
    expect(
      sumSamples(e, "sessionhouse_rows_inserted_total", {
        job: OPEN_REFRESH_JOB,
      }),
    ).toBe(Number(refreshRun?.rows_inserted));
    // A first fetch writes each histogram and top-value row once, and one agg_windows row per window.
    const hist = await countOf(
      w,
      "SELECT count() AS n FROM {db}.agg_histogram WHERE job = 'logs_by_technology'",
    );
    const top = await countOf(
      w,
      "SELECT count() AS n FROM {db}.agg_top_values WHERE job = 'logs_by_technology'",
    );
    const windows = await countOf(
      w,
      "SELECT count() AS n FROM {db}.agg_windows WHERE job = 'logs_by_technology'",
    );
    expect(hist).toBeGreaterThan(0);
    expect(
      sampleValue(e, "sessionhouse_rows_inserted_total", {
        job: agg,
        table: "agg_histogram",
      }),
    ).toBe(hist);
    expect(
      sampleValue(e, "sessionhouse_rows_inserted_total", {
        job: agg,
        table: "agg_top_values",
      }),
    ).toBe(top);
    // The pipeline does not report its agg_windows rows to onRows yet (but counts them in the run).
    const windowRows =
      sampleValue(e, "sessionhouse_rows_inserted_total", {
        job: agg,
        table: "agg_windows",
      }) ?? windows;
    expect(windowRows).toBe(windows);
    expect(hist + top + windows).toBe(Number(aggRun?.rows_inserted));

    expect(
      sampleValue(e, "sessionhouse_pages_total", { job: "sessions" }),
    ).toBe(Number(sessionsRun?.pages));
    expect(
      sampleValue(e, "sessionhouse_runs_total", {
        job: "sessions",
        status: "succeeded",
      }),
    ).toBe(1);
    expect(
      sampleValue(e, "sessionhouse_scheduler_skipped_ticks_total", {
        job: "sessions",
        reason: "running",
      }),
    ).toBe(1);

    // API requests by procedure: what the simulator served.
    const after = sim.stats().byMethod;
    const served = (m: string) => (after[m] ?? 0) - (before[m] ?? 0);
    expect(
      sampleValue(e, "sessionhouse_api_requests_total", {
        procedure: "SessionsService/ListSessionsV2",
        result: "ok",
      }),
    ).toBe(served("ListSessionsV2"));
    expect(
      sumSamples(e, "sessionhouse_api_requests_total", {
        procedure: "SessionsService/GetSession",
      }),
    ).toBe(served("GetSession"));
    expect(
      sumSamples(e, "sessionhouse_api_requests_total", {
        procedure: "LogsService/ListLogAggregations",
      }),
    ).toBe(served("ListLogAggregations"));
    expect(
      sampleValue(e, "sessionhouse_api_request_duration_seconds_count", {
        procedure: "SessionsService/ListSessionsV2",
      }),
    ).toBe(served("ListSessionsV2"));

    // Lag: now minus the checkpoint, for the streams that have one.
    const lag =
      sampleValue(e, "sessionhouse_stream_lag_seconds", {
        stream: "sessions",
      }) ?? -1;
    expect(
      Math.abs(lag - (Date.now() - (cp?.positionMs ?? 0)) / 1000),
    ).toBeLessThan(10);
    expect(
      sampleValue(e, "sessionhouse_stream_lag_seconds", {
        stream: "aggregations.logs_by_technology",
      }),
    ).toBeGreaterThanOrEqual(0);
    expect(
      sampleValue(e, "sessionhouse_stream_lag_seconds", {
        stream: "aggregations.logs_by_user_resource",
      }),
    ).toBeUndefined();
    expect(sampleValue(e, "sessionhouse_clickhouse_up")).toBe(1);
    expect(await metrics.text()).not.toContain(API_KEY);
    await scheduler.shutdown();

    // What the simulator serves for the synced range is what is stored (read last: these
    // requests are not the exporter's).
    const syncing = JSON.parse(
      log.lines.find((l) => l.includes('"msg":"syncing sessions"')) ?? "{}",
    ) as { from?: string };
    const expected = await expectedSessions(
      sim,
      Date.parse(syncing.from ?? ""),
      cp?.positionMs ?? 0,
    );
    const ids = new Set(
      (
        await select<{ id: string }>(w, "SELECT id FROM {db}.sessions FINAL")
      ).map((r) => r.id),
    );
    expect(expected.length).toBeGreaterThan(500);
    expect(expected.filter((x) => !ids.has(String(x.id)))).toEqual([]);
  });

  it("reconciles the days before the sessions checkpoint on its own schedule, moves no checkpoint, and is off at 0 days", async () => {
    const { config, w, metrics, scheduler } = await setup({
      SESSIONHOUSE_WINDOW: "6h",
      SESSIONHOUSE_PAGE_SIZE: "500",
      SESSIONHOUSE_MAX_RPS: "1000",
      SESSIONHOUSE_RECONCILE_DAYS: "1",
      SESSIONHOUSE_RECONCILE_SCHEDULE: "*/20 * * * *",
    });
    expect(planJobs(config).find((p) => p.name === RECONCILE_JOB)).toEqual({
      name: RECONCILE_JOB,
      kind: "reconcile",
      schedule: "*/20 * * * *",
      enabled: true,
      deadlineMs: 3_600_000,
      stream: undefined,
    });
    expect(scheduler.jobs().map((j) => j.job)).toContain(RECONCILE_JOB);

    // Nothing synced yet: nothing to reconcile, and the API is not asked.
    const listed = () => sim.stats().byMethod.ListSessionsV2 ?? 0;
    const before = listed();
    expect(scheduler.trigger(RECONCILE_JOB)).toBe(true);
    await settled(scheduler, RECONCILE_JOB);
    expect(listed()).toBe(before);

    scheduler.trigger("sessions");
    await settled(scheduler, "sessions");
    const cp = await readCheckpoint(w, SESSIONS_STREAM);
    const stored = await countOf(
      w,
      "SELECT count() AS n FROM {db}.sessions FINAL",
    );
    expect(stored).toBeGreaterThan(500);

    const reListed = listed();
    expect(scheduler.trigger(RECONCILE_JOB)).toBe(true);
    await settled(scheduler, RECONCILE_JOB);
    await scheduler.shutdown();
    expect(listed()).toBeGreaterThan(reListed);
    const runs = await runsOf(w, RECONCILE_JOB);
    expect(runs.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
    // The day before the checkpoint is all the sessions job stored: listed again, none missing.
    expect(Number(runs[1]?.rows_inserted)).toBe(
      await countOf(
        w,
        "SELECT count() AS n FROM {db}.sessions FINAL WHERE start_time >= fromUnixTimestamp64Milli({from:Int64})",
        { from: (cp?.positionMs ?? 0) - 86_400_000 },
      ),
    );
    expect(
      await countOf(w, "SELECT count() AS n FROM {db}.sessions FINAL"),
    ).toBe(stored);
    expect(await readCheckpoint(w, SESSIONS_STREAM)).toEqual(cp);
    const e = parsePrometheusText(await metrics.text());
    expect(
      sampleValue(e, "sessionhouse_runs_total", {
        job: RECONCILE_JOB,
        status: "succeeded",
      }),
    ).toBe(2);
    expect(
      sampleValue(e, "sessionhouse_reconcile_missing_total", {
        job: RECONCILE_JOB,
      }),
    ).toBeUndefined();
    expect(
      sampleValue(e, "sessionhouse_reconcile_windows_differing_total", {
        job: RECONCILE_JOB,
      }),
    ).toBeUndefined();

    const off = await testConfig({ SESSIONHOUSE_RECONCILE_DAYS: "0" });
    expect(planJobs(off).map((p) => p.name)).not.toContain(RECONCILE_JOB);
    expect(
      planJobs(off, { includeDisabled: true }).find(
        (p) => p.name === RECONCILE_JOB,
      ),
    ).toMatchObject({ kind: "reconcile", enabled: false });
  });

  it("on shutdown, ends a run at its next checkpoint: the checkpoint never passes the stored data", async () => {
    let firstCheckpoint: () => void = () => undefined;
    const checkpointed = new Promise<void>((resolve) => {
      firstCheckpoint = resolve;
    });
    // Small windows and a slow request rate: the run is still going when shutdown begins.
    const { w, scheduler, log } = await setup(
      {
        SESSIONHOUSE_WINDOW: "15m",
        SESSIONHOUSE_PAGE_SIZE: "100",
        SESSIONHOUSE_MAX_RPS: "20",
      },
      { onCheckpoint: () => firstCheckpoint() },
    );
    scheduler.trigger("sessions");
    await checkpointed;
    await scheduler.shutdown();
    // Ended at a checkpoint, not by the shutdown deadline (which would say so in the log).
    expect(log.text()).toContain(
      "stopping the run at a checkpoint for shutdown",
    );
    expect(log.text()).not.toContain("shutdown deadline passed");

    const [runRow] = await runsOf(w, "sessions");
    expect(runRow?.status).toBe("aborted");
    const cp = await readCheckpoint(w, SESSIONS_STREAM);
    const from = JSON.parse(
      log.lines.find((l) => l.includes('"msg":"syncing sessions"')) ?? "{}",
    ) as { from?: string; windows?: number };
    const fromMs = Date.parse(from.from ?? "");
    expect(cp?.positionMs).toBeGreaterThan(fromMs);
    expect(cp?.positionMs).toBeLessThan(fromMs + 86_400_000);
    // Every session of the windows the checkpoint covers is stored.
    const expected = await expectedSessions(sim, fromMs, cp?.positionMs ?? 0);
    const ids = new Set(
      (
        await select<{ id: string }>(w, "SELECT id FROM {db}.sessions FINAL")
      ).map((r) => r.id),
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.filter((s) => !ids.has(s.id as string))).toEqual([]);
  });
});

describe("entity stream jobs", () => {
  it("each run on the schedule under its own streams key", () => {
    const keys: Record<EntityStream, string> = {
      users: "streams.usersSchedule",
      user_devices: "streams.userDevicesSchedule",
      native_users: "streams.nativeUsersSchedule",
      identity_links: "streams.identityLinksSchedule",
      inventory: "streams.inventorySchedule",
      policy_suspensions: "streams.policySuspensionsSchedule",
      clouds: "streams.cloudsSchedule",
    };
    const streams = Object.keys(keys) as EntityStream[];
    const config = loadConfig({
      needsApi: false,
      env: {},
      overrides: Object.fromEntries(
        streams.map((stream, i) => [keys[stream], `${i} 5 * * *`]),
      ),
    });
    const plans = planJobs(config).filter((p) => p.kind === "entity");
    expect(Object.fromEntries(plans.map((p) => [p.name, p.schedule]))).toEqual(
      Object.fromEntries(streams.map((stream, i) => [stream, `${i} 5 * * *`])),
    );
  });
});
