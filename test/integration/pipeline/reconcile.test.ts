// Reconciliation against the simulator over HTTP and a real engine, with late sessions: a
// session listed only three hours after its start lies behind the incremental sync's one-hour
// lookback, so the sync never stores it; once it is listed, a reconciliation of the last days
// stores exactly those sessions, counts them, compares every window and moves no checkpoint.
// Then the same through the CLI (`sync reconcile`): its main in this process, and the built CLI
// as a child for a refused range.
//
// The embedded engine allows one process per data directory: this process opens the warehouse
// only while no child runs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Metrics } from "../../../src/ops/metrics.js";
import {
  reconcileSessions,
  recentRange,
} from "../../../src/pipeline/reconcile.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import { SimClock, type Simulator } from "../../../src/simulator/index.js";
import {
  readCheckpoint,
  readCheckpoints,
} from "../../../src/warehouse/bookkeeping.js";
import type { Config } from "../../../src/config/index.js";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import { chTime } from "../../../src/warehouse/format.js";
import {
  buildCli,
  cleanEnv,
  removeCli,
  runCli,
  type CliPackage,
} from "../../helpers/cli.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { memoryLogger } from "../../helpers/logs.js";
import {
  API_KEY,
  expectedSessions,
  NOON,
  run,
  runDeps,
  testSimulator,
} from "../../helpers/simulator.js";
import { reusedDatabase, select, testConfig } from "../../helpers/warehouse.js";
import { parsePrometheusText, sampleValue } from "../../helpers/prom-text.js";
import {
  backfillStream,
  SESSIONS_JOB,
  SESSIONS_STREAM,
  RECONCILE_JOB,
} from "../../../src/pipeline/names.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const LATE_MS = 3 * HOUR;
const T1 = NOON;
/** Every session late at T1 is listed by T2. */
const T2 = T1 + LATE_MS + HOUR;

const clock = SimClock.fixed(T1);
/** One migrated database for the file, emptied for each case (reusedDatabase). */
const db = reusedDatabase();

/** A fresh, migrated database against `url`, and the case's own handle on it. */
async function freshWarehouse(
  url: string,
  env: Record<string, string>,
): Promise<{ config: Config; w: Warehouse }> {
  const config = await testConfig(
    {
      SESSIONHOUSE_API_URL: url,
      SESSIONHOUSE_API_KEY: API_KEY,
      SESSIONHOUSE_MAX_RPS: "1000",
      ...env,
    },
    db.name,
  );
  await db.fresh(config);
  return { config, w: await openWarehouse(config) };
}
let sim: Simulator;
let cli: CliPackage;

beforeAll(async () => {
  [sim, cli] = await Promise.all([
    // A thousand sessions a day (half the helper's default): still tens late in the three
    // hours before T1, and every sync and reconciliation of three days reads half as much.
    testSimulator({
      clock,
      sessionsPerDay: 1000,
      faults: { rates: { lateSession: 0.2 }, seed: 3, lateMs: LATE_MS },
    }),
    buildCli(),
  ]);
}, 180_000);
afterAll(async () => {
  await db.close();
  await sim.close();
  removeCli(cli);
});

/** Sessions of [fromMs, toMs) not listed at `atMs` yet. */
function lateAt(fromMs: number, toMs: number, atMs: number) {
  return sim
    .faultedSessions(fromMs, toMs)
    .filter((f) => f.kind === "lateSession" && (f.listedFromMs ?? 0) > atMs);
}

async function storedIds(w: Warehouse): Promise<Set<string>> {
  const rows = await select<{ id: string }>(
    w,
    "SELECT DISTINCT id FROM {db}.sessions",
  );
  return new Set(rows.map((r) => r.id));
}

