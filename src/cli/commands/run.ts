// `sessionhouse run`: the exporter as a service. Migrates, starts every job on its schedule and
// the operations endpoint, and runs until SIGTERM or SIGINT. The first signal shuts down
// gracefully (stop scheduling, let runs end or abort them at the deadline, close the clients,
// flush the logs) and the command returns, so the process exits 0. A second signal exits at
// once: still safe, because ClickHouse inserts are atomic and a checkpoint is only written after
// the rows it covers.
import { secretsOf, type Config } from "../../config/index.js";
import { Metrics } from "../../ops/metrics.js";
import { logResults, runDoctor } from "../../ops/doctor/index.js";
import { checkReadiness } from "../../ops/readiness.js";
import { checkpointPositions, waitingWindows } from "../../pipeline/status.js";
import { startOpsServer, type OpsServer } from "../../ops/server.js";
import { checkSchedules, schedulePeriodMs } from "../../scheduler/cron.js";
import {
  dueAtStart,
  pipelineJobs,
  plannedSchedules,
  planJobs,
  type JobPlan,
} from "../../scheduler/jobs.js";
import { reportJobNames, reportJobs } from "../../scheduler/report-jobs.js";
import { serviceSchedules } from "../../scheduler/schedules.js";
import { Scheduler } from "../../scheduler/scheduler.js";
import { ServiceLease } from "../../scheduler/lease.js";
import { parseFilters } from "../../reports/produce.js";
import { FatalError, errorMessage } from "../../util/errors.js";
import { lastSuccesses, recordJobSchedules } from "../../warehouse/index.js";
import { scrubber, type Logger } from "../../util/logger.js";
import {
  newReadToken,
  startReadAccess,
  type ReadAccess,
} from "../../http-front/index.js";
import {
  configFrom,
  loggerFor,
  openRuntime,
  type GlobalOptions,
  type Runtime,
} from "../runtime.js";

/** `run`: the service, configured by the global options, until stopped. */
export async function runServiceCommand(globals: GlobalOptions): Promise<void> {
  await runService(configFrom(globals, {}, { warnUnknown: false }));
}

type StopSignal = "SIGTERM" | "SIGINT";
const SIGNAL_NUMBERS: Record<StopSignal, number> = { SIGINT: 2, SIGTERM: 15 };

/** After the graceful shutdown, how long a leftover handle may keep the process up. */
const EXIT_SAFETY_MS = 5_000;

interface RunServiceOptions {
  /** Where the stop signals come from (default: the process). */
  signals?: Pick<NodeJS.Process, "on" | "off">;
  /** Ends the process at once on a second signal (default: the signal's own default action). */
  die?: (signal: StopSignal) => void;
  /** Exits once everything is closed, should a leftover handle keep the process up. */
  exit?: (code: number) => void;
}

/**
 * Terminates the process the way the signal would have without a handler: at once, with no
 * exit hooks and no native destructors. process.exit() would run those while the embedded
 * engine's threads may be in the middle of a query, and that crashes (SIGSEGV).
 */
function dieBySignal(signal: StopSignal): void {
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  // Someone else still handles the signal: the status a shell would report for it.
  else process.exit(128 + SIGNAL_NUMBERS[signal]);
}

async function runService(
  config: Config,
  options: RunServiceOptions = {},
): Promise<void> {
  const plans = planJobs(config);
  // Before anything is opened: a bad schedule is a configuration error, exit status 2.
  checkSchedules(serviceSchedules(config));
  for (const r of config.reports.schedules) parseFilters(r.filter);
  const readToken = newReadToken();
  const readerToken = newReadToken();
  const logger = loggerFor(config, [readToken, readerToken]);
  // Before the engine is opened: the data directory's checks look for another holder.
  logResults(logger, await runDoctor(config, { fast: true }));
  const service = await openService(config, plans, {
    readToken,
    readerToken,
    logger,
  });
  const reads = await startReads(service);
  const ops = await startOps(service, reads);
  const stop = listenForStop(
    options.signals ?? process,
    options.die ?? dieBySignal,
    service.rt.logger,
  );
  try {
    await serveUntilStopped(service, ops, reads, stop.requested);
  } finally {
    stop.detach();
  }
  // Everything is closed; a handle some library left behind must not keep the process alive.
  const exit = options.exit ?? ((code: number) => process.exit(code));
  setTimeout(
    () => exit(process.exitCode === undefined ? 0 : Number(process.exitCode)),
    EXIT_SAFETY_MS,
  ).unref();
}

