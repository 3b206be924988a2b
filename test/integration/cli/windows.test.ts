// `sessionhouse windows list|skip|forget`, `status` and `/readyz` with a window that keeps
// getting a bad answer: the run fails naming it, it is poisoned, status and /readyz show it, an
// operator skips it (recorded with who and why), and the next run moves the checkpoint past it.
// The same for a window of the sessions stream that the service always refuses, and for a parent
// (a resource whose native users cannot be listed) of a stream read per parent.
import { mkdtempSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StatusReport } from "../../../src/cli/commands/status.js";
import { Metrics } from "../../../src/ops/metrics.js";
import { checkReadiness } from "../../../src/ops/readiness.js";
import { startOpsServer } from "../../../src/ops/server.js";
import { createListLogAggregationsHandler } from "../../../src/simulator/logs/handler.js";
import {
  LIST_LOG_AGGREGATIONS_PATH,
  RawJson,
  type Simulator,
} from "../../../src/simulator/index.js";
import { readCheckpoint } from "../../../src/warehouse/bookkeeping.js";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import { listWindows } from "../../../src/warehouse/windows.js";
import {
  mainInProcess,
  type InProcessResult,
} from "../../helpers/cli-in-process.js";
import { memoryLogger } from "../../helpers/logs.js";
import { API_KEY, testSimulator } from "../../helpers/simulator.js";
import { reusedDatabase, testConfig } from "../../helpers/warehouse.js";
import { refusingProxy } from "../../helpers/servers.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

const HOUR = 3_600_000;
const NOW = Math.floor(Date.now() / 60_000) * 60_000;
/** The window that gets a bad answer: two windows before the current one. */
const BAD = Math.floor(NOW / HOUR) * HOUR - 2 * HOUR;
let sim: Simulator;
const db = reusedDatabase();

beforeAll(async () => {
  sim = await testSimulator({ atMs: NOW, historyDays: 1 });
});
afterAll(async () => {
  await db.close();
  await sim.close();
});

type CliResult = InProcessResult;

/** Runs the CLI in this process with only the given environment. */
const cli = mainInProcess;

/**
 * A fresh, migrated database for each case: one for the file (reusedDatabase), emptied between
 * cases, so the CLI's `migrate` finds every file applied. No case here is about a first
 * migration, which would cost each case seconds.
 */
async function migratedConfig(): Promise<
  Awaited<ReturnType<typeof testConfig>>
> {
  const base = await testConfig({}, db.name);
  await db.fresh(base);
  return base;
}

/** The CLI's environment against `apiUrl`: hourly windows, two attempts before poisoning. */
function hourlyEnv(
  apiUrl: string,
  base: Awaited<ReturnType<typeof testConfig>>,
): Record<string, string> {
  return {
    SESSIONHOUSE_API_URL: apiUrl,
    SESSIONHOUSE_API_KEY: API_KEY,
    SESSIONHOUSE_MAX_RPS: "1000",
    SESSIONHOUSE_MAX_WINDOW_ATTEMPTS: "2",
    SESSIONHOUSE_DATA_DIR: base.clickhouse.dataDir,
    CLICKHOUSE_DATABASE: base.clickhouse.database,
    SESSIONHOUSE_INITIAL_LOOKBACK: "4h",
    SESSIONHOUSE_WINDOW: "1h",
    SESSIONHOUSE_LOG_LEVEL: "silent",
    ...(base.clickhouse.url ? { CLICKHOUSE_URL: base.clickhouse.url } : {}),
  };
}

/** /readyz as `run` asks it: the windows (and parents) not stored, pending and poisoned. */
function waitingReadiness(w: Warehouse) {
  return checkReadiness({
    ping: () => Promise.resolve(true),
    jobs: () => [],
    startedAtMs: Date.now(),
    stopping: () => false,
    poisonedWindows: () => listWindows(w, { states: ["pending", "poisoned"] }),
  });
}

