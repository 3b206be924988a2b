// Windows on arrival, on the real engine: a rule reads the sessions stored since its checkpoint
// whatever their start; a session stored an hour late fires once, when it arrives; a session read
// again (a later fetched_at) never fires a second time; the window never passes the start of a run
// still writing, so nothing it stores later is skipped. The job of `run` records the shipped
// rules' hits.
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlaneApi } from "../../../src/api/control-plane.js";
import type { Config } from "../../../src/config/index.js";
import { evaluateRules } from "../../../src/detections/evaluate.js";
import { fixtureSession } from "../../../src/detections/fixtures.js";
import { loadRules, type Rule } from "../../../src/detections/rule.js";
import { withRun } from "../../../src/pipeline/context.js";
import { SessionWriter } from "../../../src/pipeline/session-writer.js";
import { pipelineJobs, planJobs } from "../../../src/scheduler/jobs.js";
import { createLogger } from "../../../src/util/logger.js";
import {
  readCheckpoint,
  recordRun,
} from "../../../src/warehouse/bookkeeping.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

const T = Date.UTC(2026, 0, 5, 12);
const MIN = 60_000;
let config: Config;
let w: Warehouse;
let rules: Rule[];

beforeAll(async () => {
  config = await testConfig();
  w = await migratedWarehouse(config);
  const dir = mkdtempSync(join(testTmpDir(), "detect-arrival-"));
  writeFileSync(
    join(dir, "postgres.yaml"),
    `id: postgres-sessions
title: Sessions as postgres
description: every session through the postgres account
severity: low
owner: tests
sql: |
  SELECT id AS session_id, start_time AS event_time, fetched_at AS arrived_at
  FROM {{sessions}} WHERE native_username = 'postgres'
fixtures:
  - { name: a, fires: true, sessions: [{ user: { native: { username: postgres } } }] }
  - { name: b, fires: false, sessions: [{}] }
`,
  );
  rules = loadRules([dir]);
}, 60_000);

afterAll(async () => {
  await w.close();
});

/**
 * Stores sessions as a sync stores them, fetched at `fetchedAtMs`, through the postgres account
 * unless a session names another.
 */
async function store(
  fetchedAtMs: number,
  ...sessions: {
    id: string;
    start: string;
    address?: string;
    native?: string;
  }[]
): Promise<void> {
  const api = ControlPlaneApi.fromConfig(config);
  try {
    await withRun(
      { config, api, warehouse: w, logger: createLogger({ level: "silent" }) },
      "test.store",
      async (ctx) => {
        const writer = new SessionWriter(ctx);
        await writer.add(
          sessions.map((s) => {
            const text = JSON.stringify(
              fixtureSession(
                {
                  startTime: s.start,
                  user: { native: { username: s.native ?? "postgres" } },
                  network: { clientIpAddress: s.address ?? "10.0.0.10" },
                },
                s.id,
              ),
            );
            return { text, value: JSON.parse(text) as unknown };
          }),
          fetchedAtMs,
        );
        await writer.drain();
      },
    );
  } finally {
    await api.close();
  }
}

/** A run of `job` as the runs table records it, with nothing counted yet. */
const runOf = (runId: string, job: string, startedAtMs: number) => ({
  runId,
  job,
  startedAtMs,
  pages: 0,
  rowsInserted: 0,
  deadLetters: 0,
  retries: 0,
  error: "",
});

/** The detections job as `run` schedules it, started now; resolves when its run ends. */
function detectionsJob(): () => Promise<void> {
  const plan = planJobs(config).find((p) => p.name === "detections");
  const api = ControlPlaneApi.fromConfig(config);
  const [job] = pipelineJobs(
    { config, api, warehouse: w, logger: createLogger({ level: "silent" }) },
    plan ? [plan] : [],
  );
  const idle = new AbortController().signal;
  const running = job?.run({ signal: idle, stopping: idle });
  return async () => {
    try {
      await running;
    } finally {
      await api.close();
    }
  };
}

const evaluate = (nowMs: number) =>
  evaluateRules(w, rules, {
    insert: { retries: 0 },
    initialLookbackMs: 3_600_000,
    nowMs,
  });

async function hits(): Promise<{ hit_key: string; event_time: string }[]> {
  return select(
    w,
    "SELECT hit_key, event_time FROM {db}.detection_hits FINAL ORDER BY hit_key",
  );
}

