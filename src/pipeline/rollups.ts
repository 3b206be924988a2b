// The daily rollups job: every day before today whose rows changed since it was computed, and
// that is settled, is computed again from the deduplicated rows. A sessions day is settled
// when none of its sessions is still open, or once it ended `retention.settleAfterMs` ago; an
// aggregation day once it ended longer ago than its job re-fetches (an environment day of a job
// no longer configured, once it ended). Days whose raw rows the retention may already have begun
// to delete are left as they were computed.
import {
  DATA_LABEL_FIELD,
  ENVIRONMENT_JOB,
  type AggregationJobConfig,
  type Config,
} from "../config/index.js";
import type { Logger } from "../util/logger.js";
import {
  applyActiveHolds,
  changedDataLabelDays,
  changedEnvironmentDays,
  type ChangedDay,
  changedSessionDays,
  computeDataLabelRollups,
  computeEnvironmentRollups,
  computeSessionRollups,
  deleteKeysOfDeletedSessions,
  earliestRunningStart,
  openSessionsByDay,
  readCheckpoint,
  retireSupersededKeys,
  type Warehouse,
  writeCheckpoint,
} from "../warehouse/index.js";
import { markArchives } from "./archive/index.js";
import { ROLLUPS_JOB, ROLLUPS_KEYS_STREAM } from "./names.js";

const DAY_MS = 86_400_000;
/** Days computed by one insert: bounds the memory of one FINAL read. */
const DAYS_PER_INSERT = 31;

export interface RollupResult {
  /** Session days computed (again). */
  sessionDays: number;
  /** Sessions those days hold. */
  sessions: number;
  /** Days that changed but wait: a session of theirs is still open. */
  unsettledDays: number;
  /** Data-label days computed, over every job that groups by the data label first. */
  dataLabelDays: number;
  /** Days of the resources' environments computed (the `resource_environments` job's). */
  environmentDays: number;
  /** Session rows whose hold flag was brought in line with the active legal holds. */
  holdRowsChanged: number;
  /** Keys of sessions retired by a tombstone: stored under another start time as well. */
  keysRetired: number;
  /** Keys of `session_keys` whose sessions the retention deleted, deleted with them. */
  keysDeleted: number;
  /** Rows marked archived, of months of the archive directory exported without marking them. */
  archivedRowsMarked: number;
}

export interface RollupDeps {
  config: Config;
  warehouse: Warehouse;
  logger: Logger;
  signal?: AbortSignal | undefined;
}

/**
 * One pass at `nowMs`: the hold flags first (a hold whose `until` passed, rows written by a run
 * that read the holds before they changed), then every session stored under more than one
 * start time is brought to one (the writers do it for what they read; this catches a run that
 * stopped before it could, and on its first pass rows stored before the tombstones existed;
 * a pass reads the keys stored since the last), the keys of the
 * sessions the retention deleted going with them, then the rollups.
 */
export async function rollUp(
  deps: RollupDeps,
  nowMs = Date.now(),
): Promise<RollupResult> {
  const { config, warehouse: w, logger } = deps;
  const holdRowsChanged = await applyActiveHolds(w, "rollups", nowMs);
  const archivedRowsMarked = await markArchiveDir(deps);
  const keysDeleted = await deleteKeysOfDeletedSessions(
    w,
    config.clickhouse.retentionDays,
    nowMs,
  );
  const keysRetired = await retireKeysSinceLastPass(deps);
  const today = dayOf(nowMs);
  const sessionRange = {
    fromDay: firstWholeDay(nowMs, config.clickhouse.retentionDays),
    toDay: today,
  };
  const changed = await changedSessionDays(w, sessionRange);
  const open = await openSessionsByDay(
    w,
    changed.map((d) => d.day),
  );
  const settledBefore = dayOf(nowMs - config.retention.settleAfterMs);
  const settled = changed.filter(
    (d) => (open.get(d.day) ?? 0) === 0 || nextDay(d.day) <= settledBefore,
  );
  let sessions = 0;
  for (const batch of chunks(settled, DAYS_PER_INSERT)) {
    deps.signal?.throwIfAborted();
    sessions += await computeSessionRollups(w, batch, nowMs);
  }
  let dataLabelDays = 0;
  for (const job of dataLabelJobs(config)) {
    deps.signal?.throwIfAborted();
    dataLabelDays += await rollUpDataLabels(deps, job, nowMs);
  }
  deps.signal?.throwIfAborted();
  const environmentDays = await rollUpEnvironments(deps, nowMs);
  const result: RollupResult = {
    sessionDays: settled.length,
    sessions,
    unsettledDays: changed.length - settled.length,
    dataLabelDays,
    environmentDays,
    holdRowsChanged,
    keysRetired,
    keysDeleted,
    archivedRowsMarked,
  };
  logger.info(result, "rollups computed");
  return result;
}

