// The scheduler's lifecycle with fake timers: ticks on the cron schedule, no overlap (skipped
// ticks counted), the concurrency limit, and a shutdown that runs once and aborts at the deadline.
import {
  afterEach,
  beforeEach,
  describe,
  expect,
  it,
  onTestFinished,
  vi,
} from "vitest";
import { ConfigError } from "../../../src/config/index.js";
import {
  Scheduler,
  type RunControl,
  type ScheduledJob,
  type SchedulerObserver,
} from "../../../src/scheduler/index.js";
import { memoryLogger } from "../../helpers/logs.js";

const START = Date.UTC(2026, 10, 16, 12, 0, 0);
const EVERY_SECOND = "* * * * * *";

/** A job whose runs stay open until the test ends them. */
function controlledJob(
  name: string,
  schedule = EVERY_SECOND,
  extra: Partial<ScheduledJob> = {},
) {
  const runs: Array<{
    control: RunControl;
    finish: () => void;
    fail: (err: Error) => void;
  }> = [];
  const job: ScheduledJob = {
    name,
    schedule,
    ...extra,
    run: (control) =>
      new Promise<void>((resolve, reject) => {
        runs.push({ control, finish: resolve, fail: reject });
      }),
  };
  return { job, runs };
}

function recorder() {
  const skipped: Array<{ job: string; reason: string }> = [];
  const deadlines: string[] = [];
  const successes: string[] = [];
  const observer: SchedulerObserver = {
    onTickSkipped: (e) => skipped.push(e),
    onRunDeadline: (e) => deadlines.push(e.job),
    onJobSuccess: (e) => successes.push(e.job),
  };
  return { observer, skipped, deadlines, successes };
}

let scheduler: Scheduler | undefined;

beforeEach(() => {
  vi.useFakeTimers({
    now: START,
    toFake: [
      "setTimeout",
      "clearTimeout",
      "setInterval",
      "clearInterval",
      "Date",
    ],
  });
});

afterEach(async () => {
  const s = scheduler;
  scheduler = undefined;
  if (s) {
    const done = s.shutdown();
    await vi.runAllTimersAsync();
    await done;
  }
  vi.useRealTimers();
});

function make(
  jobs: ScheduledJob[],
  options: {
    max?: number;
    deadlineMs?: number;
    graceMs?: number;
    observer?: SchedulerObserver;
  } = {},
) {
  const log = memoryLogger();
  scheduler = new Scheduler({
    jobs,
    maxConcurrentJobs: options.max ?? 4,
    shutdownDeadlineMs: options.deadlineMs ?? 30_000,
    abortGraceMs: options.graceMs ?? 5_000,
    logger: log.logger,
    observer: options.observer,
  });
  return { scheduler, log };
}

