// `sessionhouse run` on the embedded engine holds the data directory; other processes read
// through its read access. Real processes (the built CLI) against the simulator: while the
// service runs, also in the middle of a sync, `status --json`, `query`, `export`, `report`,
// `hold list` and `archive export` from other processes answer through it, a write
// through its token is refused, the token file is mode 0600 and the token appears in no output,
// a command that writes is refused with what to do; after SIGTERM the file is gone; after
// SIGKILL, or with a file whose process does not answer, `status` opens the directory itself
// or says why not, quickly.
//
// The service is a real child process (it holds the data directory, its ports and its file, and
// is stopped by signals); the commands that read through it run the CLI's main in this test
// process, which is another process than the service's all the same (their stdout, stderr and
// log lines are kept for the secrets check). The case of a file naming a live process that does
// not answer runs its command as a child: the file must name a process other than the reader.
import fs, { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  afterAll,
  afterEach,
  beforeAll,
  describe,
  expect,
  it,
  vi,
} from "vitest";
import type { StatusReport } from "../../../src/cli/commands/status.js";
import type { Simulator } from "../../../src/simulator/index.js";
import {
  SERVICE_FILE,
  type ServiceRecord,
} from "../../../src/warehouse/service-access.js";
import {
  NEVER,
  buildCli,
  cleanEnv,
  removeCli,
  runCli,
  startCli,
  type CliPackage,
  type CliResult,
  type CliRun,
} from "../../helpers/cli.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { gatedProxy } from "../../helpers/servers.js";
import { API_KEY, testSimulator } from "../../helpers/simulator.js";
import {
  freshDatabaseName,
  markSessionsSynced,
  migratedDataDir,
  migratedWarehouse,
  testConfig,
} from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

const SIM_NOW = Math.floor(Date.now() / 60_000) * 60_000;

let cli: CliPackage;
let sim: Simulator;
let dataDir: string;
let configFile: string;
const database = freshDatabaseName();
const services = new Set<CliRun>();
/** Every byte the CLI processes of this file wrote. */
const outputs: string[] = [];

beforeAll(async () => {
  cli = await buildCli();
  sim = await testSimulator({
    atMs: SIM_NOW,
    historyDays: 2,
    sessionsPerDay: 400,
  });
  const dir = mkdtempSync(join(testTmpDir(), "sessionhouse-service-reads-"));
  dataDir = join(dir, "data");
  // The warehouse as `migrate` leaves it (the run's schema replayed): the first service start
  // finds nothing to migrate, as on a warehouse in use.
  await migratedDataDir(dataDir, database);
  configFile = join(dir, "config.yaml");
  writeFileSync(
    configFile,
    [
      // Every job on a yearly schedule: each start runs the sessions job (the key's check) and
      // the jobs that never succeeded at once, and nothing after them; the commands of the tests
      // read through an engine that is not busy with runs that prove nothing here.
      "sessions:",
      `  schedule: "${NEVER}"`,
      `  refreshSchedule: "${NEVER}"`,
      `  reconcileSchedule: "${NEVER}"`,
      "  reconcileDays: 0",
      "  initialLookbackMs: 1d",
      "aggregations:",
      "  jobs:",
      "    - name: tech",
      "      groupBy: [resource.technology]",
      "      enabled: false",
      "streams:",
      "  enabled: false",
      "retention:",
      `  rollupSchedule: "${NEVER}"`,
      "detections:",
      `  schedule: "${NEVER}"`,
      "  initialLookbackMs: 1h",
      "service:",
      "  opsPort: 0",
      "  readMaxExecutionTimeMs: 10s",
      "api:",
      "  maxRequestsPerSecond: 1000",
      "",
    ].join("\n"),
  );
}, 120_000);

/** A service a failed test left running would hold the data directory for the next test. */
async function killServices(): Promise<void> {
  for (const s of services) {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill("SIGCONT");
      s.child.kill("SIGKILL");
    }
    await s.result;
  }
  services.clear();
}

afterEach(killServices);

afterAll(async () => {
  await killServices();
  await sim?.close();
  removeCli(cli);
});

function env(withApi: boolean, apiUrl = sim.url): NodeJS.ProcessEnv {
  return cleanEnv({
    ...(withApi
      ? {
          SESSIONHOUSE_API_URL: apiUrl,
          SESSIONHOUSE_API_KEY: API_KEY,
          // The readers' results capped small; the owner's commands read whole results.
          SESSIONHOUSE_READ_MAX_RESULT_ROWS: "5",
        }
      : {}),
    SESSIONHOUSE_DATA_DIR: dataDir,
    CLICKHOUSE_DATABASE: database,
    SESSIONHOUSE_LOG_LEVEL: "info",
    SESSIONHOUSE_LOG_FORMAT: "json",
  });
}

