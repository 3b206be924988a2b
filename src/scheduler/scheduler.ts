// Runs jobs on their cron schedules (node-cron, UTC) with three guarantees: a job never overlaps
// itself, at most `maxConcurrentJobs` jobs run at once, and shutdown() runs once and ends every
// run within a deadline. The jobs are plain functions handed in, so the whole lifecycle is
// testable with fake timers and no network.
//
// A tick that finds no free slot waits in a FIFO queue rather than being dropped: aggregation
// jobs share their "every five minutes" ticks and would otherwise starve each other under a
// limit of two. The queue is bounded by the number of jobs, because a job that is already
// waiting or running has its tick skipped and counted.
//
// One slot is kept for the live jobs (`live`: the sessions sync and the detections), so that they
// never wait behind a long run of another job (an aggregation backfill, a directory read): the
// other jobs take at most maxConcurrentJobs − 1 slots (at least one), and a live job starts when a
// slot is free or when no other live job holds the kept one — at a limit of 1, beside the one
// other job. Waiting live jobs start before waiting others. Without live jobs nothing is kept.
import { apiTrouble } from "../api/errors.js";
import { createTask, type ScheduledTask } from "node-cron";
import type { Logger } from "../util/logger.js";
import { errorMessage } from "../util/errors.js";
import { CRON_TIMEZONE, checkSchedules } from "./cron.js";

/** What a run is handed: when to stop softly, and when to stop now. */
export interface RunControl {
  /** Aborted when the run must stop now: its deadline passed, or the shutdown deadline did. */
  readonly signal: AbortSignal;
  /** Aborted when shutdown begins: the run should stop at its next safe point (a checkpoint). */
  readonly stopping: AbortSignal;
}

export interface ScheduledJob {
  /** Job name, as in the `runs` table ("sessions", "aggregations.<name>"). */
  readonly name: string;
  /** Cron expression, UTC; five fields, or six with seconds first. */
  readonly schedule: string;
  /** A run still going after this long is aborted; the next run resumes from the checkpoint. */
  readonly deadlineMs?: number | undefined;
  /** A live job (sessions, detections): a slot is kept for it (see the file's header). */
  readonly live?: boolean | undefined;
  run(control: RunControl): Promise<void>;
}

export type SkipReason = "running" | "waiting";

/** Hooks for metrics. */
export interface SchedulerObserver {
  onTickSkipped?(e: { job: string; reason: SkipReason }): void;
  onRunDeadline?(e: { job: string }): void;
  onJobState?(e: { job: string; running: boolean }): void;
  onJobSuccess?(e: { job: string; atMs: number }): void;
}

interface SchedulerOptions {
  jobs: readonly ScheduledJob[];
  maxConcurrentJobs: number;
  /** After shutdown begins, how long runs may go on before they are aborted. */
  shutdownDeadlineMs: number;
  logger: Logger;
  observer?: SchedulerObserver | undefined;
  /** After the abort, how long to wait for runs to unwind before giving up on them (default 10s). */
  abortGraceMs?: number;
}

type JobPhase = "idle" | "waiting" | "running";

export interface JobState {
  job: string;
  schedule: string;
  deadlineMs: number | undefined;
  phase: JobPhase;
  runs: number;
  skippedTicks: number;
  lastStartMs: number | undefined;
  lastEndMs: number | undefined;
  lastSuccessMs: number | undefined;
  lastError: string | undefined;
  /**
   * Set when the last run failed because the control plane cannot be reached, refuses the key
   * or fails TLS (apiTrouble): what readiness reports at once, not after the overdue limit.
   */
  lastApiTrouble?: string | undefined;
  /** Next tick (epoch ms), undefined once the scheduler stopped. */
  nextRunMs: number | undefined;
}

interface Slot {
  readonly job: ScheduledJob;
  readonly state: JobState;
  task?: ScheduledTask;
  /** The run in progress, settled (never rejected) when it ends. */
  current?: Promise<void>;
  abort?: AbortController;
  /** Ticks skipped during the current run, for one warning per run rather than one per tick. */
  skippedThisRun: number;
}

const DEFAULT_ABORT_GRACE_MS = 10_000;

export class Scheduler {
  readonly #opts: SchedulerOptions;
  readonly #slots = new Map<string, Slot>();
  readonly #queue: Slot[] = [];
  readonly #stopping = new AbortController();
  #running = 0;
  /** Live jobs among the running ones. */
  #runningLive = 0;
  /** The slots the jobs that are not live may take. */
  readonly #othersLimit: number;
  #started = false;
  /** Set first thing in shutdown, before any await, so no tick or queued job starts after it. */
  #stopped = false;
  #shutdown: Promise<void> | undefined;

