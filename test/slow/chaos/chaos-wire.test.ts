// The wire lies: a few days of sessions (CI: 3 days, over 21000; CHAOS_DAYS=11 gives the full run
// of over 100000) and the default aggregation jobs, synced by the real CLI as a child process from a simulator with every classic fault AND every wire fault on
// (wrong shapes, `{}` aggregations, counts as strings, cursor loops, invalid UTF-8, huge records,
// impossible dates, vanished and late sessions, poisoned windows), SIGKILLed at seeded moments
// and restarted until each phase completes. Afterwards ClickHouse holds exactly what a
// fault-free twin of the simulator serves; the dead letters are exactly the records broken on
// purpose (every version served), and the poisoned windows exactly the windows broken on purpose.
//
// Phases, on one simulated clock shared by both simulators:
//   at T1  sync sessions --from T1-3d --to T1           (CHAOS_DAYS days, CI 3; killed
//                                                        CHAOS_ROUNDS times, CI 4, the full run
//                                                        8: the first life between two
//                                                        migrations, the second inside its run)
//          sync sessions --from T1-2h --to T1           (re-reads open sessions through GetSession;
//                                                        killed once)
//          sync aggregations --from T1-12h --to T1      (killed 5/8 as often, the first life
//                                                        inside its run, then repeated until
//                                                        no window is pending)
//   at T2 = T1 + lateMs + 1h
//          sync reconcile --from T1-6h --to T1          (stores the late sessions, now listed;
//                                                        killed once)
//
// What CI covers, and the run asserts: every wire fault kind met (WIRE_FAULT_KINDS: wrongShape,
// emptyAggregation, stringCounts, cursorCycle, badUtf8, hugeRecord, vanishedSession,
// lateSession, badDates, badWindow) beside the classic ones; kills before a run started (the
// engine starting, migrating a fresh data directory) and inside runs, in the sessions and the
// aggregations phase; the refresh and the reconciliation killed at random moments too.
//
// The embedded engine allows one process per data directory: this process opens the warehouse
// only after the last child exited (between runs it asks through `sessionhouse query`).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  defaultAggregationJobs,
  type AggregationJobConfig,
} from "../../../src/config/index.js";
import {
  FaultInjector,
  parseFaultSpec,
  SimClock,
  startSimulator,
  WIRE_FAULT_KINDS,
  type Simulator,
  type SimulatorOptions,
} from "../../../src/simulator/index.js";
import { planWindows } from "../../../src/sources/windows.js";
import { readCheckpoint } from "../../../src/warehouse/bookkeeping.js";
import { API_KEY, NOON } from "../../helpers/simulator.js";
import {
  freshDatabaseName,
  select,
  testConfig,
} from "../../helpers/warehouse.js";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import {
  buildCli,
  removeCli,
  runCli,
  type CliPackage,
  type CliResult,
} from "../../helpers/cli.js";
import {
  aggregationDifferences,
  aggregationsKillPlan,
  chaosEnv,
  envCount,
  expectKillsFell,
  fastRetriesConfig,
  killedSync,
  prng,
  sessionsKillPlan,
  type ChaosRun,
} from "../../helpers/chaos.js";
import {
  faultedDeadLetterDifferences,
  readSessions,
  sessionDifferences,
  storedDeadLetters,
  storedSessions,
  type WireRecord,
} from "../../helpers/expected.js";
import {
  aggregationName,
  backfillStream,
  RECONCILE_JOB,
  SESSIONS_JOB,
  SESSIONS_STREAM,
} from "../../../src/pipeline/names.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const LATE_MS = 3 * HOUR;
const T1 = NOON;
const T2 = T1 + LATE_MS + HOUR;
/** Days of sessions at 10000 a day: CI 3 (over 21000 in range), the full run 11 (over 100000). */
const DAYS = envCount("CHAOS_DAYS", 3, 3);
/** Kills in the sessions phase; the aggregations phase gets five eighths of them, at least 2. */
const ROUNDS = envCount("CHAOS_ROUNDS", 4, 2);
const SESSIONS_FROM = T1 - DAYS * DAY;
const REFRESH_FROM = T1 - 2 * HOUR;
/** The late sessions start within LATE_MS of T1: twice that holds them all. */
const RECONCILE_FROM = T1 - 2 * LATE_MS;
/**
 * Hours of aggregation windows (an hour each, six jobs): 12, which hold five poisoned windows of
 * three jobs, each way a window is broken among them (bad-window=0.04, seed 7).
 */
