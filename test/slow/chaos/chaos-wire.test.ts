// The wire lies: more than 100000 sessions and the default aggregation jobs, synced by the real
// CLI as a child process from a simulator with every classic fault AND every wire fault on
// (wrong shapes, `{}` aggregations, counts as strings, cursor loops, invalid UTF-8, huge records,
// impossible dates, vanished and late sessions, poisoned windows), SIGKILLed at seeded moments
// and restarted until each phase completes. Afterwards ClickHouse holds exactly what a
// fault-free twin of the simulator serves; the dead letters are exactly the records broken on
// purpose (every version served), and the poisoned windows exactly the windows broken on purpose.
//
// Phases, on one simulated clock shared by both simulators:
//   at T1  sync sessions --from T1-11d --to T1          (killed up to 8 times)
//          sync sessions --from T1-2h --to T1           (re-reads open sessions through GetSession)
//          sync aggregations --from T1-2d --to T1       (killed up to 5 times, then repeated until
//                                                        no window is pending)
//   at T2 = T1 + lateMs + 1h
//          sync reconcile --from T1-3d --to T1          (stores the late sessions, now listed)
//
// The embedded engine allows one process per data directory: this process opens the warehouse
// only after the last child exited (between runs it asks through `sessionhouse query`).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultAggregationJobs } from "../../../src/config/index.js";
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
  testDataDir,
} from "../../helpers/warehouse.js";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import {
  buildCli,
  cleanEnv,
  removeCli,
  runCli,
  startCli,
  type CliPackage,
  type CliResult,
} from "../../helpers/cli.js";
import {
  apiAggregationWindow,
  faultedDeadLetterDifferences,
  mapDifferences,
  readSessions,
  sessionDifferences,
  storedAggregationWindow,
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
/** 11 days at 10000 sessions a day: a little over 100000 in range. */
const SESSIONS_FROM = T1 - 11 * DAY;
const REFRESH_FROM = T1 - 2 * HOUR;
const RECONCILE_FROM = T1 - 3 * DAY;
const AGG_FROM = T1 - 2 * DAY;
/** Huge records are padded to this + 1 bytes; the exporter's record limit is this. */
const HUGE_RECORD_BYTES = 200_000;
const MAX_WINDOW_ATTEMPTS = 2;
/** Every classic fault at a moderate rate, every wire fault on; broken records rarer. */
const FAULTS = [
  "all=0.02",
  "badRecord=0.005",
  "seed=7",
  "slowMs=150",
  "wrong-shape=0.02",
  "empty-aggregation=0.02",
  "string-counts=0.1",
  "cursor-cycle=0.02",
  "bad-utf8=0.001",
  "huge-record=0.0003",
  "bad-dates=0.002",
  "vanished-session=0.1",
  "late-session=0.01",
  "bad-window=0.02",
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

/** mulberry32: a tiny seeded PRNG, so the kill schedule is the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19) + "Z";

let sim: Simulator;
let clean: Simulator;
let cli: CliPackage;
const database = freshDatabaseName();
const outputs: CliResult[] = [];

interface PhaseReport {
  lives: number;
  kills: number;
  failures: string[];
}

/**
 * Runs the command until `done` says so after a run that exited 0: the first `maxKills` lives
 * are SIGKILLed after a random delay in [minMs, maxMs) unless they finish first. A run may
 * fail under faults (its budget spent, a window not settled yet); failing more than
 * `maxFailures` times is a bug.
 */
async function untilComplete(
  args: string[],
  env: NodeJS.ProcessEnv,
  random: () => number,
  kill: { maxKills: number; minMs: number; maxMs: number },
  options: { maxFailures?: number; done?: () => Promise<boolean> } = {},
): Promise<PhaseReport> {
  const report: PhaseReport = { lives: 0, kills: 0, failures: [] };
  for (;;) {
    report.lives++;
    const run = startCli(cli, args, env);
    const delay = kill.minMs + random() * (kill.maxMs - kill.minMs);
    const timer =
      report.kills < kill.maxKills
        ? setTimeout(() => run.child.kill("SIGKILL"), delay)
        : undefined;
    const r = await run.result;
    clearTimeout(timer);
    outputs.push(r);
    if (r.signal === "SIGKILL") {
      report.kills++;
      continue;
    }
    if (r.code === 0 && (options.done === undefined || (await options.done())))
      return report;
    if (r.code !== 0)
      report.failures.push(
        `exit ${String(r.code)}: ${r.stderr.trim().split("\n").slice(0, 3).join(" | ")}`,
      );
    if (report.failures.length > (options.maxFailures ?? 3))
      throw new Error(
        `${args.join(" ")} keeps failing:\n${report.failures.join("\n")}`,
      );
    if (report.lives > 40) throw new Error(`${args.join(" ")} never completes`);
  }
}

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
    const env = cleanEnv({
      SESSIONHOUSE_API_URL: sim.url,
      SESSIONHOUSE_API_KEY: API_KEY,
      SESSIONHOUSE_DATA_DIR: testDataDir(),
      CLICKHOUSE_DATABASE: database,
      CLICKHOUSE_URL: process.env.CLICKHOUSE_URL,
      SESSIONHOUSE_PAGE_SIZE: "500",
      SESSIONHOUSE_WINDOW: "6h",
      // Three windows at once: checkpoints must stay in window order through kills and faults.
      SESSIONHOUSE_WINDOW_CONCURRENCY: "3",
      SESSIONHOUSE_MAX_RPS: "100",
      SESSIONHOUSE_REQUEST_TIMEOUT: "15s",
      SESSIONHOUSE_MAX_RECORD_BYTES: String(HUGE_RECORD_BYTES),
      SESSIONHOUSE_MAX_WINDOW_ATTEMPTS: String(MAX_WINDOW_ATTEMPTS),
      SESSIONHOUSE_LOG_LEVEL: "info",
      SESSIONHOUSE_LOG_FORMAT: "json",
    });
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
    const random = prng(KILL_SEED);
    const started = Date.now();

    // At T1: the sessions, then the open ones re-read one by one, then the aggregations.
    const sessions = await untilComplete(
      ["sync", "sessions", "--from", iso(SESSIONS_FROM), "--to", iso(T1)],
      env,
      random,
      { maxKills: 8, minMs: 500, maxMs: 6_000 },
      // Over 200 pages of 500, and more read again after each kill, with cursor cycles on two
      // pages in a hundred: about five runs are expected to stop at one (each resumes from the
      // checkpoint); how many depends on where the kills fall.
      { maxFailures: 12 },
    );
    const refresh = await untilComplete(
      ["sync", "sessions", "--from", iso(REFRESH_FROM), "--to", iso(T1)],
      env,
      random,
      { maxKills: 2, minMs: 300, maxMs: 2_000 },
    );
    const aggregations = await untilComplete(
      ["sync", "aggregations", "--from", iso(AGG_FROM), "--to", iso(T1)],
      env,
      random,
      { maxKills: 5, minMs: 500, maxMs: 4_000 },
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
    expect(atT1.size).toBeGreaterThanOrEqual(100_000);
    const hiddenAtT1 = sim
      .faultedSessions(SESSIONS_FROM, T1)
      .filter((f) => f.kind === "lateSession" && (f.listedFromMs ?? 0) > T1);
    const vanished = sim
      .faultedSessions(SESSIONS_FROM, REFRESH_FROM)
      .filter((f) => f.kind === "vanishedSession");

    // At T2 the late sessions are listed: reconciliation re-lists the last three days.
    clock.set(T2);
    const reconcile = await untilComplete(
      ["sync", "reconcile", "--from", iso(RECONCILE_FROM), "--to", iso(T1)],
      env,
      random,
      { maxKills: 2, minMs: 500, maxMs: 3_000 },
      // A reconciliation keeps no checkpoint: every run lists the three days again, and with
      // cursor cycles on two pages in a hundred most runs meet one somewhere.
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

      const differences: string[] = [];
      let windowsCompared = 0;
      for (const job of jobs) {
        const windows = planWindows(AGG_FROM, T1, job.windowMs);
        const firstBroken = windows.find((win) =>
          sim.isBrokenWindow(job.query ?? "", job.groupBy, win.startMs),
        );
        // The checkpoint moves only over stored (or skipped) windows.
        expect(
          (
            await readCheckpoint(
              w,
              backfillStream(aggregationName(job), AGG_FROM, T1),
            )
          )?.positionMs,
          job.name,
        ).toBe(firstBroken?.startMs ?? T1);
        for (const win of windows) {
          const at = `${job.name}@${iso(win.startMs)}`;
          const got = await storedAggregationWindow(
            w,
            job,
            win.startMs,
            win.endMs,
          );
          if (sim.isBrokenWindow(job.query ?? "", job.groupBy, win.startMs)) {
            if (
              got.numHits !== -1 ||
              got.histogram.size > 0 ||
              got.top.size > 0
            )
              differences.push(`${at}: poisoned but rows stored`);
            continue;
          }
          // Windows are closed at T1: the twin answers the same at T2.
          const want = await apiAggregationWindow(
            clean,
            job,
            win.startMs,
            win.endMs,
          );
          differences.push(
            ...mapDifferences(`${at} histogram`, got.histogram, want.histogram),
            ...mapDifferences(`${at} top`, got.top, want.top),
            ...(got.numHits === want.numHits
              ? []
              : [`${at} numHits: stored ${got.numHits}, API ${want.numHits}`]),
          );
          windowsCompared++;
        }
      }
      expect(differences.slice(0, 20)).toEqual([]);
      expect(windowsCompared).toBe(6 * 48 - brokenWindows.length);

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
    // About 7 minutes on the 2-core development machine under load: twice that.
  }, 900_000);
});