  constructor(options: SchedulerOptions) {
    if (
      !Number.isInteger(options.maxConcurrentJobs) ||
      options.maxConcurrentJobs < 1
    ) {
      throw new RangeError(
        "maxConcurrentJobs must be a whole number of at least 1",
      );
    }
    checkSchedules(
      options.jobs.map((j) => ({
        what: `schedule of job ${j.name}`,
        schedule: j.schedule,
      })),
    );
    this.#opts = options;
    const keepsSlot = options.jobs.some((j) => j.live === true);
    this.#othersLimit = keepsSlot
      ? Math.max(1, options.maxConcurrentJobs - 1)
      : options.maxConcurrentJobs;
    for (const job of options.jobs) {
      if (this.#slots.has(job.name))
        throw new RangeError(`job ${job.name} is scheduled twice`);
      this.#slots.set(job.name, {
        job,
        skippedThisRun: 0,
        state: {
          job: job.name,
          schedule: job.schedule,
          deadlineMs: job.deadlineMs,
          phase: "idle",
          runs: 0,
          skippedTicks: 0,
          lastStartMs: undefined,
          lastEndMs: undefined,
          lastSuccessMs: undefined,
          lastError: undefined,
          nextRunMs: undefined,
        },
      });
    }
  }

  /** Starts every job's schedule. Calling it again, or after shutdown, does nothing. */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    for (const slot of this.#slots.values()) {
      const task = createTask(slot.job.schedule, () => this.#tick(slot), {
        timezone: CRON_TIMEZONE,
        name: slot.job.name,
        logger: this.#cronLogger(slot.job.name),
        // The heartbeat alone must not keep the process alive; the daemon's own
        // wait for a signal does that.
        unref: true,
      });
      // node-cron reports ticks it could not fire on time (a blocked event loop) as missed.
      task.on("execution:missed", (c) => {
        this.#opts.logger.warn(
          { job: slot.job.name, tick: c.date.toISOString() },
          "tick missed: the event loop was blocked",
        );
      });
      slot.task = task;
      void task.start();
    }
    this.#opts.logger.info(
      {
        jobs: this.jobs().map((s) => ({ job: s.job, schedule: s.schedule })),
        maxConcurrentJobs: this.#opts.maxConcurrentJobs,
      },
      "scheduler started",
    );
  }

  /** Runs a job now, as a tick would (same overlap and concurrency rules); false when skipped. */
  trigger(name: string): boolean {
    const slot = this.#slots.get(name);
    if (!slot) throw new RangeError(`no job named ${name}`);
    return this.#tick(slot);
  }

  /** A snapshot of every job, in the order they were given. */
  jobs(): JobState[] {
    return [...this.#slots.values()].map((slot) => {
      const next = this.#stopped ? null : (slot.task?.getNextRun() ?? null);
      return { ...slot.state, nextRunMs: next ? next.getTime() : undefined };
    });
  }

  get stopping(): boolean {
    return this.#stopped;
  }

  /**
   * Stops scheduling, lets the running jobs end on their own until the deadline, then aborts
   * them and waits for them to unwind. Runs once; every call returns the same promise.
   */
  shutdown(): Promise<void> {
    this.#shutdown ??= this.#doShutdown();
    return this.#shutdown;
  }

  #tick(slot: Slot): boolean {
    if (this.#stopped) return false;
    const { state } = slot;
    if (state.phase !== "idle") {
      const reason: SkipReason = state.phase;
      state.skippedTicks++;
      slot.skippedThisRun++;
      this.#opts.observer?.onTickSkipped?.({ job: slot.job.name, reason });
      const fields = {
        job: slot.job.name,
        reason,
        skipped: slot.skippedThisRun,
        skippedTotal: state.skippedTicks,
      };
      // One warning per run that caused skips; the count of the rest comes when it ends.
      if (slot.skippedThisRun === 1) {
        this.#opts.logger.warn(
          fields,
          reason === "running"
            ? "tick skipped: the previous run of this job is still going"
            : "tick skipped: the job is still waiting for a free slot (service.maxConcurrentJobs)",
        );
      } else {
        this.#opts.logger.debug(fields, "tick skipped");
      }
      return false;
    }
    if (this.#canLaunch(slot)) {
      this.#launch(slot);
    } else {
      state.phase = "waiting";
      this.#queue.push(slot);
      this.#opts.logger.debug(
        { job: slot.job.name, waiting: this.#queue.length },
        "job waits for a free slot",
      );
    }
    return true;
  }

  /** Whether a slot is free for this job now (the limit, the slot kept for the live jobs). */
  #canLaunch(slot: Slot): boolean {
    const max = this.#opts.maxConcurrentJobs;
    if (slot.job.live === true)
      return this.#running < max || this.#runningLive === 0;
    return (
      this.#running < max &&
      this.#running - this.#runningLive < this.#othersLimit
    );
  }

  #launch(slot: Slot): void {
    const { job, state } = slot;
    const live = job.live === true;
    this.#running++;
    if (live) this.#runningLive++;
    state.phase = "running";
    state.runs++;
    state.lastStartMs = Date.now();
    slot.skippedThisRun = 0;
    const abort = new AbortController();
    slot.abort = abort;
    this.#opts.observer?.onJobState?.({ job: job.name, running: true });
    let deadline: NodeJS.Timeout | undefined;
    if (job.deadlineMs !== undefined && job.deadlineMs > 0) {
      const ms = job.deadlineMs;
      deadline = setTimeout(() => {
        this.#opts.logger.warn(
          { job: job.name, deadlineMs: ms },
          "run exceeded its deadline and is aborted; the next run resumes from the checkpoint",
        );
        this.#opts.observer?.onRunDeadline?.({ job: job.name });
        abort.abort(new Error(`run exceeded its deadline of ${ms} ms`));
      }, ms);
      deadline.unref();
    }
    slot.current = (async () => {
      try {
        await job.run({
          signal: abort.signal,
          stopping: this.#stopping.signal,
        });
        state.lastSuccessMs = Date.now();
        state.lastError = undefined;
        state.lastApiTrouble = undefined;
        this.#opts.observer?.onJobSuccess?.({
          job: job.name,
          atMs: state.lastSuccessMs,
        });
      } catch (err) {
        // The job logs its own failure (withRun); here it only matters for the state.
        state.lastError = errorMessage(err);
        state.lastApiTrouble = apiTrouble(err);
      } finally {
        clearTimeout(deadline);
        state.lastEndMs = Date.now();
        state.phase = "idle";
        slot.current = undefined;
        slot.abort = undefined;
        this.#running--;
        if (live) this.#runningLive--;
        this.#opts.observer?.onJobState?.({ job: job.name, running: false });
        if (slot.skippedThisRun > 1) {
          this.#opts.logger.warn(
            {
              job: job.name,
              skipped: slot.skippedThisRun,
              ms: state.lastEndMs - (state.lastStartMs ?? state.lastEndMs),
            },
            "ticks skipped while the run was going; a longer schedule would fit this job better",
          );
        }
        this.#pump();
      }
    })();
  }

  /** Starts waiting jobs while slots are free: the live ones first, each kind in FIFO order. */
  #pump(): void {
    for (const live of [true, false]) {
      let i = 0;
      while (!this.#stopped && i < this.#queue.length) {
        const next = this.#queue[i] as Slot;
        if ((next.job.live === true) === live && this.#canLaunch(next)) {
          this.#queue.splice(i, 1);
          this.#launch(next);
        } else i++;
      }
    }
  }

  async #doShutdown(): Promise<void> {
    this.#stopped = true;
    const logger = this.#opts.logger;
    for (const slot of this.#slots.values()) void slot.task?.destroy();
    for (const slot of this.#queue.splice(0)) slot.state.phase = "idle";
    this.#stopping.abort(new Error("shutting down"));
    const running = [...this.#slots.values()].filter(
      (s) => s.current !== undefined,
    );
    const wait = () =>
      Promise.all(running.map((s) => s.current ?? Promise.resolve()));
    if (running.length === 0) {
      logger.info("scheduler stopped");
      return;
    }
    const names = running.map((s) => s.job.name);
    logger.info(
      { running: names, deadlineMs: this.#opts.shutdownDeadlineMs },
      "waiting for running jobs to stop",
    );
    // These timers are deliberately not unref'd: shutdown is exactly when the process must
    // stay up until the runs have ended.
    if (await within(wait(), this.#opts.shutdownDeadlineMs)) {
      logger.info("scheduler stopped");
      return;
    }
    const late = running.filter((s) => s.current !== undefined);
    logger.warn(
      {
        jobs: late.map((s) => s.job.name),
        deadlineMs: this.#opts.shutdownDeadlineMs,
      },
      "shutdown deadline passed, aborting running jobs",
    );
    for (const s of late) s.abort?.abort(new Error("shutdown deadline passed"));
    const graceMs = this.#opts.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS;
    if (await within(wait(), graceMs)) {
      logger.info("scheduler stopped");
      return;
    }
    logger.error(
      {
        jobs: running
          .filter((s) => s.current !== undefined)
          .map((s) => s.job.name),
        graceMs,
      },
      "jobs did not stop after the abort; closing anyway (their checkpoints only follow stored data)",
    );
  }

  #cronLogger(job: string) {
    const logger = this.#opts.logger;
    // node-cron's own messages, routed into the structured log.
    return {
      info: (message: string) =>
        logger.debug({ job, source: "node-cron" }, message),
      warn: (message: string) =>
        logger.warn({ job, source: "node-cron" }, message),
      error: (message: string | Error) =>
        logger.error(
          { job, source: "node-cron", err: errorMessage(message) },
          "node-cron error",
        ),
      debug: (message: string | Error) =>
        logger.debug({ job, source: "node-cron" }, errorMessage(message)),
    };
  }
}

/** True when the promise settled within `ms`. */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([p.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