const AGG_HOURS = 12;
const AGG_FROM = T1 - AGG_HOURS * HOUR;
/** Huge records are padded to this + 1 bytes; the exporter's record limit is this. */
const HUGE_RECORD_BYTES = 200_000;
const MAX_WINDOW_ATTEMPTS = 2;
/**
 * Every classic fault at a moderate rate, every wire fault on; broken records rarer. A duplicate
 * or an expired cursor can only meet a page after a window's first (some 70 in CI's run), a
 * truncation only a request no other response fault took: those at higher rates, so that each
 * is met on every run (the run asserts it), as the full run's 100000 sessions met them at 0.02.
 * The faults of aggregation answers (empty, counts as strings) at rates that meet each several
 * times in the 72 windows.
 */
const FAULTS = [
  "all=0.02",
  "duplicate=0.12",
  "expiredCursor=0.08",
  "truncate=0.04",
  "badRecord=0.005",
  "seed=7",
  "slowMs=150",
  "wrong-shape=0.03",
  "empty-aggregation=0.08",
  "string-counts=0.2",
  "cursor-cycle=0.02",
  "bad-utf8=0.001",
  "huge-record=0.0003",
  "bad-dates=0.002",
  "vanished-session=0.1",
  "late-session=0.01",
  "bad-window=0.04",
  `hugeRecordBytes=${HUGE_RECORD_BYTES}`,
  `lateMs=${LATE_MS}`,
].join(",");
/** Seed of the kill moments. */
const KILL_SEED = 20261123;

/** One clock for both simulators: moving it to T2 moves the fault-free twin too. */
const clock = SimClock.fixed(T1);

const simOptions = (faults: boolean): SimulatorOptions => ({
  port: 0,
  seed: 42,
  apiKey: API_KEY,
  clock,
  sessionsPerDay: 10_000,
  historyDays: 30,
  // A short rate-limit window: an injected 429 says "nothing remains until the reset".
  rateLimit: { limit: 1_000_000, windowMs: 2_000 },
  ...(faults ? { faults: parseFaultSpec(FAULTS) } : {}),
});

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19) + "Z";

let sim: Simulator;
let clean: Simulator;
let cli: CliPackage;
const database = freshDatabaseName();
const outputs: CliResult[] = [];

