// Opens what a command needs (logger, API, warehouse) from the configuration, and closes it
// once, in reverse order.
import { writeSync } from "node:fs";
import { ControlPlaneApi } from "../api/control-plane.js";
import type { ApiObserver } from "../api/client.js";
import {
  loadConfig,
  LOG_LEVELS,
  RECOMMENDED_SECRET_LENGTH,
  secretsOf,
  shortSecrets,
  unknownEnvironmentVariables,
  unknownVariableProblem,
  type Config,
  type LoadOptions,
} from "../config/index.js";
import type { RunObserver } from "../pipeline/context.js";
import {
  abandonOrphanedRuns,
  migrate,
  openWarehouse,
  retentionSettings,
  type Warehouse,
} from "../warehouse/index.js";
import { ServiceLease } from "../scheduler/lease.js";
import { errorMessage, UsageError } from "../util/errors.js";
import { createLogger, type Logger } from "../util/logger.js";
import { ownerGone, thisProcess } from "../util/process.js";

export interface GlobalOptions {
  config?: string;
  logLevel?: string;
}

export interface Runtime {
  config: Config;
  logger: Logger;
  warehouse: Warehouse;
  api: ControlPlaneApi;
  close(): Promise<void>;
}

export function configFrom(
  globals: GlobalOptions,
  overrides: LoadOptions["overrides"] = {},
  options: {
    needsApi?: boolean;
    /**
     * Whether a SESSIONHOUSE_* variable nothing reads is warned of on stderr (default true);
     * doctor and run report it among their checks instead.
     */
    warnUnknown?: boolean;
  } = {},
): Config {
  const { warnUnknown = true, ...load } = options;
  checkLogLevel(globals.logLevel);
  const config = loadConfig({
    ...load,
    configFile: globals.config,
    overrides: {
      ...(globals.logLevel ? { "log.level": globals.logLevel } : {}),
      ...overrides,
    },
  });
  if (warnUnknown)
    for (const v of unknownEnvironmentVariables(process.env))
      process.stderr.write(
        `warning: ${unknownVariableProblem(v)}: what it was meant to set stays as configured otherwise\n`,
      );
  return config;
}

/** A --log-level the logger has not: refused by the flag's own name, with the levels there are. */
function checkLogLevel(level: string | undefined): void {
  if (level === undefined || (LOG_LEVELS as readonly string[]).includes(level))
    return;
  throw new UsageError(`--log-level "${level}" is not a log level`, {
    hint: `give one of ${LOG_LEVELS.join(", ")}`,
  });
}

/** The logger of a command; `extraSecrets` are redacted too (a token the process made). */
export function loggerFor(
  config: Config,
  extraSecrets: readonly string[] = [],
): Logger {
  const logger = createLogger({
    level: config.log.level,
    format: config.log.format,
    secrets: [...secretsOf(config), ...extraSecrets],
  });
  for (const { setting, length } of shortSecrets(config))
    logger.warn(
      { setting, length, recommended: RECOMMENDED_SECRET_LENGTH },
      "secret shorter than recommended: easy to guess, and scrubbed wherever it occurs, out of ordinary text too",
    );
  return logger;
}

/**
 * Until the returned function is called, Ctrl-C (SIGINT) or SIGTERM ends the command as the signal
 * would, after one line that says what the interruption left and how to go on: every checkpoint
 * is behind the rows it covers, so the same command resumes. The line is written synchronously:
 * the process ends by the signal right after (never through exit hooks while the embedded
 * engine may be running a query).
 */
function sayHowToResume(command: string): () => void {
  const signals = ["SIGINT", "SIGTERM"] as const;
  const on = (signal: NodeJS.Signals) => {
    detach();
    writeSync(
      2,
      `interrupted: sessionhouse ${command} stopped before it finished (${signal}); what it stored is kept and no checkpoint is ahead of its rows, so running the same command again resumes where it stopped\n`,
    );
    process.kill(process.pid, signal);
  };
  const detach = () => {
    for (const s of signals) process.off(s, on);
  };
  for (const s of signals) process.on(s, on);
  return detach;
}