describe("windows on arrival", () => {
  it("fire once per session: on arrival, late or not, and never again on a re-read", async () => {
    await store(T, { id: "a", start: "2026-01-05T11:50:00Z" });
    const first = await evaluate(T + MIN);
    expect(first[0]?.hits).toBe(1);
    expect(
      (await readCheckpoint(w, "detections.postgres-sessions"))?.positionMs,
    ).toBe(T + MIN);

    // Started an hour before `a`, stored after the first evaluation: the next window has it.
    await store(T + 2 * MIN, { id: "late", start: "2026-01-05T10:50:00Z" });
    const second = await evaluate(T + 3 * MIN);
    expect(second[0]).toMatchObject({
      hits: 1,
      window: { fromMs: T + MIN, toMs: T + 3 * MIN },
    });

    // `a` read again: a new version arrives, nothing fires.
    await store(T + 4 * MIN, { id: "a", start: "2026-01-05T11:50:00Z" });
    const third = await evaluate(T + 5 * MIN);
    expect(third[0]?.hits).toBe(0);
    expect(await hits()).toEqual([
      { hit_key: "a", event_time: "2026-01-05 11:50:00.000" },
      { hit_key: "late", event_time: "2026-01-05 10:50:00.000" },
    ]);
  });

  it("stop at the start of a run still writing, and read what it stored once it ended", async () => {
    const run = runOf("run-writing", "sessions", T + 6 * MIN);
    // The run's own clock is the wall clock's: the test's instants are in the past, so the
    // evaluation's `now` is too, and only the run bounds the window.
    await recordRun(w, { ...run, status: "running" }, { retries: 0 });
    await store(T + 7 * MIN, {
      id: "during-run",
      start: "2026-01-05T12:05:00Z",
    });
    // What the run stored before the evaluation is read at once; the checkpoint stops at the
    // run's start all the same.
    const during = await evaluate(T + 8 * MIN);
    expect(during[0]).toMatchObject({ hits: 1, window: { toMs: T + 6 * MIN } });
    expect(
      (await readCheckpoint(w, "detections.postgres-sessions"))?.positionMs,
    ).toBe(T + 6 * MIN);
    // Read by the run before that evaluation, stored after it: the next window has it.
    await store(T + 7.5 * MIN, {
      id: "stored-late-in-run",
      start: "2026-01-05T12:06:00Z",
    });

    await recordRun(
      w,
      { ...run, status: "succeeded", finishedAtMs: T + 9 * MIN },
      { retries: 0 },
    );
    const after = await evaluate(T + 10 * MIN);
    expect(after[0]).toMatchObject({
      hits: 1,
      window: { fromMs: T + 6 * MIN, toMs: T + 10 * MIN },
    });
    expect((await hits()).map((h) => h.hit_key)).toEqual([
      "a",
      "during-run",
      "late",
      "stored-late-in-run",
    ]);
  });

  it("record a window of thousands of hits once, their keys more than a URL holds", async () => {
    // 10,000 sessions with ids of 120 characters: their keys quoted are more than 1 MiB, a
    // request line no server takes.
    const many = Array.from({ length: 10_000 }, (_, i) => ({
      id: `bulk-${String(i).padStart(5, "0")}-${"k".repeat(109)}`,
      start: new Date(T + 11 * MIN - (i % 600) * 1000).toISOString(),
    }));
    await store(T + 11 * MIN, ...many);
    expect((await evaluate(T + 12 * MIN))[0]?.hits).toBe(10_000);
    // All read again: nothing fires a second time.
    await store(T + 13 * MIN, ...many);
    expect((await evaluate(T + 14 * MIN))[0]?.hits).toBe(0);
    const [n] = await select<{ n: string }>(
      w,
      "SELECT count() AS n FROM {db}.detection_hits FINAL WHERE startsWith(hit_key, 'bulk-')",
    );
    expect(Number(n?.n)).toBe(10_000);
  });

  it("read past a run that stores no sessions: an aggregation backfill holds no session rule back", async () => {
    const backfill = runOf(
      "run-aggregation-backfill",
      "aggregations.daily",
      T + 16 * MIN,
    );
    await recordRun(w, { ...backfill, status: "running" }, { retries: 0 });
    await store(T + 17 * MIN, {
      id: "beside-backfill",
      start: "2026-01-05T12:16:00Z",
    });
    const during = await evaluate(T + 18 * MIN);
    expect(during[0]).toMatchObject({
      hits: 1,
      window: { toMs: T + 18 * MIN },
    });
    await recordRun(
      w,
      { ...backfill, status: "succeeded", finishedAtMs: T + 19 * MIN },
      { retries: 0 },
    );
  });
  it("fire on a session read again by every sessions run that overlaps the evaluation", async () => {
    // The sessions job re-reads its lookback every minute, on the tick the detections share: the
    // latest read of a session is then after the window's end by the time the window is read.
    const ticks = [20, 22, 24];
    for (const [i, tick] of ticks.entries()) {
      const run = runOf(`run-reread-${i}`, "sessions", T + tick * MIN);
      await recordRun(w, { ...run, status: "running" }, { retries: 0 });
      // Read first on the first tick, and again on each later one, always before the evaluation.
      await store(T + tick * MIN + 500, {
        id: "re-read",
        start: "2026-01-05T12:19:30Z",
      });
      const result = await evaluate(T + tick * MIN + 1_000);
      expect(result[0]?.window?.toMs).toBe(T + tick * MIN);
      await recordRun(
        w,
        { ...run, status: "succeeded", finishedAtMs: T + tick * MIN + 800 },
        { retries: 0 },
      );
    }
    expect((await hits()).map((h) => h.hit_key)).toContain("re-read");
  });
});

