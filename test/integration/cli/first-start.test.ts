// `sessionhouse run` as a real child process (the built CLI) from its first minute: against a
// slow simulator it stores sessions within seconds of its start, and the sessions job's ticks
// keep finishing while an aggregation job's first run (a backfill of the initial lookback)
// goes on, although that job's tick is minutes away; with a key the control plane refuses, /readyz is false
// within seconds, naming the key, and `status` names the failure after the service stopped.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import type { Simulator } from "../../../src/simulator/index.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { NEVER } from "../../helpers/cli.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import { API_KEY, testSimulator } from "../../helpers/simulator.js";
import { migratedWarehouse, testConfig } from "../../helpers/warehouse.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const BIN = join(ROOT, "bin", "sessionhouse.js");
/** Every ten minutes: no tick of the configured schedules comes during a test. */
const RARELY = "*/10 * * * *";

let sim: Simulator;
let workDir: string;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  sim = await testSimulator({
    atMs: Math.floor(Date.now() / 60_000) * 60_000,
    historyDays: 2,
    sessionsPerDay: 300,
    // Every answer starts a second after the request: a slow control plane.
    latency: { firstByteMs: 1_000, bytesPerSecond: 0, maxConcurrent: 0 },
  });
  workDir = mkdtempSync(join(testTmpDir(), "sessionhouse-first-start-"));
});

afterAll(async () => {
  for (const c of children)
    if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await sim?.close();
});

/** The service's config file; `sessionsSchedule` every ten seconds unless given. */
function writeConfig(
  name: string,
  sessionsSchedule = "*/10 * * * * *",
): string {
  const file = join(workDir, `${name}.yaml`);
  const rarely = `"${RARELY}"`;
  writeFileSync(
    file,
    [
      "sessions:",
      `  schedule: "${sessionsSchedule}"`,
      `  refreshSchedule: "${NEVER}"`,
      `  reconcileSchedule: "${NEVER}"`,
      "  initialLookbackMs: 1d",
      "  reconcileDays: 0",
      "aggregations:",
      "  jobs:",
      ...["tech", "users"].flatMap((job) => [
        `    - name: ${job}`,
        `      groupBy: [${job === "tech" ? "resource.technology" : "user.email"}]`,
        "      windowMs: 1h",
        `      schedule: ${rarely}`,
      ]),
      "streams:",
      "  enabled: false",
      "retention:",
      `  rollupSchedule: "${NEVER}"`,
      "detections:",
      `  schedule: ${rarely}`,
      "service:",
      "  opsPort: 0",
      "  readAccess: false",
      "  maxConcurrentJobs: 2",
      // An aggregation backfill at a second an answer is mid-window when the test stops the
      // service: it is aborted after a second (the next run resumes it), not after five.
      "  shutdownDeadlineMs: 1s",
      "",
    ].join("\n"),
  );
  return file;
}

function childEnv(config: Config, key: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (
      !k.startsWith("SESSIONHOUSE_") &&
      !k.startsWith("CLICKHOUSE_") &&
      k !== "NODE_OPTIONS"
    )
      env[k] = v;
  return {
    ...env,
    SESSIONHOUSE_API_URL: sim.url,
    SESSIONHOUSE_API_KEY: key,
    SESSIONHOUSE_DATA_DIR: config.clickhouse.dataDir,
    CLICKHOUSE_DATABASE: config.clickhouse.database,
    ...(config.clickhouse.url ? { CLICKHOUSE_URL: config.clickhouse.url } : {}),
    SESSIONHOUSE_LOG_LEVEL: "info",
    SESSIONHOUSE_LOG_FORMAT: "json",
  };
}

type LogLine = Record<string, unknown> & { msg?: string; time?: string };

/** A `run` child: its JSON log lines as they come. */
class Service {
  readonly child: ChildProcess;
  readonly lines: LogLine[] = [];
  stderr = "";

  constructor(configFile: string, env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, [BIN, "--config", configFile, "run"], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.add(this.child);
    createInterface({
      input: this.child.stdout as NodeJS.ReadableStream,
    }).on("line", (line) => {
      try {
        this.lines.push(JSON.parse(line) as LogLine);
      } catch {
        this.lines.push({ msg: `(not JSON) ${line}` });
      }
    });
    this.child.stderr?.on("data", (d: Buffer) => {
      this.stderr += d.toString("utf8");
    });
  }

