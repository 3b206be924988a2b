// `sessionhouse windows forget`: only an aggregation job can be forgotten; any other name (an
// entity stream, a name that is nothing) is refused with exit 2 naming the jobs, nearest first,
// and deletes nothing. Forgetting a job deletes its rows and checkpoints and nothing of another
// job, keeps every window an operator skipped (who and why), and prints what it deleted.
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
import { cleanEnv, privateCli, runCli } from "../../helpers/cli.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import { API_KEY, testSimulator } from "../../helpers/simulator.js";
import { select, testConfig } from "../../helpers/warehouse.js";

const HOUR = 3_600_000;
const NOW = Math.floor(Date.now() / 60_000) * 60_000;
/** The window of job `tech` that gets a bad answer, skipped by an operator. */
const BAD = Math.floor(NOW / HOUR) * HOUR - 2 * HOUR;
const cliPackage = privateCli();

let sim: Simulator;
beforeAll(async () => {
  // Some GetUser answers hold another user (otherObject): the users stream cannot read those ids.
  sim = await testSimulator({
    atMs: NOW,
    historyDays: 1,
    faults: { rates: { otherObject: 0.2 }, seed: 3 },
  });
});
afterAll(async () => {
  await sim.close();
});

/** Rows of each aggregation table per job, and the checkpoints of a job's stream. */
async function stored(w: Warehouse, job: string) {
  const count = async (table: string, where = "job = {job:String}") =>
    Number(
      (
        await select<{ n: string }>(
          w,
          `SELECT count() AS n FROM {db}.${table} FINAL WHERE ${where}`,
          { job },
        )
      )[0]?.n ?? 0,
    );
  return {
    agg_histogram: await count("agg_histogram"),
    agg_top_values: await count("agg_top_values"),
    agg_windows: await count("agg_windows"),
    agg_jobs: await count("agg_jobs"),
    stream_windows: await count(
      "stream_windows",
      "job = {job:String} AND parent = '' AND state != 'skipped'",
    ),
    checkpoint: (await readCheckpoint(w, `aggregations.${job}`)) !== undefined,
  };
}