describe("the detections job of run", () => {
  it("is scheduled, and records the hits of the shipped rules over what arrived", async () => {
    const plan = planJobs(config).find((p) => p.name === "detections");
    expect(plan).toMatchObject({ kind: "detections", schedule: "* * * * *" });
    // A session from a public address, stored a minute ago, of a person last active in January:
    // external-address-session, public-address-logon and access-after-quiet-spell fire. It goes
    // through an unprivileged account: its start is the wall clock's, and through postgres outside
    // working hours privileged-native-off-hours would fire too.
    await store(Date.now() - 60_000, {
      id: "public",
      start: new Date(Date.now() - 600_000).toISOString(),
      address: "198.51.100.7",
      native: "analyst",
    });
    await detectionsJob()();
    const rows = await select<{ rule_id: string; hit_key: string }>(
      w,
      "SELECT rule_id, hit_key FROM {db}.detection_hits FINAL WHERE hit_key = 'public' ORDER BY rule_id",
    );
    expect(rows).toEqual([
      { rule_id: "access-after-quiet-spell", hit_key: "public" },
      { rule_id: "external-address-session", hit_key: "public" },
      { rule_id: "public-address-logon", hit_key: "public" },
    ]);
    const [run] = await select<{ status: string }>(
      w,
      "SELECT status FROM {db}.runs FINAL WHERE job = 'detections'",
    );
    expect(run?.status).toBe("succeeded");
  });
  it("waits for a sessions run of the same tick to end, and reads what it stored", async () => {
    const startedAtMs = Date.now();
    const run = runOf("run-same-tick", "sessions", startedAtMs);
    await recordRun(w, { ...run, status: "running" }, { retries: 0 });
    const ended = detectionsJob();
    // The sessions run stores a session a second after both started, then ends.
    await new Promise((r) => setTimeout(r, 1_000));
    await store(Date.now(), {
      id: "same-tick",
      start: new Date(Date.now() - 30_000).toISOString(),
      address: "198.51.100.8",
      native: "analyst",
    });
    await recordRun(
      w,
      { ...run, status: "succeeded", finishedAtMs: Date.now() },
      { retries: 0 },
    );
    await ended();
    // The window reached past the run's start: it was read after the run ended.
    const cp = await readCheckpoint(w, "detections.public-address-logon");
    expect(cp?.positionMs).toBeGreaterThan(startedAtMs + 1_000);
    const rows = await select<{ rule_id: string }>(
      w,
      "SELECT rule_id FROM {db}.detection_hits FINAL WHERE hit_key = 'same-tick' ORDER BY rule_id",
    );
    expect(rows.map((r) => r.rule_id)).toContain("public-address-logon");
  });
});