/** The service once opened, before its ops server listens. */
interface Service {
  rt: Runtime;
  plans: readonly JobPlan[];
  metrics: Metrics;
  scheduler: Scheduler;
  /** The right to run the jobs against this database: waited for before the scheduler starts. */
  lease: ServiceLease;
  startedAtMs: number;
  /** The token of the read access (embedded engine), known to the logger as a secret. */
  readToken: string;
  readerToken: string;
}

/** Metrics for every job, the runtime (migrated), and the scheduler, not started yet. */
async function openService(
  config: Config,
  plans: readonly JobPlan[],
  {
    readToken,
    readerToken,
    logger,
  }: { readToken: string; readerToken: string; logger: Logger },
): Promise<Service> {
  const metrics = new Metrics();
  metrics.declareJobs([
    ...plans.map((p) => p.name),
    ...reportJobNames(config.reports.schedules),
  ]);
  const rt = await openRuntime(config, {
    logger,
    apiObserver: metrics,
    runObserver: metrics,
    // The service keeps retrying a connection that cannot be made: the API may come back.
    personWaits: false,
  });
  // Only the scheduled streams: backfill checkpoints would grow the label set without bound.
  const periods = new Map(
    plans.flatMap((p) =>
      p.stream ? [[p.stream, schedulePeriodMs(p.schedule)] as const] : [],
    ),
  );
  metrics.watchCheckpoints(async () =>
    (await checkpointPositions(rt.warehouse, plans)).map((c) => ({
      ...c,
      schedulePeriodMs: periods.get(c.stream),
    })),
  );
  const scheduler = new Scheduler({
    jobs: [
      ...pipelineJobs({ ...rt, observer: metrics }, plans),
      ...reportJobs({ ...rt, observer: metrics }),
    ],
    maxConcurrentJobs: config.service.maxConcurrentJobs,
    shutdownDeadlineMs: config.service.shutdownDeadlineMs,
    logger,
    observer: metrics,
  });
  const lease = new ServiceLease({
    warehouse: rt.warehouse,
    logger,
    command: "run",
    ttlMs: config.service.leaseTtlMs,
    renewMs: config.service.leaseRenewMs,
  });
  metrics.watchLease(() => lease.snapshot());
  return {
    rt,
    plans,
    metrics,
    scheduler,
    lease,
    startedAtMs: Date.now(),
    readToken,
    readerToken,
  };
}

/**
 * On the embedded engine, read-only access for other processes (status, query, Grafana), which
 * cannot open the data directory while the service holds it; undefined on a ClickHouse server
 * or when service.readAccess is off. When it cannot start, the runtime is closed and the error
 * is fatal.
 */
async function startReads(service: Service): Promise<ReadAccess | undefined> {
  const { rt, readToken, readerToken } = service;
  const { config, logger } = rt;
  if (rt.warehouse.kind !== "embedded" || !config.service.readAccess)
    return undefined;
  const s = config.service;
  try {
    const reads = await startReadAccess({
      dataDir: rt.warehouse.location,
      database: rt.warehouse.database,
      host: s.readHost,
      port: s.readPort,
      maxExecutionTimeS: Math.max(
        1,
        Math.round(s.readMaxExecutionTimeMs / 1000),
      ),
      maxMemoryUsage: s.readMaxMemoryBytes,
      maxResultRows: s.readMaxResultRows,
      maxResultBytes: s.readMaxResultBytes,
      token: readToken,
      readerToken,
      groupReadable: config.files.groupReadable,
    });
    logger.info(
      { url: reads.url, file: reads.file },
      "read access listening (the token is in the file)",
    );
    return reads;
  } catch (err) {
    await rt.close();
    throw new FatalError(
      "READ_ACCESS_FAILED",
      `the read access to ${rt.warehouse.location} cannot start on ${s.readHost}:${s.readPort}: ${errorMessage(err)}`,
      {
        cause: err,
        hint: "set SESSIONHOUSE_READ_PORT to a free port (0 picks one), or SESSIONHOUSE_READ_ACCESS=false to run without it",
      },
    );
  }
}