describe("reconciliation of late sessions", () => {
  it("stores exactly the sessions the incremental sync missed, counts them, and moves no checkpoint", async () => {
    clock.set(T1);
    const { config, w } = await freshWarehouse(sim.url, {
      SESSIONHOUSE_PAGE_SIZE: "500",
      SESSIONHOUSE_WINDOW: "6h",
      SESSIONHOUSE_LOOKBACK: "1h",
      SESSIONHOUSE_INITIAL_LOOKBACK: "3d",
    });
    const metrics = new Metrics({ processMetrics: false });
    const log = memoryLogger([], "info");
    const deps = runDeps(config, w, { observer: metrics, logger: log.logger });
    try {
      await run(deps, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx, { nowMs: T1, skipOpenRefresh: true }),
      );
      const hidden = lateAt(T1 - 3 * DAY, T1, T1);
      clock.set(T2);
      await run(deps, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx, { nowMs: T2, skipOpenRefresh: true }),
      );
      // The second sync re-read from an hour before T1: late sessions that started earlier
      // are listed now but behind every window it read.
      const missed = hidden
        .filter((f) => f.startMs < T1 - HOUR)
        .map((f) => f.sessionId);
      const caught = hidden
        .filter((f) => f.startMs >= T1 - HOUR)
        .map((f) => f.sessionId);
      expect(missed.length).toBeGreaterThan(5);
      expect(caught.length).toBeGreaterThan(0);
      let ids = await storedIds(w);
      expect(missed.filter((id) => ids.has(id))).toEqual([]);
      expect(caught.filter((id) => !ids.has(id))).toEqual([]);
      const before = ids.size;
      const checkpoints = await readCheckpoints(w);

      const r = await run(deps, RECONCILE_JOB, async (ctx) =>
        reconcileSessions(
          ctx,
          await recentRange(ctx, config.sessions.reconcileDays, T2),
        ),
      );
      expect(r).toMatchObject({
        startMs: T2 - 3 * DAY,
        endMs: T2,
        // 16:00 to 16:00 three days later, cut at multiples of 6 h.
        windows: 13,
        missing: missed.length,
        differing: 0,
      });
      ids = await storedIds(w);
      expect(ids.size).toBe(before + missed.length);
      expect(missed.filter((id) => !ids.has(id))).toEqual([]);
      // Stored as the service lists them now, and everything listed is stored.
      const listed = await expectedSessions(sim, T2 - 3 * DAY, T2);
      expect(r.listed).toBe(listed.length);
      const raw = new Map(
        (
          await select<{ id: string; raw: string }>(
            w,
            "SELECT id, raw FROM {db}.sessions FINAL WHERE id IN {ids:Array(String)}",
            { ids: missed },
          )
        ).map((row) => [row.id, JSON.parse(row.raw) as unknown]),
      );
      for (const s of listed.filter((x) => missed.includes(x.id as string)))
        expect(raw.get(s.id as string)).toEqual(s);

      expect(await readCheckpoints(w)).toEqual(checkpoints);
      expect((await readCheckpoint(w, SESSIONS_STREAM))?.positionMs).toBe(T2);
      const [runRow] = await select<{ status: string; rows_inserted: string }>(
        w,
        "SELECT status, rows_inserted FROM {db}.runs FINAL WHERE job = {job:String}",
        { job: RECONCILE_JOB },
      );
      expect(runRow?.status).toBe("succeeded");
      expect(Number(runRow?.rows_inserted)).toBe(listed.length);
      let e = parsePrometheusText(await metrics.text());
      expect(
        sampleValue(e, "sessionhouse_reconcile_missing_total", {
          job: RECONCILE_JOB,
        }),
      ).toBe(missed.length);
      expect(
        sampleValue(e, "sessionhouse_reconcile_windows_differing_total", {
          job: RECONCILE_JOB,
        }),
      ).toBeUndefined();
      expect(log.text()).toContain(
        "reconciliation stored sessions the incremental sync missed",
      );

      // A session stored that the service no longer lists: its window differs, and only it.
      const phantomStart = T2 - 2 * HOUR;
      await w.client.insert({
        table: `\`${w.database}\`.sessions`,
        values: [
          {
            id: "ses_phantom",
            start_time: chTime(phantomStart),
            session_status: "completed",
            raw: "{}",
            fetched_at: chTime(T2),
          },
        ],
        format: "JSONEachRow",
      });
      const again = await run(deps, RECONCILE_JOB, (ctx) =>
        reconcileSessions(ctx, { fromMs: T2 - DAY, toMs: T2 }),
      );
      expect(again).toMatchObject({ windows: 5, missing: 0, differing: 1 });
      e = parsePrometheusText(await metrics.text());
      expect(
        sampleValue(e, "sessionhouse_reconcile_windows_differing_total", {
          job: RECONCILE_JOB,
        }),
      ).toBe(1);
      const warning = log.lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => String(l.msg).startsWith("sessions listed and stored"));
      expect(warning).toMatchObject({ level: 40 });
      expect(String(warning?.window)).toContain(
        `[${new Date(T2 - 4 * HOUR).toISOString()}, ${new Date(T2).toISOString()})`,
      );
      expect(Number(warning?.stored)).toBe(Number(warning?.listed) + 1);
    } finally {
      await deps.api.close();
      await w.close();
    }
  });

  it("runs as `sessionhouse sync reconcile`", async () => {
    clock.set(T1);
    const config = await testConfig(
      { SESSIONHOUSE_API_URL: sim.url, SESSIONHOUSE_API_KEY: API_KEY },
      db.name,
    );
    const env = cleanEnv({
      SESSIONHOUSE_API_URL: sim.url,
      SESSIONHOUSE_API_KEY: API_KEY,
      SESSIONHOUSE_DATA_DIR: config.clickhouse.dataDir,
      CLICKHOUSE_DATABASE: config.clickhouse.database,
      CLICKHOUSE_URL: config.clickhouse.url,
      SESSIONHOUSE_PAGE_SIZE: "500",
      SESSIONHOUSE_WINDOW: "6h",
      SESSIONHOUSE_MAX_RPS: "1000",
      SESSIONHOUSE_LOG_LEVEL: "warn",
      SESSIONHOUSE_LOG_FORMAT: "json",
    });
    const iso = (ms: number) => new Date(ms).toISOString();
    const FROM = T1 - DAY;
    // The built CLI as a child refuses a range given twice, before it opens the data
    // directory (this process holds it: a child that opened it would fail otherwise).
    const both = await runCli(
      cli,
      ["sync", "reconcile", "--days", "2", "--from", iso(FROM)],
      env,
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("either --days or --from");

    // The sync and the reconciliation run the CLI's main in this process (cli-in-process.ts),
    // on a fresh migrated database: the same command, output and exit status
    // without a node and engine start each.
    await db.fresh(config);
    const w = await openWarehouse(config);
    const own: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) if (v !== undefined) own[k] = v;
    try {
      const synced = await mainInProcess(
        own,
        ...["sync", "sessions", "--from", iso(FROM), "--to", iso(T1)],
      );
      expect(synced.stderr).toBe("");
      expect(synced.status).toBe(0);
      const hidden = lateAt(FROM, T1, T1).map((f) => f.sessionId);
      expect(hidden.length).toBeGreaterThan(5);

      clock.set(T2);
      const r = await mainInProcess(
        own,
        ...["sync", "reconcile", "--from", iso(FROM), "--to", iso(T1)],
      );
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      expect(r.stdout).toContain(
        `reconcile: 4 windows, ${hidden.length} missing stored, 0 windows differing\n`,
      );

      const ids = await storedIds(w);
      expect(hidden.filter((id) => !ids.has(id))).toEqual([]);
      const runs = await select<{ job: string; status: string }>(
        w,
        "SELECT job, status FROM {db}.runs FINAL ORDER BY started_at",
      );
      expect(runs).toEqual([
        { job: SESSIONS_JOB, status: "succeeded" },
        { job: RECONCILE_JOB, status: "succeeded" },
      ]);
      // Only the backfill's checkpoint: reconciliation keeps none.
      expect((await readCheckpoints(w)).map((c) => c.stream)).toEqual([
        backfillStream(SESSIONS_STREAM, FROM, T1),
      ]);
    } finally {
      await w.close();
    }
  }, 180_000);
});