function logLines(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("Scheduler", () => {
  it("runs a job on every tick of its schedule, in UTC", async () => {
    let count = 0;
    const { scheduler: s } = make([
      {
        name: "quick",
        schedule: EVERY_SECOND,
        run: () => Promise.resolve(void count++),
      },
    ]);
    s.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(count).toBe(5);
    const [state] = s.jobs();
    expect(state?.runs).toBe(5);
    expect(state?.skippedTicks).toBe(0);
    expect(state?.lastSuccessMs).toBe(START + 5_000);
    expect(state?.nextRunMs).toBe(START + 6_000);
  });

  it("reads the schedule in UTC", async () => {
    // 12:00 UTC every day, even with the process in another zone.
    const zone = process.env.TZ;
    process.env.TZ = "America/New_York";
    onTestFinished(() => {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    });
    expect(new Date(START).getHours()).toBe(7);
    let firedAt: number | undefined;
    const { scheduler: s } = make([
      {
        name: "noon",
        schedule: "0 0 12 * * *",
        run: () => Promise.resolve(void (firedAt = Date.now())),
      },
    ]);
    s.start();
    expect(s.jobs()[0]?.nextRunMs).toBe(START + 86_400_000);
    await vi.advanceTimersByTimeAsync(86_400_000);
    expect(firedAt).toBe(START + 86_400_000);
  });

  it("never overlaps a job with itself: ticks during a run are skipped and counted", async () => {
    const { job, runs } = controlledJob("slow");
    const rec = recorder();
    const { scheduler: s, log } = make([job], { observer: rec.observer });
    s.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(runs).toHaveLength(1);
    expect(s.jobs()[0]?.skippedTicks).toBe(4);
    expect(rec.skipped).toEqual(
      Array.from({ length: 4 }, () => ({ job: "slow", reason: "running" })),
    );
    // One warning while it happens, one with the count when the run ends — not one per tick.
    let warns = logLines(log.text()).filter((l) => l.level === 40);
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatchObject({
      job: "slow",
      skipped: 1,
      reason: "running",
    });

    runs[0]?.finish();
    await vi.advanceTimersByTimeAsync(0);
    warns = logLines(log.text()).filter((l) => l.level === 40);
    expect(warns).toHaveLength(2);
    expect(warns[1]).toMatchObject({ job: "slow", skipped: 4 });

    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toHaveLength(2);
    expect(s.jobs()[0]?.phase).toBe("running");
  });

  it("keeps at most maxConcurrentJobs running; a tick without a slot waits its turn", async () => {
    const a = controlledJob("a");
    const b = controlledJob("b");
    const c = controlledJob("c");
    const rec = recorder();
    const { scheduler: s } = make([a.job, b.job, c.job], {
      max: 2,
      observer: rec.observer,
    });
    s.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect([a.runs.length, b.runs.length, c.runs.length]).toEqual([1, 1, 0]);
    expect(s.jobs().map((j) => j.phase)).toEqual([
      "running",
      "running",
      "waiting",
    ]);

    // While waiting, c's own ticks are skipped (its queued tick stays the only one).
    await vi.advanceTimersByTimeAsync(2_000);
    expect(c.runs).toHaveLength(0);
    expect(rec.skipped.filter((e) => e.job === "c")).toEqual([
      { job: "c", reason: "waiting" },
      { job: "c", reason: "waiting" },
    ]);

    a.runs[0]?.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(c.runs).toHaveLength(1);
    expect(s.jobs().map((j) => j.phase)).toEqual([
      "idle",
      "running",
      "running",
    ]);

    // a's next tick finds both slots taken and waits.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(s.jobs().map((j) => j.phase)).toEqual([
      "waiting",
      "running",
      "running",
    ]);
    b.runs[0]?.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(a.runs).toHaveLength(2);
  });

  it("keeps a slot for the live jobs: two long backfills never hold every slot, and a waiting live job starts first", async () => {
    const HOURLY = "0 0 * * * *";
    const backfillA = controlledJob("aggregations.a", HOURLY);
    const backfillB = controlledJob("aggregations.b", HOURLY);
    const other = controlledJob("users", HOURLY);
    const sessions = controlledJob("sessions", EVERY_SECOND, { live: true });
    const detections = controlledJob("detections", EVERY_SECOND, {
      live: true,
    });
    const { scheduler: s } = make(
      [backfillA.job, backfillB.job, other.job, sessions.job, detections.job],
      { max: 2 },
    );
    s.start();
    // The two backfills and the other job are due at once: one of them runs, the others wait.
    for (const name of ["aggregations.a", "aggregations.b", "users"])
      s.trigger(name);
    const phases = () =>
      Object.fromEntries(s.jobs().map((j) => [j.job, j.phase]));
    expect(phases()).toMatchObject({
      "aggregations.a": "running",
      "aggregations.b": "waiting",
      users: "waiting",
    });
    // The live jobs' ticks find the kept slot; the second waits for it, not for a backfill.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sessions.runs).toHaveLength(1);
    expect(phases()).toMatchObject({
      sessions: "running",
      detections: "waiting",
    });
    sessions.runs[0]?.finish();
    await vi.advanceTimersByTimeAsync(0);
    // Detections waited behind sessions only, and goes before the backfills queued earlier.
    expect(detections.runs).toHaveLength(1);
    expect(phases()).toMatchObject({
      "aggregations.b": "waiting",
      users: "waiting",
    });
    // At a limit of 1, a live job runs beside the one other job.
    const solo = controlledJob("aggregations.solo", HOURLY);
    const live = controlledJob("sessions", EVERY_SECOND, { live: true });
    const one = new Scheduler({
      jobs: [solo.job, live.job],
      maxConcurrentJobs: 1,
      shutdownDeadlineMs: 1_000,
      logger: memoryLogger().logger,
    });
    one.start();
    one.trigger("aggregations.solo");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(live.runs).toHaveLength(1);
    expect(one.jobs().map((j) => j.phase)).toEqual(["running", "running"]);
    solo.runs[0]?.finish();
    live.runs[0]?.finish();
    await one.shutdown();
  });

  it("records a failed run and runs the job again on the next tick", async () => {
    const { job, runs } = controlledJob("flaky");
    const { scheduler: s } = make([job]);
    s.start();
    await vi.advanceTimersByTimeAsync(1_000);
    runs[0]?.fail(new Error("boom"));
    await vi.advanceTimersByTimeAsync(0);
    expect(s.jobs()[0]).toMatchObject({
      phase: "idle",
      lastError: "boom",
      lastSuccessMs: undefined,
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toHaveLength(2);
    runs[1]?.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(s.jobs()[0]).toMatchObject({
      lastError: undefined,
      lastSuccessMs: START + 2_000,
    });
  });

  it("aborts a run that exceeds its deadline", async () => {
    const { job, runs } = controlledJob("long", "0 * * * * *", {
      deadlineMs: 10_000,
    });
    const rec = recorder();
    const { scheduler: s } = make([job], { observer: rec.observer });
    s.start();
    await vi.advanceTimersByTimeAsync(60_000);
    const run = runs[0];
    expect(run?.control.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(run?.control.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(run?.control.signal.aborted).toBe(true);
    expect(rec.deadlines).toEqual(["long"]);
    run?.fail(new Error("aborted"));
    await vi.advanceTimersByTimeAsync(0);
    expect(s.jobs()[0]?.phase).toBe("idle");
  });

  it("shutdown runs once, stops scheduling, and lets a run that stops at a safe point end without an abort", async () => {
    const { job, runs } = controlledJob("polite");
    const { scheduler: s } = make([job]);
    s.start();
    await vi.advanceTimersByTimeAsync(1_000);
    const run = runs[0];
    run?.control.stopping.addEventListener("abort", () => run.finish());

    const first = s.shutdown();
    expect(s.shutdown()).toBe(first);
    expect(s.stopping).toBe(true);
    expect(run?.control.stopping.aborted).toBe(true);
    await first;
    expect(run?.control.signal.aborted).toBe(false);
    expect(s.jobs()[0]?.nextRunMs).toBeUndefined();

    await vi.advanceTimersByTimeAsync(10_000);
    expect(runs).toHaveLength(1);
    expect(s.trigger("polite")).toBe(false);
    s.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(runs).toHaveLength(1);
  });

  it("shutdown aborts the running jobs through their signal once the deadline passes, then waits for them", async () => {
    const a = controlledJob("a");
    const b = controlledJob("b");
    const { scheduler: s, log } = make([a.job, b.job], {
      max: 1,
      deadlineMs: 30_000,
    });
    s.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(s.jobs().map((j) => j.phase)).toEqual(["running", "waiting"]);
    const run = a.runs[0];
    run?.control.signal.addEventListener("abort", () =>
      run.fail(new Error("aborted")),
    );

    let done = false;
    const shutdown = s.shutdown().then(() => {
      done = true;
    });
    // The waiting tick is dropped: it never started, so there is nothing to finish.
    expect(s.jobs().map((j) => j.phase)).toEqual(["running", "idle"]);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(run?.control.signal.aborted).toBe(false);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(run?.control.signal.aborted).toBe(true);
    await shutdown;
    expect(b.runs).toHaveLength(0);
    expect(s.jobs()[0]).toMatchObject({ phase: "idle", lastError: "aborted" });
    expect(log.text()).toContain(
      "shutdown deadline passed, aborting running jobs",
    );
  });

  it("gives up on a run that ignores the abort after the grace period, so shutdown always ends", async () => {
    const { job } = controlledJob("stuck");
    const { scheduler: s, log } = make([job], {
      deadlineMs: 1_000,
      graceMs: 2_000,
    });
    s.start();
    await vi.advanceTimersByTimeAsync(1_000);
    let done = false;
    const shutdown = s.shutdown().then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(2_999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await shutdown;
    expect(log.text()).toContain("jobs did not stop after the abort");
  });

  it("refuses schedules that do not parse, naming every one", () => {
    const log = memoryLogger();
    let error: unknown;
    try {
      new Scheduler({
        jobs: [
          {
            name: "one",
            schedule: "every minute",
            run: () => Promise.resolve(),
          },
          { name: "two", schedule: "* * * * *", run: () => Promise.resolve() },
          {
            name: "three",
            schedule: "61 * * * *",
            run: () => Promise.resolve(),
          },
        ],
        maxConcurrentJobs: 1,
        shutdownDeadlineMs: 1_000,
        logger: log.logger,
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toContain("job one");
    expect(problems[1]).toContain("job three");
  });
});