/** /healthz, /readyz and /metrics; when it cannot listen, the runtime is closed and the error is fatal. */
async function startOps(
  service: Service,
  reads: ReadAccess | undefined,
): Promise<OpsServer> {
  const { rt, metrics, scheduler, lease, startedAtMs } = service;
  const { config, logger } = rt;
  try {
    return await startOpsServer({
      host: config.service.opsHost,
      port: config.service.opsPort,
      logger,
      metrics,
      scrub: scrubber(secretsOf(config)),
      readiness: () =>
        checkReadiness({
          ping: async () => {
            const r = await rt.warehouse.client.ping();
            if (!r.success) throw r.error;
            return true;
          },
          jobs: () => scheduler.jobs(),
          poisonedWindows: () => waitingWindows(rt.warehouse),
          lease: () => lease.snapshot(),
          // A standby's jobs are due from when it took the lease over, not from its start.
          startedAtMs: lease.snapshot().heldSinceMs ?? startedAtMs,
          stopping: () => scheduler.stopping,
        }),
    });
  } catch (err) {
    await reads?.close();
    await rt.close();
    throw new FatalError(
      "OPS_LISTEN_FAILED",
      `the ops server cannot listen on ${config.service.opsHost}:${config.service.opsPort}: ${errorMessage(err)}`,
      {
        cause: err,
        hint: "set SESSIONHOUSE_OPS_PORT to a free port (0 picks one) or stop the process that holds it",
      },
    );
  }
}

interface StopListener {
  /** Resolves with the first stop signal. */
  requested: Promise<StopSignal>;
  /** Removes the signal handlers. */
  detach(): void;
}

/** How often a service started by npm looks whether npm is still its parent. */
const PARENT_POLL_MS = 1_000;

/** The parent this process had when it started: a parent that ends before `run` serves counts. */
const PARENT_AT_START = process.ppid;

/** npm sets npm_command in every process it starts (npx, npm exec, an npm script). */
function startedByNpm(): boolean {
  return process.env.npm_command !== undefined;
}

/**
 * Calls `gone` once when this process's parent has ended (it is then re-parented, and its
 * parent's id changes); returns the function that stops looking. npm ends on SIGTERM without
 * passing the signal to the service it started (`npx sessionhouse run`), which would go on as
 * an orphan holding the data directory; under systemd, a container or nohup a parent that ends
 * is no reason to stop, so only a service started by npm follows its parent.
 */
function followParent(gone: () => void): () => void {
  const parent = PARENT_AT_START;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    gone();
  }, PARENT_POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The first SIGTERM or SIGINT (or, for a service started by npm, the end of npm) requests a
 * graceful stop; a second signal ends the process at once.
 */
function listenForStop(
  signals: Pick<NodeJS.Process, "on" | "off">,
  die: (signal: StopSignal) => void,
  logger: Logger,
): StopListener {
  let resolveStop: (signal: StopSignal) => void = () => undefined;
  const requested = new Promise<StopSignal>((resolve) => {
    resolveStop = resolve;
  });
  let received = 0;
  const onSignal = (signal: StopSignal) => {
    received++;
    if (received === 1) {
      resolveStop(signal);
      return;
    }
    logger.warn(
      { signal },
      "second signal: exiting now; the next start resumes from the checkpoints",
    );
    logger.flush();
    detach();
    die(signal);
  };
  const onTerm = () => onSignal("SIGTERM");
  const onInt = () => onSignal("SIGINT");
  const unfollow = startedByNpm()
    ? followParent(() => {
        logger.warn(
          { parent: "npm" },
          "npm, which started this service, has ended: stopping as on SIGTERM",
        );
        onSignal("SIGTERM");
      })
    : () => undefined;
  const detach = () => {
    signals.off("SIGTERM", onTerm);
    signals.off("SIGINT", onInt);
    unfollow();
  };
  signals.on("SIGTERM", onTerm);
  signals.on("SIGINT", onInt);
  return { requested, detach };
}

