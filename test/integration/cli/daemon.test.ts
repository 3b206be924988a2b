// `sessionhouse run` as a real child process (the built CLI) against a simulator in this
// process: stopped with SIGTERM in the middle of a sync it exits 0 with its checkpoint never
// ahead of the stored data; a second signal exits at once, still consistent; the next run
// completes the work; /metrics parses and its counters match ClickHouse; `status --json`
// reports what the tables hold (status runs the CLI's main in this process, once the daemon
// has stopped: a child would prove nothing more about what it reads).
//
// The embedded engine allows one process per data directory at a time: this process opens the
// warehouse only while no child is running.
import { ENTITY_STREAMS } from "../../../src/pipeline/names.js";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import type { StatusReport } from "../../../src/cli/commands/status.js";
import type { Simulator } from "../../../src/simulator/index.js";
import { readCheckpoint } from "../../../src/warehouse/bookkeeping.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
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
  type Exposition,
} from "../../helpers/prom-text.js";
import { NEVER } from "../../helpers/cli.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const BIN = join(ROOT, "bin", "sessionhouse.js");
// The daemon takes "now" from the real clock; the simulator's clock stands still at the real
// now, so the history the test reads is the one the daemon read.
const SIM_NOW = Math.floor(Date.now() / 60_000) * 60_000;

let sim: Simulator;
let config: Config;
let workDir: string;
const children = new Set<ChildProcess>();
/** Earliest instant any daemon of this file started syncing at. */
let syncFromMs = 0;
/**
 * Where the first daemon started syncing: the checkpoints cover everything from here. A restart
 * re-reads from its checkpoint less the lookback, earlier than this, and until it has read
 * those windows again (a run stopped early has not), what it re-reads is stored only in part.
 */
let coveredFromMs = 0;
let firstCheckpointMs = 0;
/** The checkpoint the runs before the last test left. */
let lastCheckpointMs = 0;

beforeAll(async () => {
  // The child runs the compiled CLI in dist/, which the run's globalSetup built from this
  // checkout (test/helpers/built-dist.ts).
  sim = await testSimulator({
    atMs: SIM_NOW,
    historyDays: 3,
    faults: { rates: { badRecord: 0.01 }, seed: 3 },
  });
  config = await testConfig({
    SESSIONHOUSE_API_URL: sim.url,
    SESSIONHOUSE_API_KEY: API_KEY,
  });
  workDir = mkdtempSync(join(testTmpDir(), "sessionhouse-daemon-"));
  // The database as `migrate` leaves it (the run's schema replayed): the first start finds
  // nothing to migrate, as on a warehouse in use.
  await withWarehouse(() => Promise.resolve());
});

afterAll(async () => {
  // A child left running by a failed test must not outlive the test process.
  for (const c of children)
    if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await sim?.close();
});

/** The daemon's config file: everything the test varies, the rest from the environment. */
function writeConfig(name: string, schedule: string, maxRps: number): string {
  const file = join(workDir, `${name}.yaml`);
  writeFileSync(
    file,
    [
      "sessions:",
      `  schedule: "${schedule}"`,
      `  refreshSchedule: "${NEVER}"`,
      `  reconcileSchedule: "${NEVER}"`,
      // Off: run starts a job that never succeeded at once, whatever its schedule, and the
      // reconciliation would store sessions from before the syncs this file measures.
      "  reconcileDays: 0",
      "  windowMs: 15m",
      "  pageSize: 50",
      // A block is inserted for every page or so, and the checkpoint follows each window as
      // its rows are stored: a sync is stopped in its middle, with blocks in flight (with the
      // default blocks of 100000 rows, a day of this simulator is one insert at the end).
      "  insertBatchRows: 50",
      "  lookbackMs: 1h",
      "  initialLookbackMs: 1d",
      "aggregations:",
      "  jobs:",
      "    - name: tech",
      "      groupBy: [resource.technology]",
      "      enabled: false",
      // Off: the entity streams would share the request rate with the sessions job and keep
      // the shutdown waiting (status lists them all the same).
      "streams:",
      "  enabled: false",
      // Once a year: they run at the first start (never succeeded), not at every minute.
      "retention:",
      `  rollupSchedule: "${NEVER}"`,
      "detections:",
      `  schedule: "${NEVER}"`,
      "service:",
      "  opsPort: 0",
      "  shutdownDeadlineMs: 20s",
      "api:",
      `  maxRequestsPerSecond: ${maxRps}`,
      "",
    ].join("\n"),
  );
  return file;
}