  async line(match: (l: LogLine) => boolean, timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.lines.find(match);
      if (hit) return hit;
      if (this.child.exitCode !== null)
        throw new Error(`run exited (${this.child.exitCode}): ${this.stderr}`);
      if (Date.now() > deadline)
        throw new Error(
          `no such log line; last lines: ${JSON.stringify(this.lines.slice(-5))}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) =>
      this.child.once("exit", (code) => resolve(code)),
    );
    this.child.kill("SIGTERM");
    return exited;
  }
}

const at = (l: LogLine) => Date.parse(String(l.time));

/**
 * A fresh database as `migrate` leaves it (the run's schema replayed), closed again for the
 * child: what the tests measure starts at "service started", after the migrations.
 */
async function migratedConfig(): Promise<Config> {
  const config = await testConfig();
  await (await migratedWarehouse(config)).close();
  return config;
}

describe("run from its first minute (a real child process)", () => {
  it("stores sessions within seconds of its start while the aggregation backfills run", async () => {
    const config = await migratedConfig();
    const service = new Service(writeConfig("slow"), childEnv(config, API_KEY));
    try {
      const started = await service.line((l) => l.msg === "service started");
      const sessions = await service.line(
        (l) =>
          l.job === "sessions" &&
          l.msg === "run finished" &&
          Number(l.rowsInserted) > 0,
        60_000,
      );
      // Stored long before the first tick of any schedule (ten minutes).
      expect(at(sessions) - at(started)).toBeLessThan(45_000);
      const startedAtOnce = await service.line(
        (l) => l.msg === "jobs started at once, without waiting for their tick",
      );
      expect(startedAtOnce.jobs).toEqual(
        expect.arrayContaining([
          "sessions (the key's check)",
          "aggregations.tech (never succeeded)",
        ]),
      );
      // While an aggregation backfill runs (the other one waits: a slot is kept for the live
      // jobs), the sessions job's ticks still run and finish.
      const backfill = await service.line(
        (l) =>
          String(l.job).startsWith("aggregations.") && l.msg === "run started",
      );
      const during = await service.line(
        (l) =>
          l.job === "sessions" &&
          l.msg === "run finished" &&
          at(l) > at(backfill),
      );
      const backfillEnd = service.lines.find(
        (l) => l.runId === backfill.runId && l.msg === "run finished",
      );
      expect(backfillEnd === undefined || at(backfillEnd) > at(during)).toBe(
        true,
      );
      expect(at(during) - at(backfill)).toBeLessThan(30_000);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  }, 120_000);

  it("with a refused key, /readyz is false within seconds naming the key, and status names the failure", async () => {
    const config = await migratedConfig();
    const env = childEnv(config, "not-the-key-0123456789");
    const service = new Service(writeConfig("wrong-key", RARELY), env);
    try {
      const ops = await service.line((l) => l.msg === "ops server listening");
      const started = Date.now();
      const refused =
        /job sessions: the control plane refuses the API key \(unauthenticated, HTTP 401\)/;
      let body: { ready: boolean; reasons: string[] } | undefined;
      // Before the service holds its lease, /readyz is already false for that (standby): wait
      // for the reason this test is about.
      for (;;) {
        const res = await fetch(`${String(ops.url)}/readyz`);
        body = (await res.json()) as { ready: boolean; reasons: string[] };
        if (
          !body.ready &&
          res.status === 503 &&
          refused.test(body.reasons.join("\n"))
        )
          break;
        if (Date.now() - started > 45_000) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(body?.ready).toBe(false);
      expect(body?.reasons.join("\n")).toMatch(refused);
      expect(Date.now() - started).toBeLessThan(45_000);
    } finally {
      expect(await service.stop()).toBe(0);
    }
    const status = await mainInProcess(
      Object.fromEntries(
        Object.entries(env).filter(
          (e): e is [string, string] =>
            e[1] !== undefined &&
            (e[0].startsWith("SESSIONHOUSE_") ||
              e[0].startsWith("CLICKHOUSE_")),
        ),
      ),
      "--config",
      join(workDir, "wrong-key.yaml"),
      "status",
    );
    expect(status.status).toBe(0);
    expect(status.stdout).toMatch(
      /The control plane refuses the API key: the last run of sessions[^\n]*unauthenticated \(HTTP 401\)[^\n]*Check SESSIONHOUSE_API_KEY/,
    );
  }, 120_000);
});