/**
 * Records each job's schedule and its period (job_schedules), once the lease is held: the lag
 * alert and panel judge a stream against its job's period, so a directory stream read once a day
 * is not two hours late. A failure is logged; the streams are then judged as before.
 */
async function recordSchedules(service: Service): Promise<void> {
  const { rt, plans } = service;
  try {
    await recordJobSchedules(rt.warehouse, plannedSchedules(plans), {
      retries: rt.config.clickhouse.insertRetries,
      logger: rt.logger,
    });
  } catch (err) {
    rt.logger.warn(
      { err: errorMessage(err) },
      "the jobs' schedules cannot be recorded: the lag alert judges every stream against 2 hours",
    );
  }
}

/**
 * Starts at once, without waiting for their tick, the jobs due at start (dueAtStart): the
 * sessions job, which checks the key, and every job that never succeeded or missed a tick. The
 * scheduler's slots still apply: the live jobs first, the others one after another.
 */
async function startDueJobs(service: Service): Promise<void> {
  const { rt, plans, scheduler } = service;
  const names = plans.map((p) => p.name);
  let last: ReadonlyMap<string, number> = new Map();
  try {
    last = await lastSuccesses(rt.warehouse, names);
  } catch (err) {
    rt.logger.warn(
      { err: errorMessage(err) },
      "the last successful runs cannot be read: every job starts now",
    );
  }
  const due = dueAtStart(plans, last, Date.now());
  for (const d of due) scheduler.trigger(d.job);
  if (due.length > 0)
    rt.logger.info(
      { jobs: due.map((d) => `${d.job} (${d.reason})`) },
      "jobs started at once, without waiting for their tick",
    );
}

/**
 * Waits for the service lease, runs the scheduler until a stop is requested or the lease is
 * lost, then shuts down in order: scheduler (runs end or are aborted at the deadline), lease,
 * ops server, runtime. A lost lease ends the command with LEASE_LOST (exit status 1).
 */
async function serveUntilStopped(
  service: Service,
  ops: OpsServer,
  reads: ReadAccess | undefined,
  stopRequested: Promise<StopSignal>,
): Promise<void> {
  const { rt, plans, scheduler, lease, startedAtMs } = service;
  const { config, logger } = rt;
  const stop = new AbortController();
  void stopRequested.then(() => stop.abort());
  const lost = lease.whenLost();
  let stopped = false;
  try {
    logger.info(
      {
        ops: ops.url,
        jobs: plans.length,
        warehouse: rt.warehouse.location,
        ...(reads ? { readAccess: reads.url } : {}),
      },
      "service started",
    );
    if (await lease.acquire(stop.signal)) {
      await recordSchedules(service);
      scheduler.start();
      await startDueJobs(service);
    }
    const end = await Promise.race([
      stopRequested.then((signal) => ({ signal, lost: undefined })),
      lost.then((reason) => ({ signal: undefined, lost: reason })),
    ]);
    logger.info(
      { signal: end.signal, deadlineMs: config.service.shutdownDeadlineMs },
      end.lost ? "shutting down: the service lease was lost" : "shutting down",
    );
    await scheduler.shutdown();
    await lease.release();
    // The service file goes first: from then on readers open the data directory themselves,
    // which they can once this process has closed the engine.
    await reads?.close();
    await ops.close();
    logger.info({ uptimeMs: Date.now() - startedAtMs }, "service stopped");
    await rt.close();
    stopped = true;
    if (end.lost) throw end.lost;
  } finally {
    if (!stopped) {
      // Failing on the way: close what is open, without hiding the original error.
      await scheduler.shutdown().catch(() => undefined);
      await lease.release().catch(() => undefined);
      await reads?.close().catch(() => undefined);
      await ops.close().catch(() => undefined);
      await rt.close().catch(() => undefined);
    }
  }
}