describe("windows forget", () => {
  it("refuses an entity stream and an unknown name, keeps every skip, and prints the rows and checkpoints it deleted", async () => {
    const base = await testConfig();
    const dir = mkdtempSync(join(testTmpDir(), "sessionhouse-forget-"));
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
        "    - name: tech_by_user",
        "      groupBy: [resource.technology, user.email]",
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
      SESSIONHOUSE_WINDOW: "1h",
      SESSIONHOUSE_LOG_LEVEL: "silent",
      ...(base.clickhouse.url ? { CLICKHOUSE_URL: base.clickhouse.url } : {}),
    };
    const sh = (...args: string[]) =>
      mainInProcess(env, "--config", configFile, ...args);

    // The users stream: some ids answered with another user wait as parents; one is skipped.
    expect((await sh("sync", "sessions")).status).toBe(0);
    const users = await sh("sync", "users");
    expect(users.status).toBe(1);
    expect(users.stderr).toContain("BAD_RESPONSE");
    expect(users.stderr).toContain("the answer is for user");
    const waiting = JSON.parse(
      (await sh("windows", "list", "--json", "--job", "users")).stdout,
    ) as { parent: string }[];
    expect(waiting.length).toBeGreaterThan(0);
    const parent = waiting[0]?.parent ?? "";
    const skipUser = await sh(
      ...["windows", "skip", "users", "--parent", parent],
      ...["--reason", "the service answers another user", "--by", "bob"],
    );
    expect(skipUser.status, skipUser.stderr).toBe(0);

    // Job tech: one window always answers badly, an operator skips it; both jobs store the rest.
    const real = createListLogAggregationsHandler();
    sim.addRoute(LIST_LOG_AGGREGATIONS_PATH, (body, ctx) =>
      String(body.startTimestamp) === String(BAD / 1000)
        ? RawJson.of("<html>bad gateway</html>")
        : real(body, ctx),
    );
    try {
      expect((await sh("sync", "aggregations", "--job", "tech")).status).toBe(
        1,
      );
    } finally {
      sim.addRoute(
        LIST_LOG_AGGREGATIONS_PATH,
        createListLogAggregationsHandler(),
      );
    }
    const skipWindow = await sh(
      ...["windows", "skip", "tech", "--window", new Date(BAD).toISOString()],
      ...["--reason", "gateway outage, logs lost upstream", "--by", "alice"],
    );
    expect(skipWindow.status, skipWindow.stderr).toBe(0);
    expect((await sh("sync", "aggregations")).status).toBe(0);

    const w = await openWarehouse(base);
    try {
      const decisions = async () =>
        (await listWindows(w, { states: ["skipped"] })).map((r) => ({
          job: r.job,
          parent: r.parent,
          startMs: r.startMs,
          by: r.skippedBy,
          reason: r.skipReason,
        }));
      const skips = await decisions();
      expect(skips).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ job: "users", parent, by: "bob" }),
          expect.objectContaining({ job: "tech", startMs: BAD, by: "alice" }),
        ]),
      );
      const tech = await stored(w, "tech");
      const other = await stored(w, "tech_by_user");
      expect(tech.agg_histogram).toBeGreaterThan(0);
      expect(tech.checkpoint).toBe(true);
      expect(other.agg_histogram).toBeGreaterThan(0);

      // An entity stream is not an aggregation job: refused, its skip kept.
      const stream = await sh("windows", "forget", "users", "--yes");
      expect(stream.status).toBe(2);
      expect(stream.stderr).toContain("users is an entity stream");
      expect(stream.stderr).toContain("windows skip users --parent");
      expect(stream.stderr).toContain(
        "the aggregation jobs, nearest first: tech, tech_by_user",
      );
      expect(stream.stdout).toBe("");
      // A name that is nothing: refused, the nearest job first.
      const typo = await sh("windows", "forget", "tech_by_usr", "--yes");
      expect(typo.status).toBe(2);
      expect(typo.stderr).toContain('no aggregation job named "tech_by_usr"');
      expect(typo.stderr).toContain(
        "the aggregation jobs, nearest first: tech_by_user, tech; nothing was deleted",
      );
      expect(await decisions()).toEqual(skips);
      expect(await stored(w, "tech")).toEqual(tech);

      // Forgetting tech: its rows and checkpoint go, tech_by_user's stay, and so does the skip.
      const forget = await sh(
        "windows",
        "forget",
        "aggregations.tech",
        "--yes",
      );
      expect(forget.status, forget.stderr).toBe(0);
      const total =
        tech.agg_histogram +
        tech.agg_top_values +
        tech.agg_windows +
        tech.agg_jobs +
        tech.stream_windows;
      expect(forget.stdout).toBe(
        `tech: deleted ${total} rows (agg_histogram ${tech.agg_histogram}, agg_top_values ${tech.agg_top_values}, agg_windows ${tech.agg_windows}, agg_jobs ${tech.agg_jobs}, stream_windows ${tech.stream_windows}) and 1 checkpoint; its next run starts from nothing\n` +
          `tech window [${new Date(BAD).toISOString()}, ${new Date(BAD + HOUR).toISOString()}): kept skipped by alice (gateway outage, logs lost upstream); an operator's decision stays on record, and the job does not read this window again\n`,
      );
      expect(await stored(w, "tech")).toEqual({
        agg_histogram: 0,
        agg_top_values: 0,
        agg_windows: 0,
        agg_jobs: 0,
        stream_windows: 0,
        checkpoint: false,
      });
      expect(await stored(w, "tech_by_user")).toEqual(other);
      expect(await decisions()).toEqual(skips);

      // Again: nothing is left to delete, and it says so.
      const again = await sh("windows", "forget", "tech", "--yes");
      expect(again.status).toBe(0);
      expect(again.stdout).toMatch(
        /^tech: nothing was stored; deleted 0 rows and 0 checkpoints\n/,
      );
      // The next run stores the job again, passing the window still skipped.
      expect((await sh("sync", "aggregations", "--job", "tech")).status).toBe(
        0,
      );
      expect((await stored(w, "tech")).agg_histogram).toBeGreaterThan(0);
      expect(await decisions()).toEqual(skips);
    } finally {
      await w.close();
    }
  }, 120_000);

  it("the built CLI: a name that is no aggregation job exits 2, says so without a stack trace, and deletes nothing", async () => {
    const base = await testConfig();
    const env = cleanEnv({
      SESSIONHOUSE_DATA_DIR: base.clickhouse.dataDir,
      CLICKHOUSE_DATABASE: base.clickhouse.database,
      SESSIONHOUSE_LOG_LEVEL: "silent",
      CLICKHOUSE_URL: base.clickhouse.url,
    });
    const r = await runCli(
      cliPackage(),
      ["windows", "forget", "no-such-stream", "--yes"],
      env,
    );
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain('no aggregation job named "no-such-stream"');
    expect(r.stderr).toContain("the aggregation jobs, nearest first:");
    expect(r.stderr).toContain("logs_by_technology");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