describe("a window the service cannot page", () => {
  it("does not keep the others from being reconciled: they are stored, then the run fails naming it", async () => {
    // Cursor cycles on one page in twenty: about four windows of ten pages in ten meet one.
    const looping = await testSimulator({
      faults: { rates: { cursorCycle: 0.05 }, seed: 5 },
    });
    const { config, w } = await freshWarehouse(looping.url, {
      SESSIONHOUSE_PAGE_SIZE: "50",
      SESSIONHOUSE_WINDOW: "6h",
    });
    try {
      const from = NOON - 2 * DAY;
      const err = await run(runDeps(config, w), RECONCILE_JOB, (ctx) =>
        reconcileSessions(ctx, { fromMs: from, toMs: NOON }),
      ).catch((e: unknown) => e as Error & { code?: string });
      expect(err).toBeInstanceOf(Error);
      const e = err as Error & { code?: string };
      expect(e.code).toBe("RECONCILE_INCOMPLETE");
      // The failed windows are named; every session of the other windows is stored.
      const named = [...e.message.matchAll(/\[([^,\]]+), ([^)\]]+)\)/g)].map(
        (m) => [Date.parse(m[1] as string), Date.parse(m[2] as string)],
      );
      expect(named.length).toBeGreaterThan(0);
      expect(named.length).toBeLessThan(8);
      const inFailed = (startMs: number) =>
        named.some(
          ([a, b]) => startMs >= (a as number) && startMs < (b as number),
        );
      const stored = await storedIds(w);
      const wanted = (await expectedSessions(looping, from, NOON)).filter(
        (s) => !inFailed(Date.parse(s.startTime as string)),
      );
      expect(wanted.length).toBeGreaterThan(100);
      expect(wanted.filter((s) => !stored.has(s.id as string))).toEqual([]);
    } finally {
      await w.close();
      await looping.close();
    }
  });
});
