// The service's Prometheus metrics (prom-client) on a registry of their own. One class observes
// the runs (RunObserver), the API client (ApiObserver) and the scheduler (SchedulerObserver),
// so every number comes from the code path that did the work. Label values are job names,
// procedure names, result codes and stream names — fixed by the code and the config, never a
// secret, never a value from the API (bounded cardinality).
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
} from "prom-client";
import type { ApiObserver } from "../api/client.js";
import type {
  Progress,
  RunCounters,
  RunObserver,
} from "../pipeline/context.js";
import type { SchedulerObserver, SkipReason } from "../scheduler/scheduler.js";
import type { LeaseSnapshot } from "../scheduler/lease.js";
import type { RunStatus } from "../warehouse/index.js";
import { checkpointLagMs } from "../pipeline/status.js";

const PREFIX = "sessionhouse_";

type CheckpointPositions = ReadonlyArray<{
  stream: string;
  positionMs: number;
  /** The period of the schedule the stream's job runs on, when the process schedules it. */
  schedulePeriodMs?: number | undefined;
}>;

/** Where each stream's checkpoint is, read at scrape time. */
type CheckpointSource = () => Promise<CheckpointPositions>;

interface MetricsOptions {
  /** Also export Node's process metrics (CPU, memory, event loop); default true. */
  processMetrics?: boolean;
  /** Clock for the lag gauge; tests pass a fixed one. */
  nowMs?: () => number;
}

export class Metrics implements RunObserver, ApiObserver, SchedulerObserver {
  readonly registry = new Registry();
  readonly #nowMs: () => number;
  #checkpoints: CheckpointSource | undefined;
  #lease: (() => LeaseSnapshot) | undefined;
  /** The checkpoints read for the scrape in progress, shared by its gauges. */
  #scrape: Promise<CheckpointPositions | undefined> | undefined;

  readonly #run: ReturnType<typeof runMetrics>;
  readonly #api: ReturnType<typeof apiMetrics>;
  readonly #scheduler: ReturnType<typeof schedulerMetrics>;
  readonly #windows: ReturnType<typeof windowMetrics>;
  readonly #sessions: ReturnType<typeof sessionMetrics>;

  constructor(options: MetricsOptions = {}) {
    this.#nowMs = options.nowMs ?? Date.now;
    // Declared in this order, which is also their order in the exposition text.
    const registers = [this.registry];
    this.#run = runMetrics(registers);
    this.#api = apiMetrics(registers);
    this.#scheduler = schedulerMetrics(registers);
    this.#windows = windowMetrics(registers);
    this.#sessions = sessionMetrics(registers);
    checkpointGauges(registers, () => this.#snapshot(), this.#nowMs);
    leaseGauges(registers, () => this.#lease?.());
    if (options.processMetrics ?? true)
      collectDefaultMetrics({ register: this.registry });
  }

  /** Reads checkpoints at every scrape for the lag gauges; set once the warehouse is open. */
  watchCheckpoints(source: CheckpointSource): void {
    this.#checkpoints = source;
  }

  /** Where this process stands with the service lease, read at every scrape (`run` sets it). */
  watchLease(source: () => LeaseSnapshot): void {
    this.#lease = source;
  }

  /** The checkpoints of the scrape in progress (one read for all its gauges); undefined on failure. */
  #snapshot(): Promise<CheckpointPositions | undefined> {
    return this.#scrape ?? this.#readCheckpoints();
  }

  #readCheckpoints(): Promise<CheckpointPositions | undefined> {
    const source = this.#checkpoints;
    return source ? source().catch(() => undefined) : Promise.resolve([]);
  }

  /** Gives every job's series a zero, so dashboards and rate() see them before the first event. */
  declareJobs(jobs: readonly string[]): void {
    for (const job of jobs) {
      this.#run.pages.inc({ job }, 0);
      this.#run.deadLetters.inc({ job }, 0);
      this.#run.retries.inc({ job }, 0);
      this.#scheduler.running.set({ job }, 0);
      for (const reason of ["running", "waiting"] as const)
        this.#scheduler.skipped.inc({ job, reason }, 0);
    }
  }