function childEnv(withApi: boolean): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (
      k.startsWith("SESSIONHOUSE_") ||
      k.startsWith("CLICKHOUSE_") ||
      k === "NODE_OPTIONS"
    )
      continue;
    env[k] = v;
  }
  return {
    ...env,
    ...(withApi
      ? { SESSIONHOUSE_API_URL: sim.url, SESSIONHOUSE_API_KEY: API_KEY }
      : {}),
    SESSIONHOUSE_DATA_DIR: config.clickhouse.dataDir,
    CLICKHOUSE_DATABASE: config.clickhouse.database,
    ...(config.clickhouse.url ? { CLICKHOUSE_URL: config.clickhouse.url } : {}),
    SESSIONHOUSE_LOG_LEVEL: "info",
    SESSIONHOUSE_LOG_FORMAT: "json",
  };
}

type LogLine = Record<string, unknown> & { msg?: string };

class Daemon {
  readonly child: ChildProcess;
  readonly lines: LogLine[] = [];
  stderr = "";
  readonly exited: Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
  }>;
  #waiters: Array<() => void> = [];

  constructor(configFile: string) {
    this.child = spawn(process.execPath, [BIN, "--config", configFile, "run"], {
      cwd: ROOT,
      env: childEnv(true),
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.add(this.child);
    createInterface({ input: this.child.stdout as NodeJS.ReadableStream }).on(
      "line",
      (line) => {
        try {
          this.lines.push(JSON.parse(line) as LogLine);
        } catch {
          this.lines.push({ msg: `(not JSON) ${line}` });
        }
        for (const w of this.#waiters.splice(0)) w();
      },
    );
    this.child.stderr?.on("data", (d: Buffer) => {
      this.stderr += d.toString("utf8");
    });
    this.exited = new Promise((resolve) =>
      this.child.once("exit", (code, signal) => resolve({ code, signal })),
    );
  }

  /** The first log line that matches, waiting for it. */
  async line(
    match: (l: LogLine) => boolean,
    timeoutMs = 60_000,
  ): Promise<LogLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.lines.find(match);
      if (hit) return hit;
      if (this.child.exitCode !== null)
        throw new Error(
          `the daemon exited (${this.child.exitCode}): ${this.stderr}`,
        );
      if (Date.now() > deadline)
        throw new Error(
          `no matching log line; last lines: ${JSON.stringify(this.lines.slice(-5))}`,
        );
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 200).unref();
      });
    }
  }

  async url(): Promise<string> {
    return String(
      (await this.line((l) => l.msg === "ops server listening")).url,
    );
  }

  messages(): string[] {
    return this.lines.map((l) => String(l.msg));
  }
}

async function scrape(url: string): Promise<Exposition> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  return parsePrometheusText(await res.text());
}

async function scrapeUntil(
  url: string,
  done: (e: Exposition) => boolean,
  timeoutMs = 90_000,
): Promise<Exposition> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const e = await scrape(url);
    if (done(e)) return e;
    if (Date.now() > deadline)
      throw new Error("the metrics never showed the expected state");
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function withWarehouse<T>(fn: (w: Warehouse) => Promise<T>): Promise<T> {
  const w = await migratedWarehouse(config);
  try {
    return await fn(w);
  } finally {
    await w.close();
  }
}

/** Ids the simulator serves for [fromMs, toMs) that can be stored (broken records cannot). */
async function storableIds(fromMs: number, toMs: number): Promise<string[]> {
  const broken = new Set(sim.brokenRecords().map((b) => b.sessionId));
  return (await expectedSessions(sim, fromMs, toMs))
    .map((s) => s.id)
    .filter((id): id is string => typeof id === "string" && !broken.has(id));
}