/**
 * Opens what a command that writes needs (run, sync, demo: every one starts here): migrates the
 * warehouse, then marks abandoned the runs its host left `running` when their process died.
 */
export async function openRuntime(
  config: Config,
  options: {
    logger?: Logger;
    migrate?: boolean;
    apiObserver?: ApiObserver;
    /** Told of the runs marked abandoned. */
    runObserver?: RunObserver;
    /**
     * A person waits on the command (default): a connection to the API that cannot be made fails
     * at once. `run` sets false: the service keeps retrying what may recover.
     */
    personWaits?: boolean;
  } = {},
): Promise<Runtime> {
  const logger = options.logger ?? loggerFor(config);
  const warehouse = await openWarehouse(config, { logger });
  try {
    if (options.migrate !== false) {
      const { applied } = await migrate(warehouse, {
        retention: retentionSettings(config),
        logger,
      });
      if (applied.length > 0)
        logger.info(
          { applied: applied.length, where: warehouse.location },
          "warehouse migrated",
        );
      await abandonRuns(config, warehouse, logger, options.runObserver);
    }
  } catch (err) {
    await warehouse.close();
    throw err;
  }
  const api = ControlPlaneApi.fromConfig(
    config,
    logger,
    options.apiObserver,
    options.personWaits ?? true,
  );
  let closed = false;
  return {
    config,
    logger,
    warehouse,
    api,
    close: async () => {
      if (closed) return;
      closed = true;
      await api.close();
      await warehouse.close();
      logger.flush();
    },
  };
}

/** A runtime whose command holds the service lease; `signal` is aborted should it lose it. */
export type LeasedRuntime = Runtime & { signal: AbortSignal };

/**
 * Opens the runtime of a one-shot command that writes (`sync`, `demo`), takes the service lease
 * for it (refused with LEASE_HELD, naming the holder, while another process holds it), hands
 * both to `fn`, and releases and closes however `fn` ends.
 */
export async function withRuntime<T>(
  config: Config,
  command: string,
  fn: (rt: LeasedRuntime) => Promise<T>,
): Promise<T> {
  const rt = await openRuntime(config);
  const stopSaying = sayHowToResume(command);
  const lease = new ServiceLease({
    warehouse: rt.warehouse,
    logger: rt.logger,
    command,
    ttlMs: config.service.leaseTtlMs,
    renewMs: config.service.leaseRenewMs,
    tenureLogLevel: "debug",
  });
  try {
    await lease.take();
    return await fn({ ...rt, signal: lease.lost });
  } finally {
    stopSaying();
    await lease.release();
    await rt.close();
  }
}

/**
 * Marks abandoned the runs of this host whose process is gone. A failure is logged, not thrown:
 * the command's own work does not depend on it, and the next command tries again.
 */
async function abandonRuns(
  config: Config,
  warehouse: Warehouse,
  logger: Logger,
  observer: RunObserver | undefined,
): Promise<void> {
  let abandoned;
  try {
    abandoned = await abandonOrphanedRuns(
      warehouse,
      ownerGone,
      thisProcess().host,
      { retries: config.clickhouse.insertRetries, logger },
    );
  } catch (err) {
    logger.warn(
      { err: errorMessage(err) },
      "could not look for runs whose process is gone",
    );
    return;
  }
  const perJob = new Map<string, number>();
  for (const run of abandoned) {
    logger.warn(
      {
        job: run.job,
        runId: run.runId,
        pid: run.owner?.pid,
        startedAt: new Date(run.startedAtMs).toISOString(),
      },
      "run marked abandoned: its process is gone",
    );
    perJob.set(run.job, (perJob.get(run.job) ?? 0) + 1);
  }
  for (const [job, count] of perJob)
    observer?.onRunsAbandoned?.({ job, count });
}