function serviceFile(): string {
  return join(dataDir, SERVICE_FILE);
}

function readRecord(): ServiceRecord {
  return JSON.parse(readFileSync(serviceFile(), "utf8")) as ServiceRecord;
}

/** A command of another process than the service's, its output kept for the secrets check. */
async function cli1(args: string[], timeoutMs = 60_000): Promise<CliResult> {
  const r = await runCli(
    cli,
    ["--config", configFile, ...args],
    env(false),
    timeoutMs,
  );
  outputs.push(r.stdout, r.stderr);
  return r;
}

interface ReaderResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * A command run by the CLI's main in this process (not the service's): its exit status, stdout
 * and stderr, and its log lines, which the logger writes to file descriptor 1 itself; all of it
 * kept for the secrets check.
 */
async function reader(args: string[]): Promise<ReaderResult> {
  const vars: Record<string, string> = {};
  for (const [k, v] of Object.entries(env(false)))
    if (
      v !== undefined &&
      (k.startsWith("SESSIONHOUSE_") || k.startsWith("CLICKHOUSE_"))
    )
      vars[k] = v;
  const logged: string[] = [];
  const write = fs.writeSync.bind(fs);
  const spy = vi
    .spyOn(fs, "writeSync")
    .mockImplementation(
      (
        fd: number,
        data: string | NodeJS.ArrayBufferView,
        ...rest: unknown[]
      ) => {
        if (fd !== 1 && fd !== 2)
          return (write as (...a: unknown[]) => number)(fd, data, ...rest);
        const text =
          typeof data === "string"
            ? data
            : Buffer.from(
                data.buffer,
                data.byteOffset,
                data.byteLength,
              ).toString("utf8");
        logged.push(text);
        return Buffer.byteLength(text);
      },
    );
  const started = Date.now();
  try {
    const r = await mainInProcess(vars, "--config", configFile, ...args);
    outputs.push(r.stdout, r.stderr, logged.join(""));
    return {
      code: r.status,
      stdout: r.stdout,
      stderr: r.stderr,
      ms: Date.now() - started,
    };
  } finally {
    spy.mockRestore();
  }
}

function startService(apiUrl = sim.url): CliRun {
  const s = startCli(cli, ["--config", configFile, "run"], env(true, apiUrl));
  services.add(s);
  void s.result.then((r) => outputs.push(r.stdout, r.stderr));
  return s;
}