  /** The exposition text: one scrape, with one read of the checkpoints. */
  async text(): Promise<string> {
    const scrape = this.#readCheckpoints();
    this.#scrape = scrape;
    try {
      return await this.registry.metrics();
    } finally {
      if (this.#scrape === scrape) this.#scrape = undefined;
    }
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  // RunObserver
  onProgress(_p: Progress): void {}

  onRows(e: { job: string; table: string; rows: number }): void {
    this.#run.rows.inc({ job: e.job, table: e.table }, e.rows);
  }

  onDeadLetters(e: { job: string; count: number }): void {
    this.#run.deadLetters.inc({ job: e.job }, e.count);
  }

  onRunsAbandoned(e: { job: string; count: number }): void {
    this.#run.runs.inc({ job: e.job, status: "abandoned" }, e.count);
  }

  onWindowsShrunk(e: { job: string; count: number }): void {
    this.#windows.shrunk.inc({ job: e.job }, e.count);
  }

  onWindowsPoisoned(e: { job: string; count: number }): void {
    this.#windows.poisoned.inc({ job: e.job }, e.count);
  }

  onSessionsVanished(e: { job: string; count: number }): void {
    this.#sessions.vanished.inc({ job: e.job }, e.count);
  }

  onReconcileMissing(e: { job: string; count: number }): void {
    this.#sessions.reconcileMissing.inc({ job: e.job }, e.count);
  }

  onReconcileWindowsDiffering(e: { job: string; count: number }): void {
    this.#sessions.reconcileDiffering.inc({ job: e.job }, e.count);
  }

  onRunEnd(e: {
    job: string;
    status: RunStatus;
    ms: number;
    counters: RunCounters;
  }): void {
    this.#run.runs.inc({ job: e.job, status: e.status });
    this.#run.seconds.observe({ job: e.job, status: e.status }, e.ms / 1000);
    this.#run.pages.inc({ job: e.job }, e.counters.pages);
    this.#run.retries.inc({ job: e.job }, e.counters.retries);
  }

  // ApiObserver
  onAttempt(e: { procedure: string; result: string; ms: number }): void {
    this.#api.requests.inc({ procedure: e.procedure, result: e.result });
    this.#api.seconds.observe({ procedure: e.procedure }, e.ms / 1000);
  }

  onRetry(e: { procedure: string; code: string; waitMs: number }): void {
    this.#api.retries.inc({ procedure: e.procedure, code: e.code });
  }

  // SchedulerObserver
  onTickSkipped(e: { job: string; reason: SkipReason }): void {
    this.#scheduler.skipped.inc({ job: e.job, reason: e.reason });
  }

  onRunDeadline(e: { job: string }): void {
    this.#scheduler.deadlines.inc({ job: e.job });
  }

  onJobState(e: { job: string; running: boolean }): void {
    this.#scheduler.running.set({ job: e.job }, e.running ? 1 : 0);
  }

  onJobSuccess(e: { job: string; atMs: number }): void {
    this.#scheduler.lastSuccess.set({ job: e.job }, e.atMs / 1000);
  }
}

type Registers = Registry[];

/** A counter on the service's registry, its name under the common prefix. */
function counter<L extends string>(
  registers: Registers,
  name: string,
  help: string,
  labelNames: readonly L[],
): Counter<L> {
  return new Counter({ name: `${PREFIX}${name}`, help, labelNames, registers });
}

/** A gauge on the service's registry, its name under the common prefix. */
function gauge<L extends string>(
  registers: Registers,
  name: string,
  help: string,
  labelNames: readonly L[],
): Gauge<L> {
  return new Gauge({ name: `${PREFIX}${name}`, help, labelNames, registers });
}

/** What the runs did: rows, pages, dead letters, retries, and how each run ended. */
function runMetrics(registers: Registers) {
  return {
    rows: counter(
      registers,
      "rows_inserted_total",
      "Rows inserted into ClickHouse, by job and table (re-reads included; FINAL collapses them).",
      ["job", "table"],
    ),
    pages: counter(
      registers,
      "pages_total",
      "API pages read, by job (counted when a run ends).",
      ["job"],
    ),
    deadLetters: counter(
      registers,
      "dead_letters_total",
      "Records that could not be stored and went to the dead_letters table, by job.",
      ["job"],
    ),
    retries: counter(
      registers,
      "run_retries_total",
      "Retries (API calls and inserts) spent by runs, by job (counted when a run ends).",
      ["job"],
    ),
    runs: counter(
      registers,
      "runs_total",
      "Finished runs, by job and status (succeeded, failed, aborted; abandoned: found running with its process gone when this process started, counted then).",
      ["job", "status"],
    ),
    seconds: new Histogram({
      name: `${PREFIX}run_duration_seconds`,
      help: "Duration of runs, by job and status.",
      labelNames: ["job", "status"],
      buckets: [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600, 7200],
      registers,
    }),
  };
}

/** Every attempt of a control-plane API request: result, latency, retries. */
function apiMetrics(registers: Registers) {
  return {
    requests: counter(
      registers,
      "api_requests_total",
      "Control-plane API requests (each attempt), by procedure and result (ok or an error code).",
      ["procedure", "result"],
    ),
    seconds: new Histogram({
      name: `${PREFIX}api_request_duration_seconds`,
      help: "Latency of control-plane API requests until the response headers (or the failure), by procedure.",
      labelNames: ["procedure"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    retries: counter(
      registers,
      "api_retries_total",
      "Retries of control-plane API requests, by procedure and the error code that caused them.",
      ["procedure", "code"],
    ),
  };
}

/** The scheduler's view of each job: skipped ticks, deadlines, running, last success. */
function schedulerMetrics(registers: Registers) {
  return {
    skipped: counter(
      registers,
      "scheduler_skipped_ticks_total",
      "Schedule ticks skipped because the job was still running or still waiting for a slot.",
      ["job", "reason"],
    ),
    deadlines: counter(
      registers,
      "run_deadline_exceeded_total",
      "Runs aborted because they went on past their deadline, by job.",
      ["job"],
    ),
    running: gauge(
      registers,
      "job_running",
      "1 while a run of the job is going.",
      ["job"],
    ),
    lastSuccess: gauge(
      registers,
      "job_last_success_timestamp_seconds",
      "When the job last finished a run successfully (Unix seconds), in this process.",
      ["job"],
    ),
  };
}

/** Aggregation windows that need a look: shrunk on re-fetch, or poisoned. */
function windowMetrics(registers: Registers) {
  return {
    shrunk: counter(
      registers,
      "aggregation_windows_shrunk_total",
      "Aggregation windows whose re-fetch reported fewer hits than stored; the stored counts were kept.",
      ["job"],
    ),
    poisoned: counter(
      registers,
      "aggregation_windows_poisoned_total",
      "Aggregation windows poisoned after their last allowed failed attempt; they wait for `sessionhouse windows skip`.",
      ["job"],
    ),
  };
}

/** Sessions the incremental sync lost sight of: vanished open sessions, and what reconciliation found. */
function sessionMetrics(registers: Registers) {
  return {
    vanished: counter(
      registers,
      "sessions_vanished_total",
      "Open sessions GetSession answered not_found too many times in a row: their last state is kept and they are not re-read again.",
      ["job"],
    ),
    reconcileMissing: counter(
      registers,
      "reconcile_missing_total",
      "Sessions a reconciliation found listed but not stored (missed by the incremental sync), and stored.",
      ["job"],
    ),
    reconcileDiffering: counter(
      registers,
      "reconcile_windows_differing_total",
      "Windows whose listed and stored session counts differed after a reconciliation pass.",
      ["job"],
    ),
  };
}

/**
 * Each stream's checkpoint position and lag, and whether ClickHouse answered, all from one read
 * of the checkpoints per scrape (`snapshot`; undefined when the read failed).
 */
function checkpointGauges(
  registers: Registers,
  snapshot: () => Promise<CheckpointPositions | undefined>,
  now: () => number,
): void {
  // Lag and position are read at scrape time from the checkpoints table, so the lag grows
  // while nothing runs and survives restarts; a stream never synced has no sample.
  new Gauge({
    name: `${PREFIX}stream_checkpoint_timestamp_seconds`,
    help: "Position of each stream's checkpoint (Unix seconds): its data is complete up to there.",
    labelNames: ["stream"],
    registers,
    async collect() {
      this.reset();
      for (const { stream, positionMs } of (await snapshot()) ?? [])
        this.set({ stream }, positionMs / 1000);
    },
  });
  new Gauge({
    name: `${PREFIX}stream_lag_seconds`,
    help: "Now minus the stream's checkpoint (seconds), from the checkpoints table at scrape time.",
    labelNames: ["stream"],
    registers,
    async collect() {
      this.reset();
      const nowMs = now();
      for (const { stream, positionMs } of (await snapshot()) ?? []) {
        this.set({ stream }, checkpointLagMs(positionMs, nowMs) / 1000);
      }
    },
  });
  new Gauge({
    name: `${PREFIX}stream_schedule_period_seconds`,
    help: "Period of the schedule the stream's job runs on (the longest gap between two ticks): its lag may reach it with nothing wrong; the lag alert fires at lag minus this over 2 hours.",
    labelNames: ["stream"],
    registers,
    async collect() {
      this.reset();
      for (const { stream, schedulePeriodMs } of (await snapshot()) ?? [])
        if (schedulePeriodMs !== undefined)
          this.set({ stream }, schedulePeriodMs / 1000);
    },
  });
  new Gauge({
    name: `${PREFIX}clickhouse_up`,
    help: "1 when the checkpoints could be read from ClickHouse at this scrape, else 0.",
    registers,
    async collect() {
      this.set((await snapshot()) === undefined ? 0 : 1);
    },
  });
}

/**
 * The service lease as this process last read it: whether it holds it or waits for it, and the
 * holder's claim (no sample before `run` asks for the lease, or in other commands).
 */
function leaseGauges(
  registers: Registers,
  snapshot: () => LeaseSnapshot | undefined,
): void {
  const phases = [
    [
      "held",
      "1 while this process holds the service lease and runs the jobs, else 0.",
    ],
    [
      "waiting",
      "1 while this process is a standby waiting for the service lease, else 0.",
    ],
  ] as const;
  for (const [phase, help] of phases)
    new Gauge({
      name: `${PREFIX}lease_${phase}`,
      help,
      registers,
      collect() {
        const s = snapshot();
        this.reset();
        if (s) this.set(s.phase === phase ? 1 : 0);
      },
    });
  new Gauge({
    name: `${PREFIX}lease_expires_timestamp_seconds`,
    help: "When the service lease holder's claim lapses unless renewed (Unix seconds, server clock), as last read.",
    registers,
    collect() {
      const h = snapshot()?.holder;
      this.reset();
      if (h) this.set(h.expiresAtMs / 1000);
    },
  });
  new Gauge({
    name: `${PREFIX}lease_holder_info`,
    help: "1 for the process that holds the service lease as last read: its host, pid and command, and since when (Unix seconds).",
    labelNames: ["host", "pid", "command", "since"],
    registers,
    collect() {
      const h = snapshot()?.holder;
      this.reset();
      if (h)
        this.set(
          {
            host: h.owner.host,
            pid: String(h.owner.pid),
            command: h.command,
            since: String(Math.floor(h.acquiredAtMs / 1000)),
          },
          1,
        );
    },
  });
}
