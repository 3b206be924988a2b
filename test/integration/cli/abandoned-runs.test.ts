// Runs whose process died: a real `sessionhouse sync sessions` child is killed with SIGKILL in
// the middle of a backfill against a slow simulator; its run stays `running` until the next
// command that writes starts, which marks it `abandoned` (runs FINAL, `status --json`). Then the
// judgement of owners on the real engine: a run of another host, of a live process, or recorded
// without an owner is left; a dead pid, or a pid now held by a process started at another time,
// is abandoned, and /metrics counts it.
//
// The embedded engine allows one process per data directory at a time: this process opens the
// warehouse only while no child is running.
import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StatusReport } from "../../../src/cli/commands/status.js";
import { openRuntime } from "../../../src/cli/runtime.js";
import { Metrics } from "../../../src/ops/metrics.js";
import { SESSIONS_JOB } from "../../../src/pipeline/names.js";
import type { Simulator } from "../../../src/simulator/index.js";
import { openWarehouse } from "../../../src/warehouse/client.js";
import { chTime } from "../../../src/warehouse/format.js";
import { processStartToken } from "../../../src/util/process.js";
import { API_KEY, testSimulator } from "../../helpers/simulator.js";
import {
  freshDatabaseName,
  migratedWarehouse,
  select,
  testConfig,
  testDataDir,
} from "../../helpers/warehouse.js";
import {
  buildCli,
  cleanEnv,
  removeCli,
  runCli,
  startCli,
  type CliPackage,
} from "../../helpers/cli.js";

let sim: Simulator;
let cli: CliPackage;

beforeAll(async () => {
  [sim, cli] = await Promise.all([
    // Every answer waits before its first byte and one request is answered at a time: a
    // backfill of a week in hour windows takes long enough to be killed in the middle.
    testSimulator({
      latency: { firstByteMs: 150, bytesPerSecond: 0, maxConcurrent: 1 },
    }),
    buildCli(),
  ]);
}, 120_000);

afterAll(async () => {
  await sim?.close();
  removeCli(cli);
});

interface RunRow {
  run_id: string;
  status: string;
  finished_at: string | null;
  error: string;
  owner_host: string;
  owner_pid: number;
}

describe("a run whose process is killed", () => {
  it("is marked abandoned by the next command that writes, in runs and in status", async () => {
    const database = freshDatabaseName();
    const env = cleanEnv({
      SESSIONHOUSE_API_URL: sim.url,
      SESSIONHOUSE_API_KEY: API_KEY,
      SESSIONHOUSE_DATA_DIR: testDataDir(),
      CLICKHOUSE_DATABASE: database,
      CLICKHOUSE_URL: process.env.CLICKHOUSE_URL,
      SESSIONHOUSE_WINDOW: "1h",
      SESSIONHOUSE_PAGE_SIZE: "100",
      SESSIONHOUSE_LOG_LEVEL: "info",
      SESSIONHOUSE_LOG_FORMAT: "json",
    });
    const sync = startCli(
      cli,
      ["sync", "sessions", "--from", "2026-11-01", "--to", "2026-11-08"],
      env,
    );
    // Killed once it has recorded its run and started reading: the run is under way.
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (sync.logs.some((l) => l.msg === "syncing sessions")) done(resolve);
        else if (sync.child.exitCode !== null)
          done(() => reject(new Error("the sync ended before it was killed")));
      }, 20);
      const done = (then: () => void) => {
        clearInterval(timer);
        then();
      };
    });
    const pid = sync.child.pid;
    sync.child.kill("SIGKILL");
    const killed = await sync.result;
    expect(killed.signal).toBe("SIGKILL");

    const statusOf = async (): Promise<StatusReport> => {
      const r = await runCli(cli, ["status", "--json"], env);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as StatusReport;
    };
    const sessionsJob = (s: StatusReport) =>
      s.jobs.find((j) => j.job === SESSIONS_JOB);
    // status only reads: the run is as the killed process left it.
    expect(sessionsJob(await statusOf())?.lastRun?.status).toBe("running");

    // The next command that writes (one that needs no API) judges it.
    const next = await runCli(cli, ["sync", "rollups"], env);
    expect(next.code, next.stderr).toBe(0);
    expect(
      next.logs.filter(
        (l) => l.msg === "run marked abandoned: its process is gone",
      ),
    ).toEqual([expect.objectContaining({ job: SESSIONS_JOB, pid })]);

    const last = sessionsJob(await statusOf())?.lastRun;
    expect(last?.status).toBe("abandoned");
    expect(last?.finishedAt).not.toBeNull();
    expect(last?.error).toContain(`pid ${String(pid)}`);

    const config = await testConfig({}, database);
    const w = await openWarehouse(config);
    try {
      const rows = await select<RunRow>(
        w,
        `SELECT run_id, status, finished_at, error, owner_host, owner_pid
         FROM {db}.runs FINAL WHERE job = {job:String}`,
        { job: SESSIONS_JOB },
      );
      expect(rows).toEqual([
        expect.objectContaining({
          status: "abandoned",
          owner_host: hostname(),
          owner_pid: pid,
          error: expect.stringContaining("was gone") as unknown,
        }),
      ]);
      expect(rows[0]?.finished_at).not.toBeNull();
      // The rollups run that found it is the other run of the database, and it ended.
      const others = await select<RunRow>(
        w,
        `SELECT status FROM {db}.runs FINAL WHERE job != {job:String}`,
        { job: SESSIONS_JOB },
      );
      expect(others.map((r) => r.status)).toEqual(["succeeded"]);
    } finally {
      await w.close();
    }
  }, 120_000);
});