describe("chaos on the wire: every fault on, SIGKILL at random moments", () => {
  beforeAll(async () => {
    [sim, clean, cli] = await Promise.all([
      startSimulator(simOptions(true)),
      startSimulator(simOptions(false)),
      buildCli(),
    ]);
  }, 120_000);

  afterAll(async () => {
    await sim?.close();
    await clean?.close();
    removeCli(cli);
  });

  it("ends with exactly the service's data; dead letters and poisoned windows exactly what was broken", async () => {
    const env = chaosEnv(sim, database, {
      // Three windows at once: checkpoints must stay in window order through kills and faults.
      SESSIONHOUSE_WINDOW_CONCURRENCY: "3",
      SESSIONHOUSE_MAX_RECORD_BYTES: String(HUGE_RECORD_BYTES),
      SESSIONHOUSE_MAX_WINDOW_ATTEMPTS: String(MAX_WINDOW_ATTEMPTS),
    });
    const run: ChaosRun = {
      cli,
      outputs,
      configFile: fastRetriesConfig(),
      env,
      random: prng(KILL_SEED),
    };
    /** A count through the CLI (no second process may open the embedded engine). */
    const countOf = async (sql: string): Promise<number> => {
      const r = await runCli(
        cli,
        ["query", sql, "--format", "JSONEachRow"],
        env,
      );
      if (r.code !== 0) throw new Error(`query failed: ${r.stderr}`);
      const line = r.stdout.trim().split("\n").pop() ?? "{}";
      return Number((JSON.parse(line) as { n?: string | number }).n);
    };
    const started = Date.now();

    // At T1: the sessions, then the open ones re-read one by one, then the aggregations.
    const sessions = await killedSync(
      run,
      "sessions",
      SESSIONS_FROM,
      T1,
      sessionsKillPlan(ROUNDS),
      // About 20 pages of 500 a day, and more read again after each kill, with cursor cycles on
      // two pages in a hundred: some runs are expected to stop at one (each resumes from the
      // checkpoint); how many depends on the days and where the kills fall.
      { maxFailures: 12 },
    );
    const refresh = await killedSync(run, "sessions", REFRESH_FROM, T1, {
      maxKills: 1,
      minMs: 300,
      maxMs: 2_000,
    });
    const aggregations = await killedSync(
      run,
      "aggregations",
      AGG_FROM,
      T1,
      aggregationsKillPlan(ROUNDS),
      {
        // Each run retries pending windows; after MAX_WINDOW_ATTEMPTS failed fetches a window
        // is poisoned and no longer pending.
        maxFailures: 20,
        done: async () =>
          (await countOf(
            "SELECT count() AS n FROM stream_windows FINAL WHERE state = 'pending'",
          )) === 0,
      },
    );
    // What the service holds at T1 (read before the clock moves).
    const atT1 = await readSessions(clean, SESSIONS_FROM, T1);
    // The three days before Monday noon hold 21746 sessions (a weekend is quieter), the 11 days
    // of the full run 103384.
    expect(atT1.size).toBeGreaterThanOrEqual(
      DAYS >= 11 ? 100_000 : DAYS * 7_000,
    );
    const hiddenAtT1 = sim
      .faultedSessions(SESSIONS_FROM, T1)
      .filter((f) => f.kind === "lateSession" && (f.listedFromMs ?? 0) > T1);
    const vanished = sim
      .faultedSessions(SESSIONS_FROM, REFRESH_FROM)
      .filter((f) => f.kind === "vanishedSession");

    // At T2 the late sessions are listed: reconciliation re-lists the last day.
    clock.set(T2);
    const reconcile = await killedSync(
      run,
      "reconcile",
      RECONCILE_FROM,
      T1,
      { maxKills: 1, minMs: 500, maxMs: 3_000 },
      // A reconciliation keeps no checkpoint: every run lists the day again, and with cursor
      // cycles on two pages in a hundred many runs meet one somewhere.
      { maxFailures: 20 },
    );
    const syncMs = Date.now() - started;

    // Expected: every session of [SESSIONS_FROM, T1) as at T1, except those the reconciliation
    // listed again at T2 (the late ones among them): those are stored as they were at T2.
    const atT2 = await readSessions(clean, RECONCILE_FROM, T1);
    const expected = new Map<string, WireRecord>(atT1);
    for (const [id, record] of atT2) expected.set(id, record);
    for (const f of hiddenAtT1) expect(atT2.has(f.sessionId)).toBe(true);
    expect(hiddenAtT1.length).toBeGreaterThan(5);
    expect(vanished.length).toBeGreaterThan(0);

    // Every record broken on purpose, recomputed independently of what was served.
    const injector = new FaultInjector(parseFaultSpec(FAULTS));
    const faulted = sim.faultedRecords();
    const faultedIds = new Set(faulted.map((f) => f.sessionId));
    expect(
      [...expected.keys()]
        .filter((id) => injector.recordFault(id) !== undefined)
        .sort(),
    ).toEqual([...faultedIds].sort());
    for (const kind of [
      "badUtf8",
      "hugeRecord",
      "badDates",
      "missingId",
    ] as const)
      expect(
        faulted.some((f) => f.kind === kind),
        kind,
      ).toBe(true);

    // Poisoned windows, recomputed: the windows of each default job broken on purpose.
    const jobs = defaultAggregationJobs();
    const brokenWindows = jobs.flatMap((job) =>
      planWindows(AGG_FROM, T1, job.windowMs)
        .filter((w) =>
          sim.isBrokenWindow(job.query ?? "", job.groupBy, w.startMs),
        )
        .map((w) => `${job.name}@${iso(w.startMs)}`),
    );
    expect(brokenWindows.length).toBeGreaterThan(0);
    // Each way a window is broken was served (and so poisoned).
    expect(new Set(sim.brokenWindows().map((b) => b.variant))).toEqual(
      new Set(["missingAggregations", "negativeNumHits", "fractionalCount"]),
    );

    const config = await testConfig({}, database);
    const w: Warehouse = await openWarehouse(config);
    try {
      const { rows, finalRows } = await storedSessions(w);
      expect(finalRows, "one row per session after FINAL").toBe(rows.size);
      expect(
        sessionDifferences(expected, rows, faultedIds).slice(0, 20),
      ).toEqual([]);
      expect(rows.size).toBe(expected.size - faultedIds.size);
      // A version of a record served in both phases is dead-lettered by each job that read it.
      const dead = new Map(
        [
          ...(await storedDeadLetters(w, SESSIONS_JOB)),
          ...(await storedDeadLetters(w, RECONCILE_JOB)),
        ].map((d) => [d.raw, d]),
      );
      expect(
        faultedDeadLetterDifferences([...dead.values()], faulted).slice(0, 20),
      ).toEqual([]);
      expect(
        (
          await readCheckpoint(
            w,
            backfillStream(SESSIONS_STREAM, SESSIONS_FROM, T1),
          )
        )?.positionMs,
      ).toBe(T1);

      // Poisoned windows: exactly the broken ones, in stream_windows, nothing stored for them.
      const poisoned = await select<{ job: string; ws: string }>(
        w,
        "SELECT job, toString(window_start) AS ws FROM {db}.stream_windows FINAL WHERE state = 'poisoned'",
      );
      expect(
        poisoned.map((p) => `${p.job}@${p.ws.replace(" ", "T")}Z`).sort(),
      ).toEqual([...brokenWindows].sort());

      const broken = (job: AggregationJobConfig, startMs: number) =>
        sim.isBrokenWindow(job.query ?? "", job.groupBy, startMs);
      for (const job of jobs) {
        const firstBroken = planWindows(AGG_FROM, T1, job.windowMs).find(
          (win) => broken(job, win.startMs),
        );
        // The checkpoint moves only over stored (or skipped) windows: none is written when the
        // range's first window is poisoned (policies_by_name_status's).
        const cp = await readCheckpoint(
          w,
          backfillStream(aggregationName(job), AGG_FROM, T1),
        );
        expect(cp?.positionMs ?? AGG_FROM, job.name).toBe(
          firstBroken?.startMs ?? T1,
        );
      }
      // Windows are closed at T1: the twin answers the same at T2.
      const { differences, compared } = await aggregationDifferences(
        w,
        clean,
        jobs,
        { fromMs: AGG_FROM, toMs: T1 },
        broken,
      );
      expect(differences.slice(0, 20)).toEqual([]);
      expect(compared).toBe(6 * AGG_HOURS - brokenWindows.length);

      const runs = await select<{ status: string; n: string; retries: string }>(
        w,
        "SELECT status, count() AS n, sum(retries) AS retries FROM {db}.runs FINAL GROUP BY status ORDER BY status",
      );
      const logged = (msg: string) =>
        outputs.reduce(
          (n, o) => n + o.logs.filter((l) => l.msg === msg).length,
          0,
        );
      const faults = sim.stats().faults;
      const phases = [sessions, refresh, aggregations, reconcile];
      const summary = {
        sessions: rows.size,
        deadLetters: faulted.length,
        lateSessionsReconciled: hiddenAtT1.length,
        vanishedSessions: vanished.length,
        poisonedWindows: brokenWindows.length,
        kills: phases.reduce((n, p) => n + p.kills, 0),
        killsBeforeRun: phases.reduce((n, p) => n + p.killsBeforeRun, 0),
        killsInRun: phases.reduce((n, p) => n + p.killsInRun, 0),
        lives: phases.reduce((n, p) => n + p.lives, 0),
        failedRuns: phases.flatMap((p) => p.failures),
        faults: {
          total: Object.values(faults).reduce((a, b) => a + b, 0),
          ...faults,
        },
        retries: {
          recordedInRuns: runs.reduce((n, r) => n + Number(r.retries), 0),
          apiRetriesLogged: logged("api call failed, retrying"),
        },
        runs: Object.fromEntries(runs.map((r) => [r.status, Number(r.n)])),
        syncSeconds: Math.round(syncMs / 1000),
      };
      console.log(`chaos-wire summary: ${JSON.stringify(summary, null, 2)}`);
      expect(summary.kills).toBeGreaterThanOrEqual(5);
      expectKillsFell(sessions, aggregations, ROUNDS);
      for (const kind of WIRE_FAULT_KINDS)
        expect(faults[kind] ?? 0, kind).toBeGreaterThan(0);
      for (const kind of Object.keys(faults))
        expect(faults[kind], kind).toBeGreaterThan(0);
      // Every vanished session was asked for, answered not_found, and kept its listed state.
      expect(faults.vanishedSession).toBeGreaterThanOrEqual(vanished.length);
      for (const v of vanished)
        expect(rows.get(v.sessionId)?.session_status, v.sessionId).toMatch(
          /^(active|idle)$/,
        );
      for (const o of outputs)
        expect(o.stdout + o.stderr).not.toContain(API_KEY);
    } finally {
      await w.close();
    }
  }, 900_000);
});