describe("windows", () => {
  it("shows a poisoned window in sync, windows list, status and /readyz; skip records who and why and lets the checkpoint pass", async () => {
    const base = await migratedConfig();
    const dir = mkdtempSync(join(testTmpDir(), "sessionhouse-windows-"));
    const configFile = join(dir, "config.yaml");
    writeFileSync(
      configFile,
      [
        "api:",
        "  maxRetries: 0",
        "aggregations:",
        "  maxWindowAttempts: 1",
        "  jobs:",
        "    - name: tech",
        "      groupBy: [resource.technology]",
        "      windowMs: 1h",
        "      refetchMs: 1h",
        "",
      ].join("\n"),
    );
    const env: Record<string, string> = {
      SESSIONHOUSE_API_URL: sim.url,
      SESSIONHOUSE_API_KEY: API_KEY,
      SESSIONHOUSE_MAX_RPS: "1000",
      SESSIONHOUSE_DATA_DIR: base.clickhouse.dataDir,
      CLICKHOUSE_DATABASE: base.clickhouse.database,
      SESSIONHOUSE_INITIAL_LOOKBACK: "4h",
      SESSIONHOUSE_LOG_LEVEL: "silent",
      ...(base.clickhouse.url ? { CLICKHOUSE_URL: base.clickhouse.url } : {}),
    };
    const sh = (...args: string[]) => cli(env, "--config", configFile, ...args);

    const real = createListLogAggregationsHandler();
    sim.addRoute(LIST_LOG_AGGREGATIONS_PATH, (body, ctx) =>
      String(body.startTimestamp) === String(BAD / 1000)
        ? RawJson.of("<html>bad gateway</html>")
        : real(body, ctx),
    );
    let failed: CliResult;
    try {
      failed = await sh("sync", "aggregations", "--job", "tech");
    } finally {
      sim.addRoute(
        LIST_LOG_AGGREGATIONS_PATH,
        createListLogAggregationsHandler(),
      );
    }
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain(new Date(BAD).toISOString());
    expect(failed.stderr).toContain("BAD_RESPONSE");
    expect(failed.stderr).toContain("now poisoned");
    expect(failed.stderr).toContain("windows skip tech");

    const listed = await sh("windows", "list", "--json");
    expect(listed.status).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({
        job: "tech",
        windowStart: new Date(BAD).toISOString(),
        state: "poisoned",
        attempts: 1,
        lastError: expect.stringContaining("BAD_RESPONSE") as unknown,
      }),
    ]);
    const table = await sh("windows", "list", "--job", "tech");
    expect(table.stdout).toContain("poisoned");

    const status = await sh("status", "--json");
    const report = JSON.parse(status.stdout) as StatusReport;
    const tech = report.jobs.find((j) => j.job === "aggregations.tech");
    expect(tech?.poisonedWindows).toEqual([
      expect.objectContaining({
        windowStart: new Date(BAD).toISOString(),
        attempts: 1,
      }),
    ]);
    expect(tech?.pendingWindows).toBe(0);
    const text = await sh("status");
    expect(text.stdout).toContain("Poisoned windows");
    expect(text.stdout).toContain(
      `sessionhouse windows skip aggregations.tech --window ${new Date(BAD).toISOString()}`,
    );

    // /readyz: 503 while the window is poisoned, and says so.
    const w = await openWarehouse(base);
    const ops = await startOpsServer({
      host: "127.0.0.1",
      port: 0,
      logger: memoryLogger().logger,
      metrics: new Metrics({ processMetrics: false }),
      readiness: () =>
        checkReadiness({
          ping: () => Promise.resolve(true),
          jobs: () => [],
          startedAtMs: Date.now(),
          stopping: () => false,
          poisonedWindows: () => listWindows(w, { states: ["poisoned"] }),
        }),
    });
    try {
      const res = await fetch(`${ops.url}/readyz`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as {
        reasons: string[];
        poisonedWindows: unknown[];
      };
      expect(body.reasons.join(" ")).toMatch(/poisoned/);
      expect(body.poisonedWindows).toEqual([
        {
          job: "tech",
          windowStart: new Date(BAD).toISOString(),
          windowEnd: new Date(BAD + HOUR).toISOString(),
        },
      ]);

      // A window that is not waiting cannot be skipped.
      const wrong = await sh(
        "windows",
        "skip",
        "tech",
        "--window",
        new Date(BAD - HOUR).toISOString(),
        "--reason",
        "x",
      );
      expect(wrong.status).toBe(2);
      expect(wrong.stderr).toContain(new Date(BAD).toISOString());

      const skipped = await sh(
        "windows",
        "skip",
        "tech",
        "--window",
        new Date(BAD).toISOString(),
        "--reason",
        "gateway outage, logs lost upstream",
        "--by",
        "alice",
      );
      expect(skipped.status).toBe(0);
      expect((await fetch(`${ops.url}/readyz`)).status).toBe(200);
    } finally {
      await ops.close();
    }
    const all = JSON.parse(
      (await sh("windows", "list", "--all", "--json")).stdout,
    ) as Array<Record<string, unknown>>;
    expect(
      all.find((r) => r.windowStart === new Date(BAD).toISOString()),
    ).toMatchObject({
      state: "skipped",
      skippedBy: "alice",
      skipReason: "gateway outage, logs lost upstream",
    });

    // The next run moves the checkpoint past the skipped window.
    const before = (await readCheckpoint(w, "aggregations.tech"))?.positionMs;
    expect(before).toBe(BAD);
    const again = await sh("sync", "aggregations", "--job", "tech");
    expect(again.status).toBe(0);
    const after = (await readCheckpoint(w, "aggregations.tech"))?.positionMs;
    expect(after).toBeGreaterThanOrEqual(BAD + 2 * HOUR);
    expect(JSON.parse((await sh("windows", "list", "--json")).stdout)).toEqual(
      [],
    );
    await w.close();
  });

  it("shows a sessions window the service always refuses in sync, windows list and status; skip lets the checkpoint pass it without reading it", async () => {
    const base = await migratedConfig();
    // In front of the simulator: ListSessionsV2 for the window starting at BAD is refused.
    const refused: string[] = [];
    const proxy = await refusingProxy(sim.url, (path, body) => {
      if (!path.endsWith("/ListSessionsV2")) return undefined;
      const start = (JSON.parse(body) as { startTimestamp?: unknown })
        .startTimestamp;
      if (String(start) !== String(BAD / 1000)) return undefined;
      refused.push(String(start));
      return {
        status: 400,
        code: "invalid_argument",
        message: "startTimestamp: this range cannot be listed",
      };
    });
    const env = hourlyEnv(proxy.url, base);
    const sh = (...args: string[]) => cli(env, ...args);
    const w = await openWarehouse(base);
    // As `run` asks: the windows not stored, pending and poisoned.
    const readiness = () => waitingReadiness(w);
    try {
      const failed = await sh("sync", "sessions");
      expect(failed.status).toBe(1);
      expect(failed.stderr).toContain("invalid_argument");
      expect(refused).toHaveLength(1);
      expect((await readCheckpoint(w, "sessions"))?.positionMs).toBe(BAD);

      const listed = await sh("windows", "list", "--job", "sessions", "--json");
      expect(listed.status).toBe(0);
      expect(JSON.parse(listed.stdout)).toEqual([
        expect.objectContaining({
          job: "sessions",
          windowStart: new Date(BAD).toISOString(),
          windowEnd: new Date(BAD + HOUR).toISOString(),
          state: "pending",
          attempts: 1,
          lastError: expect.stringContaining("invalid_argument") as unknown,
        }),
      ]);
      const status = JSON.parse(
        (await sh("status", "--json")).stdout,
      ) as StatusReport;
      expect(
        status.jobs.find((j) => j.job === "sessions")?.pendingWindows,
      ).toBe(1);
      expect((await sh("status")).stdout).toContain("Pending windows");
      // /readyz shows a pending window; one failed run does not make the service unready.
      const pendingReady = await readiness();
      expect(pendingReady.ready).toBe(true);
      expect(pendingReady.pendingWindows).toEqual([
        {
          job: "sessions",
          windowStart: new Date(BAD).toISOString(),
          windowEnd: new Date(BAD + HOUR).toISOString(),
        },
      ]);

      // Failing again: poisoned (SESSIONHOUSE_MAX_WINDOW_ATTEMPTS), still read on every run.
      expect((await sh("sync", "sessions")).status).toBe(1);
      expect(refused).toHaveLength(2);
      expect(
        (await listWindows(w, { job: "sessions" })).map((r) => [
          r.state,
          r.attempts,
        ]),
      ).toEqual([["poisoned", 2]]);
      const text = await sh("status");
      expect(text.stdout).toContain(
        `sessionhouse windows skip sessions --window ${new Date(BAD).toISOString()}`,
      );
      const ready = await readiness();
      expect(ready.ready).toBe(false);
      expect(ready.pendingWindows).toEqual([]);
      expect(ready.poisonedWindows).toEqual([
        {
          job: "sessions",
          windowStart: new Date(BAD).toISOString(),
          windowEnd: new Date(BAD + HOUR).toISOString(),
        },
      ]);
      // forget is for aggregation jobs: it refuses the sessions stream.
      const forget = await sh("windows", "forget", "sessions", "--yes");
      expect(forget.status).toBe(2);
      expect(forget.stderr).toContain("windows skip sessions");

      const skipped = await sh(
        "windows",
        "skip",
        "sessions",
        "--window",
        new Date(BAD).toISOString(),
        "--reason",
        "the service refuses this hour; reported to the vendor",
      );
      expect(skipped.status).toBe(0);
      const [record] = await listWindows(w, { job: "sessions" });
      expect(record).toMatchObject({
        state: "skipped",
        skippedBy: userInfo().username,
        skipReason: "the service refuses this hour; reported to the vendor",
      });

      // The next run passes the skipped window without asking for it.
      const again = await sh("sync", "sessions");
      expect(again.status).toBe(0);
      expect(refused).toHaveLength(2);
      expect((await readCheckpoint(w, "sessions"))?.positionMs).toBeGreaterThan(
        BAD + HOUR,
      );
      expect(
        JSON.parse((await sh("windows", "list", "--json")).stdout),
      ).toEqual([]);
    } finally {
      await w.close();
      await proxy.close();
    }
  });

  it("keeps a parent its stream cannot read in windows list, status and /readyz; skip lets the checkpoint move while it is still read", async () => {
    const base = await migratedConfig();
    let failing = "";
    const refused: string[] = [];
    // In front of the simulator: ListNativeUsers of one resource is refused.
    const proxy = await refusingProxy(sim.url, (path, body) => {
      if (!path.endsWith("/ListNativeUsers") || failing === "")
        return undefined;
      const { resourceId } = JSON.parse(body) as { resourceId?: unknown };
      if (resourceId !== failing) return undefined;
      refused.push(failing);
      return { status: 404, code: "not_found", message: "resource not found" };
    });
    const env = hourlyEnv(proxy.url, base);
    const sh = (...args: string[]) => cli(env, ...args);
    expect((await sh("sync", "sessions")).status).toBe(0);
    const w = await openWarehouse(base);
    const readiness = () => waitingReadiness(w);
    try {
      const rs = await w.client.query({
        query: `SELECT DISTINCT resource_id FROM ${base.clickhouse.database}.sessions WHERE resource_id != '' ORDER BY resource_id`,
        format: "JSONEachRow",
      });
      const resources = (await rs.json<{ resource_id: string }>()).map(
        (r) => r.resource_id,
      );
      expect(resources.length).toBeGreaterThan(1);
      failing = resources[0] as string;

      const failed = await sh("sync", "native_users");
      expect(failed.status).toBe(1);
      expect(failed.stderr).toContain("could not be read");
      expect(failed.stderr).toContain(failing);
      expect(failed.stderr).toContain("--parent");
      expect(await readCheckpoint(w, "native_users")).toBeUndefined();
      const listed = await sh("windows", "list", "--json");
      expect(JSON.parse(listed.stdout)).toEqual([
        expect.objectContaining({
          job: "native_users",
          parent: failing,
          state: "pending",
          attempts: 1,
          lastError: "not_found",
        }),
      ]);
      expect((await sh("windows", "list")).stdout).toContain(
        `parent ${failing}`,
      );
      const status = JSON.parse(
        (await sh("status", "--json")).stdout,
      ) as StatusReport;
      expect(
        status.jobs.find((j) => j.job === "native_users")?.pendingWindows,
      ).toBe(1);

      // Failing again: poisoned; status says how to skip it, /readyz is not ready.
      expect((await sh("sync", "native_users")).status).toBe(1);
      expect(
        (await listWindows(w, { job: "native_users" })).map((r) => [
          r.parent,
          r.state,
          r.attempts,
        ]),
      ).toEqual([[failing, "poisoned", 2]]);
      expect((await sh("status")).stdout).toContain(
        `sessionhouse windows skip native_users --parent ${failing}`,
      );
      const ready = await readiness();
      expect(ready.ready).toBe(false);
      expect(ready.poisonedWindows).toEqual([
        expect.objectContaining({ job: "native_users", parent: failing }),
      ]);
      expect(ready.reasons.join(" ")).toContain(`parent ${failing}`);

      // A window and a parent at once, or neither, is refused.
      expect(
        (await sh("windows", "skip", "native_users", "--reason", "x")).status,
      ).toBe(2);
      const wrong = await sh(
        "windows",
        "skip",
        "native_users",
        "--parent",
        "no-such-resource",
        "--reason",
        "x",
      );
      expect(wrong.status).toBe(2);
      expect(wrong.stderr).toContain(`parent ${failing}`);

      const skipped = await sh(
        "windows",
        "skip",
        "native_users",
        "--parent",
        failing,
        "--reason",
        "resource retired; its accounts are kept as last read",
      );
      expect(skipped.status).toBe(0);
      expect((await listWindows(w, { job: "native_users" }))[0]).toMatchObject({
        parent: failing,
        state: "skipped",
        skippedBy: userInfo().username,
        skipReason: "resource retired; its accounts are kept as last read",
      });

      // The next run still asks for it, and moves the checkpoint.
      const asked = refused.length;
      expect((await sh("sync", "native_users")).status).toBe(0);
      expect(refused.length).toBe(asked + 1);
      expect(await readCheckpoint(w, "native_users")).toBeDefined();
      expect(
        JSON.parse((await sh("windows", "list", "--json")).stdout),
      ).toEqual([]);

      // It answers again: its skip ends.
      failing = "";
      expect((await sh("sync", "native_users")).status).toBe(0);
      expect(
        (await listWindows(w, { job: "native_users" })).map((r) => r.state),
      ).toEqual(["stored"]);
    } finally {
      await w.close();
      await proxy.close();
    }
  });

  it("forgets a job's rows only with --yes (test/integration/cli/windows-forget.test.ts: what it deletes and keeps)", async () => {
    const base = await migratedConfig();
    const env: Record<string, string> = {
      SESSIONHOUSE_DATA_DIR: base.clickhouse.dataDir,
      CLICKHOUSE_DATABASE: base.clickhouse.database,
      SESSIONHOUSE_LOG_LEVEL: "silent",
      ...(base.clickhouse.url ? { CLICKHOUSE_URL: base.clickhouse.url } : {}),
    };
    // A default job (no config file names the jobs), nothing stored yet.
    const refused = await cli(env, "windows", "forget", "logs_by_technology");
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain("--yes");
    const done = await cli(
      env,
      ...["windows", "forget", "logs_by_technology", "--yes"],
    );
    expect(done.status).toBe(0);
    expect(done.stdout).toMatch(/^logs_by_technology: nothing was stored/);
  });
});