/**
 * With an archive directory configured, marks the rows of its months that are not marked yet
 * (exported through the service's read access, or whose marking failed), so the retention can
 * delete them; a month that does not verify is left unmarked and logged.
 */
async function markArchiveDir(deps: RollupDeps): Promise<number> {
  const dir = deps.config.archive.dir;
  if (dir === undefined) return 0;
  const { marked, refused } = await markArchives(deps.warehouse, dir);
  for (const problem of refused)
    deps.logger.warn(
      { archiveDir: dir, problem },
      "an archived month does not verify: its rows are not marked archived, and the retention keeps them",
    );
  return Object.values(marked).reduce((a, b) => a + b, 0);
}

/**
 * Retires the keys of the sessions stored since the last pass (every session on the first):
 * those fetched at or after the stream's checkpoint. The checkpoint then moves to when this pass
 * began, never past the start of a run still writing (its rows are fetched after it started and
 * may be stored after this pass reads). Fetch times are the exporter's clock, so this bound is.
 */
async function retireKeysSinceLastPass(deps: RollupDeps): Promise<number> {
  const w = deps.warehouse;
  const clockMs = Date.now();
  const running = await earliestRunningStart(w, ROLLUPS_JOB, clockMs);
  const judgedToMs = Math.min(clockMs, running ?? clockMs);
  const since = await readCheckpoint(w, ROLLUPS_KEYS_STREAM);
  const retired = await retireSupersededKeys(w, since?.positionMs);
  await writeCheckpoint(
    w,
    ROLLUPS_KEYS_STREAM,
    judgedToMs,
    {},
    { retries: deps.config.clickhouse.insertRetries, logger: deps.logger },
  );
  return retired;
}

async function rollUpDataLabels(
  deps: RollupDeps,
  job: AggregationJobConfig,
  nowMs: number,
): Promise<number> {
  return rollUpSettledDays(
    deps,
    nowMs,
    job.refetchMs,
    (range) => changedDataLabelDays(deps.warehouse, job.name, range),
    (batch) => computeDataLabelRollups(deps.warehouse, job.name, batch, nowMs),
  );
}

/**
 * The environment rollup: the days of ENVIRONMENT_JOB's rows, settled once they ended longer ago
 * than the job re-fetches. Rows of the job when it is no longer configured are rolled up too
 * (the view reads them); nothing re-fetches them, so their days are settled once they ended.
 */
async function rollUpEnvironments(
  deps: RollupDeps,
  nowMs: number,
): Promise<number> {
  const job = deps.config.aggregations.jobs.find(
    (j) => j.name === ENVIRONMENT_JOB && j.enabled,
  );
  return rollUpSettledDays(
    deps,
    nowMs,
    job?.refetchMs ?? 0,
    (range) => changedEnvironmentDays(deps.warehouse, range),
    (batch) => computeEnvironmentRollups(deps.warehouse, batch, nowMs),
  );
}

/**
 * Computes the days of an aggregation job's rollup that changed within the histogram's retention
 * and ended longer than `refetchMs` ago, DAYS_PER_INSERT at a time; returns how many.
 */
async function rollUpSettledDays(
  deps: RollupDeps,
  nowMs: number,
  refetchMs: number,
  changedDays: (range: {
    fromDay: string;
    toDay: string;
  }) => Promise<ChangedDay[]>,
  compute: (batch: ChangedDay[]) => Promise<void>,
): Promise<number> {
  const retention = deps.config.retention.tables.agg_histogram.retentionDays;
  const changed = await changedDays({
    fromDay: firstWholeDay(nowMs, retention),
    toDay: dayOf(nowMs),
  });
  const settledBefore = dayOf(nowMs - refetchMs);
  const settled = changed.filter((d) => nextDay(d.day) <= settledBefore);
  for (const batch of chunks(settled, DAYS_PER_INSERT)) {
    deps.signal?.throwIfAborted();
    await compute(batch);
  }
  return settled.length;
}

/** The aggregation jobs whose first group-by field is the returned data label. */
function dataLabelJobs(config: Config): AggregationJobConfig[] {
  return config.aggregations.jobs.filter(
    (j) => j.enabled && j.groupBy[0] === DATA_LABEL_FIELD,
  );
}

/**
 * The first day all of whose rows are still kept under `retentionDays` (0 = every day): a
 * day the TTL has begun to delete would be computed from what is left of it.
 */
function firstWholeDay(nowMs: number, retentionDays: number): string {
  if (retentionDays === 0) return "1970-01-01";
  return dayOf(nowMs - (retentionDays - 1) * DAY_MS);
}

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function nextDay(day: string): string {
  return dayOf(Date.parse(`${day}T00:00:00Z`) + DAY_MS);
}

function chunks(days: readonly ChangedDay[], n: number): ChangedDay[][] {
  const out: ChangedDay[][] = [];
  for (let i = 0; i < days.length; i += n) out.push(days.slice(i, i + n));
  return out;
}