async function storedIds(w: Warehouse): Promise<Set<string>> {
  return new Set(
    (await select<{ id: string }>(w, "SELECT id FROM {db}.sessions FINAL")).map(
      (r) => r.id,
    ),
  );
}

/**
 * Checks that everything the sessions checkpoint covers, from where the first run started
 * syncing, is stored; returns the checkpoint.
 */
async function checkpointAgreesWithData(w: Warehouse): Promise<number> {
  const cp = await readCheckpoint(w, "sessions");
  expect(cp).toBeDefined();
  const position = cp?.positionMs ?? 0;
  const expected = await storableIds(coveredFromMs, position);
  expect(expected.length).toBeGreaterThan(0);
  const stored = await storedIds(w);
  expect(expected.filter((id) => !stored.has(id))).toEqual([]);
  return position;
}

/** Notes where a daemon's sync started: a restart re-reads from its checkpoint less the lookback. */
async function noteSyncStart(
  daemon: Daemon,
): Promise<{ fromMs: number; toMs: number }> {
  const syncing = await daemon.line((l) => l.msg === "syncing sessions");
  const fromMs = Date.parse(String(syncing.from));
  if (coveredFromMs === 0) coveredFromMs = fromMs;
  syncFromMs = syncFromMs === 0 ? fromMs : Math.min(syncFromMs, fromMs);
  return { fromMs, toMs: Date.parse(String(syncing.to)) };
}

interface RunRow {
  status: string;
  started_at: string;
  pages: string;
  rows_inserted: string;
  dead_letters: string;
}