async function until(
  what: string,
  done: () => boolean,
  timeoutMs = 90_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The service is up, its read access listening, and the runs of the sessions jobs it started at
 * once (the first sync, and the re-read of open sessions when it never succeeded) finished: no
 * run stores sessions after them until the service stops. The rollups and the detections,
 * started at once too, may still run.
 */
async function started(s: CliRun): Promise<ServiceRecord> {
  const finished = (job: string) =>
    s.logs.some((l) => l.msg === "run finished" && l.job === job);
  await until("the sessions jobs started at once", () => {
    if (s.child.exitCode !== null) return true;
    const atOnce = s.logs.find(
      (l) => l.msg === "jobs started at once, without waiting for their tick",
    );
    const jobs = ((atOnce?.jobs as string[] | undefined) ?? [])
      .map((j) => j.slice(0, j.indexOf(" (")))
      .filter((j) => j.startsWith("sessions"));
    return jobs.includes("sessions") && jobs.every(finished);
  });
  expect(s.child.exitCode).toBeNull();
  const record = readRecord();
  expect(record.pid).toBe(s.child.pid);
  return record;
}

async function rawQuery(
  url: string,
  sql: string,
  headers: Record<string, string>,
  method: "GET" | "POST" = "POST",
): Promise<{ status: number; code: string | null; text: string }> {
  const target = new URL("/", url);
  if (method === "GET") target.searchParams.set("query", sql);
  const res = await fetch(target, {
    method,
    headers,
    ...(method === "POST" ? { body: sql } : {}),
  });
  return {
    status: res.status,
    code: res.headers.get("x-clickhouse-exception-code"),
    text: await res.text(),
  };
}

describe("the embedded engine while sessionhouse run holds it", () => {
  it("status --json and query answer through the service; writes are refused; SIGTERM removes the file", async () => {
    const service = startService();
    const record = await started(service);

    // The file: owner only; the URL on loopback; the token a long random string.
    expect(statSync(serviceFile()).mode & 0o777).toBe(0o600);
    expect(record.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(record.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(record.readerToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(record.readerToken).not.toBe(record.token);
    expect(Date.parse(record.startedAt)).toBeGreaterThan(0);
    const listening = service.logs.find(
      (l) => l.msg === "read access listening (the token is in the file)",
    );
    expect(listening).toMatchObject({ url: record.url, file: serviceFile() });

    const status = await reader(["status", "--json"]);
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as StatusReport;
    expect(report.warehouse).toEqual({
      kind: "embedded",
      location: dataDir,
      database,
      migrated: true,
      throughService: { pid: service.child.pid, url: record.url },
    });
    const sessions = report.jobs.find((j) => j.job === "sessions");
    expect(sessions?.lastRun?.status).toBe("succeeded");
    expect(sessions?.rowsStored).toBeGreaterThan(0);
    // The lock error of the engine is never met: the file was found first.
    expect(status.stderr).not.toMatch(/Cannot lock file/);

    // query and status read the same rows (no run stores sessions after the first ones).
    const query = await reader([
      "query",
      "SELECT count() AS n FROM sessions FINAL",
      "--format",
      "JSONEachRow",
    ]);
    expect(query.code, query.stderr).toBe(0);
    expect(Number((JSON.parse(query.stdout) as { n: unknown }).n)).toBe(
      sessions?.rowsStored,
    );
    // Any output format of the engine, through the service's read access too.
    const pretty = await reader([
      "query",
      "SELECT 1 + 1 AS two",
      "--format",
      "PrettyCompact",
    ]);
    expect(pretty.code, pretty.stderr).toBe(0);
    expect(pretty.stdout).toMatch(/┌─two─┐\n(\d\. )?│ +2 │/);
    const table = await reader(["query", "SELECT 1 + 1 AS two"]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/│ 2 +│/);
    // The OCSF export reads through it too.
    const ocsf = await reader([
      "export",
      "ocsf",
      "--from",
      "-3d",
      "--to",
      "now",
    ]);
    expect(ocsf.code, ocsf.stderr).toBe(0);
    const events = ocsf.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { class_uid: number });
    // More rows than the readers' cap: the owner's commands read whole results.
    expect(events.length).toBeGreaterThan(5);
    expect(new Set(events.map((e) => e.class_uid))).toEqual(new Set([6005]));

    // Grafana's token: reads pass, a result over the readers' cap fails whole, naming it.
    const grafana = {
      Authorization: `Basic ${Buffer.from(`grafana:${record.readerToken}`).toString("base64")}`,
    };
    expect(await rawQuery(record.url, "SELECT 41 + 1", grafana, "GET")).toEqual(
      { status: 200, code: null, text: "42\n" },
    );
    const capped = await rawQuery(
      record.url,
      "SELECT number FROM numbers(10)",
      grafana,
      "GET",
    );
    expect(capped.code).toBe("396");
    expect(capped.text).toContain("at most 5 rows");

    // Through the token, reads pass and writes do not (readonly = 1 in the engine).
    const bearer = { Authorization: `Bearer ${record.token}` };
    const basic = {
      Authorization: `Basic ${Buffer.from(`grafana:${record.token}`).toString("base64")}`,
    };
    expect(await rawQuery(record.url, "SELECT 41 + 1", basic, "GET")).toEqual({
      status: 200,
      code: null,
      text: "42\n",
    });
    const insert = await rawQuery(
      record.url,
      `INSERT INTO \`${database}\`.checkpoints SELECT * FROM \`${database}\`.checkpoints`,
      bearer,
    );
    expect(insert.status).not.toBe(200);
    expect(insert.code).toBe("164");
    expect(insert.text).toMatch(/READONLY/);
    const drop = await rawQuery(
      record.url,
      `DROP TABLE \`${database}\`.sessions`,
      bearer,
    );
    expect(drop.code).toBe("164");
    const set = await rawQuery(
      record.url,
      "SELECT 1 SETTINGS max_memory_usage = 0",
      bearer,
    );
    expect(set.code).toBe("164");
    // Without the token, or with another one, nothing.
    expect((await rawQuery(record.url, "SELECT 1", {}, "GET")).code).toBe(
      "516",
    );
    expect(
      (
        await rawQuery(
          record.url,
          "SELECT 1",
          { Authorization: "Bearer not-the-token" },
          "GET",
        )
      ).code,
    ).toBe("516");
    // The query command through the service runs one read, read-only; a write is refused
    // before it is sent, and query --write is refused while the service holds the directory.
    const write = await reader([
      "query",
      `INSERT INTO checkpoints SELECT * FROM checkpoints`,
    ]);
    expect(write.code).toBe(2);
    expect(write.stderr).toMatch(/an INSERT statement is not a read/);
    expect(write.stderr).toMatch(/hint: .*query --write/);
    const owner = await reader([
      "query",
      "--write",
      `INSERT INTO checkpoints SELECT * FROM checkpoints`,
    ]);
    expect(owner.code).toBe(1);
    expect(owner.stderr).toContain(
      `is in use by the running service (sessionhouse run, pid ${service.child.pid})`,
    );
    expect(owner.stderr).toMatch(/hint: stop the service/);

    // Nor in the metrics.
    const ops = service.logs.find((l) => l.msg === "ops server listening");
    const metrics = await (await fetch(`${String(ops?.url)}/metrics`)).text();
    expect(metrics).toContain("sessionhouse_runs_total");
    outputs.push(metrics);

    // A command that writes is refused with what to do, before it touches the engine.
    const migrate = await reader(["migrate"]);
    expect(migrate.code).toBe(1);
    expect(migrate.stderr).toContain(
      `the data directory ${dataDir} is in use by the running service (sessionhouse run, pid ${service.child.pid})`,
    );
    expect(migrate.stderr).toMatch(/hint: stop the service first/);
    expect(migrate.stderr).not.toMatch(/Cannot lock file/);
    const help = await reader(["migrate", "--help"]);
    expect(help.stdout).toMatch(/refused \(DATA_DIR_IN_USE\); stop the/);

    // Legal holds: listed through the service; placing or releasing one writes, and is refused.
    const holds = await reader(["hold", "list"]);
    expect(holds.code, holds.stderr).toBe(0);
    expect(holds.stdout).toBe("no active legal holds\n");
    const hold = await reader([
      "hold",
      "add",
      "--user",
      "a@b.c",
      "--reason",
      "x",
    ]);
    expect(hold.code).toBe(1);
    expect(hold.stderr).toMatch(/is in use by the running service/);
    expect(hold.stderr).toMatch(/hint: stop the service first/);
    const holdHelp = await reader(["hold", "add", "--help"]);
    expect(holdHelp.stdout).toMatch(/refused \(DATA_DIR_IN_USE\); stop the/);

    service.child.kill("SIGTERM");
    const ended = await service.result;
    expect(ended.code, ended.stderr).toBe(0);
    expect(existsSync(serviceFile())).toBe(false);

    // Stopped: status opens the directory itself.
    const after = await reader(["status", "--json"]);
    expect(after.code, after.stderr).toBe(0);
    expect(
      (JSON.parse(after.stdout) as StatusReport).warehouse.throughService,
    ).toBeNull();

    // The token was written nowhere but the file: not in a log line, an error or the metrics.
    for (const out of outputs) {
      expect(out).not.toContain(record.token);
      if (record.readerToken) expect(out).not.toContain(record.readerToken);
    }
  }, 180_000);

  it("while a sync is in flight, status, query, a report, hold list and an archive export answer from other processes", async () => {
    // Every request of the service to the control plane is held until the gate opens: its
    // sessions run stays in flight, however fast or slow the machine, while the commands below
    // run one after another.
    const gate = await gatedProxy(sim.url);
    // A month that has ended and settled (archive export refuses the month in progress), and
    // that a backfill has synced (it refuses a month no checkpoint covers): recorded here
    // before the service holds the data directory.
    const simNow = new Date(SIM_NOW);
    const monthStart = Date.UTC(
      simNow.getUTCFullYear(),
      simNow.getUTCMonth() - 2,
      1,
    );
    const month = new Date(monthStart).toISOString().slice(0, 7);
    const monthEnd = Date.UTC(
      simNow.getUTCFullYear(),
      simNow.getUTCMonth() - 1,
      1,
    );
    const w = await migratedWarehouse(
      await testConfig({ SESSIONHOUSE_DATA_DIR: dataDir }, database),
    );
    try {
      await markSessionsSynced(
        w,
        new Date(monthStart).toISOString(),
        new Date(monthEnd).toISOString(),
      );
    } finally {
      await w.close();
    }
    try {
      const service = startService(gate.url);
      const sessionRuns = (msg: string) =>
        service.logs.filter((l) => l.msg === msg && l.job === "sessions")
          .length;
      await until(
        "a sessions run in flight",
        () =>
          service.child.exitCode !== null ||
          (existsSync(serviceFile()) &&
            sessionRuns("run started") > sessionRuns("run finished")),
      );
      expect(service.child.exitCode).toBeNull();
      const finishedBefore = sessionRuns("run finished");
      const out = mkdtempSync(join(testTmpDir(), "sessionhouse-report-"));
      const archive = mkdtempSync(join(testTmpDir(), "sessionhouse-archive-"));
      const status = await reader(["status", "--json"]);
      const query = await reader([
        "query",
        "SELECT count() AS n FROM sessions FINAL",
      ]);
      const report = await reader([
        "report",
        "coverage-and-integrity",
        "--from",
        "-1d",
        "--to",
        "now",
        "--format",
        "html,csv,json",
        "--out",
        out,
      ]);
      const holds = await reader(["hold", "list"]);
      const exported = await reader([
        "archive",
        "export",
        "--month",
        month,
        "--to",
        archive,
      ]);
      // All five answered while the run was still going.
      expect(sessionRuns("run finished")).toBe(finishedBefore);
      gate.open();
      expect(status.code, status.stderr).toBe(0);
      const job = (JSON.parse(status.stdout) as StatusReport).jobs.find(
        (j) => j.job === "sessions",
      );
      expect(job?.lastRun?.status).toBe("running");
      expect(query.code, query.stderr).toBe(0);
      expect(report.code, report.stderr).toBe(0);
      const written = JSON.parse(
        readFileSync(join(out, "report.json"), "utf8"),
      ) as Record<string, unknown>;
      expect(written).toBeTypeOf("object");
      expect(existsSync(join(out, "manifest.json"))).toBe(true);
      expect(holds.code, holds.stderr).toBe(0);
      expect(holds.stdout).toBe("no active legal holds\n");
      // The month's archive, encoded by the service and written here, verifies: its counts
      // are the file's, whatever the sync stored meanwhile.
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stdout).toMatch(/archived in .*: \d+ rows/);
      const verified = await reader(["archive", "verify", archive]);
      expect(verified.code, verified.stderr).toBe(0);
      service.child.kill("SIGTERM");
      expect((await service.result).code).toBe(0);
    } finally {
      gate.open();
      await gate.close();
    }
  }, 180_000);

  it("a stopped (SIGSTOP) service: status says so within seconds; after SIGKILL, status opens the directory", async () => {
    const service = startService();
    const record = await started(service);

    service.child.kill("SIGSTOP");
    try {
      const held = await reader(["status", "--json"]);
      // Ended on its own, within seconds (it waits a few seconds for an answer, not for ever).
      expect(held.code).toBe(1);
      expect(held.ms).toBeLessThan(30_000);
      expect(held.stderr).toContain(
        `is held by sessionhouse run (pid ${record.pid}), and its read access at ${record.url} does not answer`,
      );
    } finally {
      service.child.kill("SIGCONT");
    }

    service.child.kill("SIGKILL");
    expect((await service.result).signal).toBe("SIGKILL");
    // Killed: the file stays behind, naming a process that is gone.
    expect(readRecord().pid).toBe(record.pid);

    const status = await reader(["status", "--json"]);
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as StatusReport;
    expect(report.warehouse.throughService).toBeNull();
    expect(report.warehouse.location).toBe(dataDir);
    expect(
      report.jobs.find((j) => j.job === "sessions")?.rowsStored,
    ).toBeGreaterThan(0);
    // The stale file is gone.
    expect(existsSync(serviceFile())).toBe(false);
    for (const out of outputs) {
      expect(out).not.toContain(record.token);
      if (record.readerToken) expect(out).not.toContain(record.readerToken);
    }
  }, 180_000);

  it("a file naming a live process that does not answer is ignored, and removed once the directory opens", async () => {
    writeFileSync(
      serviceFile(),
      JSON.stringify({
        // This test process: alive, and serving nothing there.
        url: "http://127.0.0.1:9",
        token: "a-token-that-serves-nothing",
        pid: process.pid,
        startedAt: new Date().toISOString(),
      }),
      { mode: 0o600 },
    );
    const status = await cli1(["status", "--json"], 30_000);
    expect(status.code, status.stderr).toBe(0);
    expect(
      (JSON.parse(status.stdout) as StatusReport).warehouse.throughService,
    ).toBeNull();
    expect(existsSync(serviceFile())).toBe(false);
  }, 60_000);
});