describe("which runs a starting command judges", () => {
  it("abandons a dead or reused pid of this host, leaves another host's, a live one's and an unowned one, and counts it in /metrics", async () => {
    const config = await testConfig({
      SESSIONHOUSE_API_URL: sim.url,
      SESSIONHOUSE_API_KEY: API_KEY,
    });
    // A pid that is gone: a process that ran and exited.
    const exited = spawn(process.execPath, ["-e", ""]);
    const deadPid = exited.pid as number;
    await new Promise((resolve) => exited.once("exit", resolve));
    // A live process of this host, and its start token.
    const sleeper = spawn(process.execPath, [
      "-e",
      "setTimeout(() => {}, 600000)",
    ]);
    const livePid = sleeper.pid as number;
    const liveStart = processStartToken(livePid);

    const w = await migratedWarehouse(config);
    const startedAt = chTime(Date.UTC(2026, 10, 20, 10, 0, 0));
    const row = (job: string, host: string, pid: number, start: string) => ({
      run_id: `run-${job}`,
      job,
      started_at: startedAt,
      finished_at: null,
      status: "running",
      pages: 0,
      rows_inserted: 0,
      dead_letters: 0,
      retries: 0,
      error: "",
      updated_at: startedAt,
      owner_host: host,
      owner_pid: pid,
      owner_start: start,
    });
    const here = hostname();
    const self = processStartToken(process.pid);
    await w.client.insert({
      table: `\`${w.database}\`.runs`,
      format: "JSONEachRow",
      values: [
        row("dead-pid", here, deadPid, "boot:1"),
        row("reused-pid", here, process.pid, `${self}0`),
        row("live", here, livePid, liveStart),
        row("this-process", here, process.pid, self),
        row("other-host", `not-${here}`, deadPid, "boot:1"),
        row("no-owner", "", 0, ""),
      ],
    });
    await w.close();

    const metrics = new Metrics({ processMetrics: false });
    const rt = await openRuntime(config, { runObserver: metrics });
    let statuses: { job: string; status: string; finished: number }[];
    try {
      statuses = await select(
        rt.warehouse,
        `SELECT job, status, finished_at IS NOT NULL AS finished FROM {db}.runs FINAL ORDER BY job`,
      );
    } finally {
      await rt.close();
      sleeper.kill("SIGKILL");
    }
    expect(statuses).toEqual([
      { job: "dead-pid", status: "abandoned", finished: 1 },
      { job: "live", status: "running", finished: 0 },
      { job: "no-owner", status: "running", finished: 0 },
      { job: "other-host", status: "running", finished: 0 },
      { job: "reused-pid", status: "abandoned", finished: 1 },
      { job: "this-process", status: "running", finished: 0 },
    ]);
    const text = await metrics.text();
    expect(text).toContain(
      'sessionhouse_runs_total{job="dead-pid",status="abandoned"} 1',
    );
    expect(text).toContain(
      'sessionhouse_runs_total{job="reused-pid",status="abandoned"} 1',
    );
    expect(text).not.toMatch(/job="live",status="abandoned"/);
  }, 120_000);
});