describe("sessionhouse run (a real child process)", () => {
  it("stops on SIGTERM in the middle of a sync: exit 0, the checkpoint never ahead of the data", async () => {
    // Small windows and 10 requests a second: the first sync takes far longer than the test waits.
    const daemon = new Daemon(writeConfig("sigterm", "* * * * * *", 10));
    const url = await daemon.url();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    // Wait for the first checkpoints, then stop it while the sync goes on.
    await scrapeUntil(
      url,
      (e) =>
        (sampleValue(e, "sessionhouse_stream_lag_seconds", {
          stream: "sessions",
        }) ?? 0) > 0,
    );
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      ready: true,
      clickhouse: { ok: true },
      overdue: [],
    });
    expect(
      daemon.lines.some(
        (l) => l.msg === "run finished" && l.job === "sessions",
      ),
    ).toBe(false);

    daemon.child.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    const messages = daemon.messages();
    expect(messages).toContain("shutting down");
    expect(messages).toContain("stopping the run at a checkpoint for shutdown");
    expect(messages).toContain("service stopped");
    expect(messages).not.toContain(
      "shutdown deadline passed, aborting running jobs",
    );
    expect(daemon.stderr).toBe("");
    expect(JSON.stringify(daemon.lines)).not.toContain(API_KEY);

    const sync = await noteSyncStart(daemon);
    await withWarehouse(async (w) => {
      firstCheckpointMs = await checkpointAgreesWithData(w);
      expect(firstCheckpointMs).toBeGreaterThan(sync.fromMs);
      expect(firstCheckpointMs).toBeLessThan(sync.toMs);
      const runs = await select<RunRow>(
        w,
        "SELECT status FROM {db}.runs FINAL WHERE job = 'sessions'",
      );
      expect(runs.map((r) => r.status)).toEqual(["aborted"]);
    });
  }, 180_000);

  it("exits at once on a second signal, and the checkpoint still agrees with the data", async () => {
    const daemon = new Daemon(writeConfig("twice", "* * * * * *", 10));
    const url = await daemon.url();
    await noteSyncStart(daemon);
    await scrapeUntil(
      url,
      (e) =>
        (sampleValue(e, "sessionhouse_rows_inserted_total", {
          job: "sessions",
          table: "sessions",
        }) ?? 0) > 0,
    );
    daemon.child.kill("SIGTERM");
    await daemon.line((l) => l.msg === "shutting down");
    daemon.child.kill("SIGTERM");
    // Ended by the signal's default action, as if it had no handler: no exit hooks run.
    expect(await daemon.exited).toEqual({ code: null, signal: "SIGTERM" });
    expect(daemon.messages()).toContain(
      "second signal: exiting now; the next start resumes from the checkpoints",
    );
    await withWarehouse(async (w) => {
      const position = await checkpointAgreesWithData(w);
      // A restart re-reads the lookback (1h) before its checkpoint, and writes checkpoints as it goes.
      expect(position).toBeGreaterThanOrEqual(firstCheckpointMs - 3_600_000);
      lastCheckpointMs = position;
    });
  }, 180_000);

  it("completes the work on the next start; /metrics counts what ClickHouse holds; status --json reports the tables", async () => {
    // Once a year: the run the start begins at once (the key's check) is the one to measure,
    // and none follows it.
    const schedule = NEVER;
    const requestsBefore = sim.stats().byMethod.ListSessionsV2 ?? 0;
    const startedAtMs = Date.now();
    const daemon = new Daemon(writeConfig("complete", schedule, 100));
    const url = await daemon.url();
    const e = await scrapeUntil(
      url,
      (x) =>
        sampleValue(x, "sessionhouse_runs_total", {
          job: "sessions",
          status: "succeeded",
        }) === 1 &&
        sampleValue(x, "sessionhouse_job_running", { job: "sessions" }) === 0 &&
        // run starts the open-session refresh at once too while it never succeeded.
        sampleValue(x, "sessionhouse_job_running", {
          job: "sessions.refresh",
        }) === 0,
    );
    const requests =
      (sim.stats().byMethod.ListSessionsV2 ?? 0) - requestsBefore;
    daemon.child.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    const { fromMs, toMs } = await noteSyncStart(daemon);
    // It resumed from the checkpoint, less the lookback (1h) for late sessions.
    expect(fromMs).toBeLessThanOrEqual(lastCheckpointMs);
    expect(fromMs).toBeGreaterThanOrEqual(lastCheckpointMs - 3_600_000);

    // status --json (the CLI's main in this process), with no API settings at all.
    const vars: Record<string, string> = {};
    for (const [k, v] of Object.entries(childEnv(false)))
      if (
        v !== undefined &&
        (k.startsWith("SESSIONHOUSE_") || k.startsWith("CLICKHOUSE_"))
      )
        vars[k] = v;
    const statusRun = await mainInProcess(
      vars,
      "--config",
      join(workDir, "complete.yaml"),
      "status",
      "--json",
    );
    expect(statusRun.status, statusRun.stderr).toBe(0);
    const status = JSON.parse(statusRun.stdout) as StatusReport;

    await withWarehouse(async (w) => {
      // The work is complete: the checkpoint is where the run ended and everything before it is stored.
      const position = await checkpointAgreesWithData(w);
      expect(position).toBe(toMs);
      // Also what the restarts re-read before the first start: every run's range, and nothing else.
      const stored = await storedIds(w);
      const storable = await storableIds(syncFromMs, toMs);
      expect(storable.filter((id) => !stored.has(id))).toEqual([]);
      expect(stored.size).toBe(storable.length);

      // The counters of this process match what its runs wrote.
      const runs = await select<RunRow>(
        w,
        "SELECT status, pages, rows_inserted, dead_letters FROM {db}.runs FINAL WHERE job = 'sessions' AND started_at >= fromUnixTimestamp64Milli({t:Int64})",
        { t: startedAtMs },
      );
      expect(runs.map((r) => r.status)).toEqual(["succeeded"]);
      const run = runs[0];
      const rows = sampleValue(e, "sessionhouse_rows_inserted_total", {
        job: "sessions",
        table: "sessions",
      });
      expect(rows).toBe(Number(run?.rows_inserted));
      const [written] = await select<{ n: string }>(
        w,
        "SELECT count() AS n FROM {db}.sessions WHERE fetched_at >= fromUnixTimestamp64Milli({t:Int64})",
        { t: startedAtMs },
      );
      // Rows written since the start: the sessions run's and those of the open-session refresh,
      // which run starts at once while it never succeeded.
      expect(
        sumSamples(e, "sessionhouse_rows_inserted_total", {
          table: "sessions",
        }),
      ).toBe(Number(written?.n));
      expect(
        sampleValue(e, "sessionhouse_pages_total", { job: "sessions" }),
      ).toBe(Number(run?.pages));
      expect(
        sampleValue(e, "sessionhouse_dead_letters_total", { job: "sessions" }),
      ).toBe(Number(run?.dead_letters));
      expect(
        sumSamples(e, "sessionhouse_api_requests_total", {
          procedure: "SessionsService/ListSessionsV2",
        }),
      ).toBe(requests);
      expect(
        sampleValue(e, "sessionhouse_runs_total", {
          job: "sessions",
          status: "succeeded",
        }),
      ).toBe(1);
      expect(
        sampleValue(e, "sessionhouse_run_duration_seconds_count", {
          job: "sessions",
          status: "succeeded",
        }),
      ).toBe(1);
      const lag =
        sampleValue(e, "sessionhouse_stream_lag_seconds", {
          stream: "sessions",
        }) ?? -1;
      expect(lag).toBeGreaterThanOrEqual(0);
      expect(lag).toBeLessThan(120);

      // status --json: what the tables hold.
      const [dead] = await select<{ n: string }>(
        w,
        "SELECT count() AS n FROM {db}.dead_letters FINAL WHERE job = 'sessions'",
      );
      const [open] = await select<{ n: string }>(
        w,
        "SELECT count() AS n FROM {db}.sessions FINAL WHERE session_status IN ('active', 'idle')",
      );
      expect(Number(dead?.n)).toBeGreaterThan(0);
      expect(status.warehouse).toMatchObject({
        database: config.clickhouse.database,
        migrated: true,
      });
      expect(status.jobs.map((j) => j.job)).toEqual([
        "sessions",
        "sessions.refresh",
        "sessions.reconcile",
        "rollups",
        "aggregations.tech",
        ...ENTITY_STREAMS,
        "detections",
      ]);
      const [sessions, refresh, reconcile, , tech] = status.jobs;
      expect(sessions).toMatchObject({
        kind: "sessions",
        enabled: true,
        schedule,
        stream: "sessions",
        checkpoint: new Date(position).toISOString(),
        rowsStored: stored.size,
        rowsByTable: { sessions: stored.size },
        deadLetters: Number(dead?.n),
        lastRun: {
          status: "succeeded",
          rowsInserted: Number(run?.rows_inserted),
          pages: Number(run?.pages),
        },
      });
      expect(sessions?.lagSeconds).toBeGreaterThanOrEqual(0);
      expect(Date.parse(sessions?.nextRunAt ?? "")).toBeGreaterThan(
        Date.parse(status.generatedAt),
      );
      expect(Date.parse(sessions?.lastSuccessAt ?? "")).toBeGreaterThanOrEqual(
        startedAtMs,
      );
      expect(refresh).toMatchObject({
        kind: "open-refresh",
        stream: null,
        checkpoint: null,
        openSessions: Number(open?.n),
        vanishedSessions: 0,
      });
      // Its schedule is once a year, but run started it at once: it had never succeeded.
      expect(refresh?.lastRun?.status).not.toBe("failed");
      expect(reconcile).toMatchObject({
        kind: "reconcile",
        enabled: false,
        schedule: NEVER,
        stream: null,
        lastRun: null,
      });
      expect(tech).toMatchObject({
        kind: "aggregation",
        enabled: false,
        stream: "aggregations.tech",
        checkpoint: null,
        rowsStored: 0,
        rowsByTable: { agg_histogram: 0, agg_top_values: 0, agg_windows: 0 },
        nextRunAt: null,
      });
    });
  }, 180_000);
});
