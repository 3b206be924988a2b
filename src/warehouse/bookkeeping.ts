// Checkpoints, dead letters and runs: the tables that say how far the data is, what could not
// be stored, and how each run went (migrations/0003_bookkeeping.sql).
import { createHash } from "node:crypto";
import type { Warehouse } from "./client.js";
import { qualified } from "./sql.js";
import { consistentReadSettings } from "./cluster.js";
import { chTime, fromChTime } from "./format.js";
import { insertRows, insertVersions, type InsertOptions } from "./insert.js";
import { selectLogged, selectRows, type QueryLog } from "./select.js";
import { Tables } from "./tables.js";
import type { ProcessOwner } from "../util/process.js";

export interface Checkpoint {
  stream: string;
  positionMs: number;
  detail: Record<string, unknown>;
  updatedAtMs: number;
}

// A stream's checkpoint is its row with the greatest position (the latest of those on a tie),
// not the latest row: a late write of an older position, from a second process that has not
// yet stopped, never moves a read back. writeCheckpoint does not write behind the stored
// position, and merges keep a stream's greatest position (the table's version column,
// migrations/0034), so neither does a merge (docs/scale-out.md).
/**
 * Which row of a stream's checkpoints is its position: the greatest one (a later write behind it
 * never wins), the latest of those on a tie. Every reader of checkpoints (status, the runs,
 * the coverage report) orders by it.
 */
const CHECKPOINT_OF_STREAM =
  "ORDER BY stream, position DESC, updated_at DESC LIMIT 1 BY stream";

const CHECKPOINT_ROWS = (w: Warehouse, where: string) =>
  `SELECT stream, position, detail, updated_at FROM ${qualified(w, Tables.checkpoints)}
   WHERE ${where}
   ${CHECKPOINT_OF_STREAM}`;

interface CheckpointRow {
  stream: string;
  position: string;
  detail: string;
  updated_at: string;
}

function checkpointOf(row: CheckpointRow): Checkpoint {
  return {
    stream: row.stream,
    positionMs: fromChTime(row.position),
    detail: row.detail
      ? (JSON.parse(row.detail) as Record<string, unknown>)
      : {},
    updatedAtMs: fromChTime(row.updated_at),
  };
}

export async function readCheckpoint(
  w: Warehouse,
  stream: string,
): Promise<Checkpoint | undefined> {
  const rs = await w.client.query({
    query: CHECKPOINT_ROWS(w, "stream = {stream:String}"),
    query_params: { stream },
    format: "JSONEachRow",
    clickhouse_settings: consistentReadSettings(w),
  });
  const [row] = await rs.json<CheckpointRow>();
  return row ? checkpointOf(row) : undefined;
}

export async function readCheckpoints(
  w: Warehouse,
  prefix = "",
  log?: QueryLog,
): Promise<Checkpoint[]> {
  const rows = await selectLogged<CheckpointRow>(
    w,
    {
      id: "status.checkpoints",
      sql: CHECKPOINT_ROWS(w, "startsWith(stream, {prefix:String})"),
      params: { prefix },
    },
    log,
    consistentReadSettings(w),
  );
  return rows.map(checkpointOf);
}

/**
 * The key of a checkpoint's detail that holds where the stream's data is complete from (epoch
 * ms): the start of its first sync (src/pipeline/range.ts).
 */
export const COVERS_FROM_KEY = "coversFromMs";

/**
 * Records a position; call it only after every row the position covers was inserted. A
 * position behind the stored one is not written (false): another process moved the stream
 * further, and the checkpoint never moves back.
 */
export async function writeCheckpoint(
  w: Warehouse,
  stream: string,
  positionMs: number,
  detail: Record<string, unknown>,
  options: InsertOptions,
): Promise<boolean> {
  const stored = await readCheckpoint(w, stream);
  if (stored && stored.positionMs > positionMs) {
    options.logger?.warn(
      {
        stream,
        position: new Date(positionMs).toISOString(),
        stored: new Date(stored.positionMs).toISOString(),
      },
      "checkpoint not moved back: another process stored a later position",
    );
    return false;
  }
  await insertVersions(
    w,
    Tables.checkpoints,
    [
      {
        stream,
        position: chTime(positionMs),
        detail: JSON.stringify(detail),
      },
    ],
    options,
  );
  return true;
}

/** A record that could not be stored: its id ("" when unknown), why, and the record as received. */
interface DeadLetter {
  recordId: string;
  reason: string;
  raw: string;
}

/** The job and run that met the dead letters. */
interface DeadLetterRun {
  job: string;
  runId: string;
}

function deadLetterRow(
  d: DeadLetter,
  run: DeadLetterRun,
  seenAtMs: number,
): object {
  return {
    job: run.job,
    record_hash: createHash("sha256").update(d.raw).digest("hex").slice(0, 32),
    record_id: d.recordId,
    reason: d.reason,
    raw: d.raw,
    seen_at: chTime(seenAtMs),
    run_id: run.runId,
  };
}

export async function insertDeadLetters(
  w: Warehouse,
  run: DeadLetterRun,
  letters: readonly DeadLetter[],
  options: InsertOptions,
): Promise<void> {
  const now = Date.now();
  await insertRows(
    w,
    Tables.deadLetters,
    letters.map((d) => deadLetterRow(d, run, now)),
    options,
  );
}

/**
 * How a run stands: going, or how it ended. `abandoned`: it was still `running` when a later
 * command on its host found its process gone (killed, crashed, the machine restarted).
 */
export type RunStatus =
  "running" | "succeeded" | "failed" | "aborted" | "abandoned";

export interface RunRecord {
  runId: string;
  job: string;
  startedAtMs: number;
  finishedAtMs?: number | undefined;
  status: RunStatus;
  pages: number;
  rowsInserted: number;
  deadLetters: number;
  retries: number;
  error: string;
  /** The process that runs it (absent: not known, as in rows from before owners were kept). */
  owner?: ProcessOwner | undefined;
}

export async function recordRun(
  w: Warehouse,
  run: RunRecord,
  options: InsertOptions,
): Promise<void> {
  await insertRows(
    w,
    Tables.runs,
    [
      {
        run_id: run.runId,
        job: run.job,
        started_at: chTime(run.startedAtMs),
        finished_at:
          run.finishedAtMs === undefined ? null : chTime(run.finishedAtMs),
        status: run.status,
        pages: run.pages,
        rows_inserted: run.rowsInserted,
        dead_letters: run.deadLetters,
        retries: run.retries,
        error: run.error,
        updated_at: chTime(run.finishedAtMs ?? run.startedAtMs),
        owner_host: run.owner?.host ?? "",
        owner_pid: run.owner?.pid ?? 0,
        owner_start: run.owner?.start ?? "",
      },
    ],
    options,
  );
}

interface RunRow {
  job: string;
  run_id: string;
  status: RunStatus;
  started_at: string;
  finished_at: string | null;
  pages: string | number;
  rows_inserted: string | number;
  dead_letters: string | number;
  retries: string | number;
  error: string;
  /** Read only where the owner is needed (status reads warehouses migrated by older versions). */
  owner_host?: string;
  owner_pid?: string | number;
  owner_start?: string;
}

const RUN_COLUMNS =
  "job, run_id, status, started_at, finished_at, pages, rows_inserted, dead_letters, retries, error";
const OWNER_COLUMNS = "owner_host, owner_pid, owner_start";

function runRecord(r: RunRow): RunRecord {
  return {
    runId: r.run_id,
    job: r.job,
    startedAtMs: fromChTime(r.started_at),
    finishedAtMs: r.finished_at ? fromChTime(r.finished_at) : undefined,
    status: r.status,
    pages: Number(r.pages),
    rowsInserted: Number(r.rows_inserted),
    deadLetters: Number(r.dead_letters),
    retries: Number(r.retries),
    error: r.error,
    owner:
      Number(r.owner_pid ?? 0) > 0
        ? {
            host: r.owner_host ?? "",
            pid: Number(r.owner_pid),
            start: r.owner_start ?? "",
          }
        : undefined,
  };
}

/** The latest run of each of `jobs` (FINAL: a run's end supersedes its start). */
export async function lastRuns(
  w: Warehouse,
  jobs: readonly string[],
): Promise<RunRecord[]> {
  const rows = await selectRows<RunRow>(
    w,
    `SELECT ${RUN_COLUMNS}
     FROM ${qualified(w, Tables.runs)} FINAL WHERE job IN {jobs:Array(String)}
     ORDER BY started_at DESC LIMIT 1 BY job`,
    { jobs },
  );
  return rows.map(runRecord);
}

/** A time range, end excluded, in epoch milliseconds. */
interface MsRange {
  fromMs: number;
  toMs: number;
}

/** The runs of one job started in a range, by how they ended. */
export interface RunCounts {
  job: string;
  succeeded: number;
  failed: number;
  /** Found running with its process gone (killed, crashed). */
  abandoned: number;
  /** Running or aborted. */
  other: number;
  rowsInserted: number;
  deadLetters: number;
}

/** Per job, the runs started in `range` by how they ended, with the rows and dead letters. */
export async function runCountsIn(
  w: Warehouse,
  range: MsRange,
  log?: QueryLog,
): Promise<RunCounts[]> {
  const rows = await selectLogged<Record<string, string | number>>(
    w,
    {
      id: "status.run_counts",
      sql: `SELECT job, countIf(status = 'succeeded') AS succeeded, countIf(status = 'failed') AS failed,
       countIf(status = 'abandoned') AS abandoned,
       countIf(status NOT IN ('succeeded', 'failed', 'abandoned')) AS other,
       sum(rows_inserted) AS rows_inserted, sum(dead_letters) AS dead_letters
FROM ${qualified(w, Tables.runs)} FINAL
WHERE started_at >= {from:DateTime64(3, 'UTC')} AND started_at < {to:DateTime64(3, 'UTC')}
GROUP BY job
ORDER BY job`,
      params: { from: chTime(range.fromMs), to: chTime(range.toMs) },
    },
    log,
  );
  return rows.map((r) => ({
    job: String(r.job),
    succeeded: Number(r.succeeded),
    failed: Number(r.failed),
    abandoned: Number(r.abandoned),
    other: Number(r.other),
    rowsInserted: Number(r.rows_inserted),
    deadLetters: Number(r.dead_letters),
  }));
}

/** The first `limit` failed or abandoned runs started in `range`, in the order they started. */
export async function failedRunsIn(
  w: Warehouse,
  range: MsRange,
  limit: number,
  log?: QueryLog,
): Promise<RunRecord[]> {
  const rows = await selectLogged<RunRow>(
    w,
    {
      id: "status.failed_runs",
      sql: `SELECT ${RUN_COLUMNS}
FROM ${qualified(w, Tables.runs)} AS r FINAL
WHERE r.status IN ('failed', 'abandoned')
  AND r.started_at >= {from:DateTime64(3, 'UTC')} AND r.started_at < {to:DateTime64(3, 'UTC')}
ORDER BY r.started_at, r.job, r.run_id
LIMIT {limit:UInt32}`,
      params: { from: chTime(range.fromMs), to: chTime(range.toMs), limit },
    },
    log,
  );
  return rows.map(runRecord);
}

/** Runs recorded as running for longer than this are not waited for (see earliestRunningStart). */
const RUNNING_HORIZON_MS = 6 * 3_600_000;

/**
 * The earliest start of a run still running, of any job but `exceptJob`: every row such a run
 * writes is fetched at or after its start, so the stored data is complete up to that instant
 * (undefined when nothing else is running). A run recorded as running that started more than
 * RUNNING_HORIZON before `nowMs` is taken as dead (a process killed before `run` marks it
 * abandoned), so that it cannot hold every rule back for ever.
 */
export async function earliestRunningStart(
  w: Warehouse,
  exceptJob: string,
  nowMs: number,
  /** Only runs of these jobs; absent: of every job. */
  onlyJobs?: readonly string[],
): Promise<number | undefined> {
  const rows = await selectRows<{ started: string | null }>(
    w,
    `SELECT min(started_at) AS started FROM (
       SELECT job, started_at, status FROM ${qualified(w, Tables.runs)} FINAL
       WHERE started_at > {since:DateTime64(3, 'UTC')}
     ) WHERE status = 'running' AND job != {job:String}${onlyJobs ? " AND job IN {jobs:Array(String)}" : ""}
     HAVING count() > 0`,
    {
      job: exceptJob,
      since: chTime(nowMs - RUNNING_HORIZON_MS),
      ...(onlyJobs ? { jobs: [...onlyJobs] } : {}),
    },
  );
  const started = rows[0]?.started;
  return started ? fromChTime(started) : undefined;
}

/**
 * Marks `abandoned` every run still `running` whose owner on this host is gone (ownerGone:
 * its pid dead, or reused by a process that started at another time), with the time it was
 * found as its end. Runs of another host, or recorded without an owner, cannot be judged from
 * here and are left as they are. Returns the runs marked.
 */
export async function abandonOrphanedRuns(
  w: Warehouse,
  ownerGone: (owner: ProcessOwner) => boolean | undefined,
  host: string,
  options: InsertOptions,
  nowMs = Date.now(),
): Promise<RunRecord[]> {
  const running = (
    await selectRows<RunRow>(
      w,
      `SELECT ${RUN_COLUMNS}, ${OWNER_COLUMNS}
       FROM ${qualified(w, Tables.runs)} FINAL
       WHERE status = 'running' AND owner_host = {host:String} AND owner_pid > 0`,
      { host },
    )
  ).map(runRecord);
  const gone = running.filter(
    (r) => r.owner !== undefined && ownerGone(r.owner) === true,
  );
  const abandoned = gone.map((r): RunRecord => {
    const owner = r.owner as ProcessOwner;
    return {
      ...r,
      status: "abandoned",
      // Never before the start: updated_at must exceed the running row's for FINAL to keep it.
      finishedAtMs: Math.max(nowMs, r.startedAtMs + 1),
      error: `abandoned: its process (pid ${owner.pid} on ${owner.host}) was gone when a later command started; the run ended without recording how`,
    };
  });
  for (const run of abandoned) await recordRun(w, run, options);
  return abandoned;
}

/** When each of `jobs` last finished a run that succeeded, epoch ms. */
export async function lastSuccesses(
  w: Warehouse,
  jobs: readonly string[],
): Promise<Map<string, number>> {
  const rows = await selectRows<{ job: string; at: string }>(
    w,
    `SELECT job, max(finished_at) AS at FROM ${qualified(w, Tables.runs)} FINAL
     WHERE job IN {jobs:Array(String)} AND status = 'succeeded' GROUP BY job`,
    { jobs },
  );
  return new Map(rows.map((r) => [r.job, fromChTime(r.at)]));
}

/** Dead letters stored per job, of `jobs`. */
export async function deadLetterCounts(
  w: Warehouse,
  jobs: readonly string[],
): Promise<Map<string, number>> {
  const rows = await selectRows<{ job: string; n: string }>(
    w,
    `SELECT job, count() AS n FROM ${qualified(w, Tables.deadLetters)} FINAL
     WHERE job IN {jobs:Array(String)} GROUP BY job`,
    { jobs },
  );
  return new Map(rows.map((r) => [r.job, Number(r.n)]));
}

/**
 * The job whose schedule a checkpoint stream moves on, as SQL over `checkpoints.stream`: the job
 * of the stream's name (sessions, aggregations.<job>, a directory stream), else the job its first
 * part names (detections.<rule> → detections, rollups.session_keys → rollups). The lag alert
 * (dashboards/provisioning/alerting/sessionhouse.yaml) and the "Lag per stream" panel
 * (dashboards/exporter-health.json) copy this text and subtract that job's period;
 * test/unit/dashboards/health-rules.test.ts holds the copies to it.
 */
export const STREAM_JOB_SQL = `if(stream IN (SELECT job FROM ${Tables.jobSchedules}), stream, splitByChar('.', stream)[1])`;

/** A job's schedule as `run` starts it, and its period (the longest gap between two ticks). */
interface JobSchedule {
  job: string;
  schedule: string;
  periodMs: number;
}

/**
 * Records the schedule of every job `run` schedules (migrations/0043_job_schedules.sql): the lag
 * alert and the "Lag per stream" panel judge a stream against its job's period.
 */
export async function recordJobSchedules(
  w: Warehouse,
  schedules: readonly JobSchedule[],
  options: InsertOptions,
  atMs: number = Date.now(),
): Promise<void> {
  if (schedules.length === 0) return;
  await insertRows(
    w,
    Tables.jobSchedules,
    schedules.map((s) => ({
      job: s.job,
      schedule: s.schedule,
      period_seconds: Math.round(s.periodMs / 1000),
      recorded_at: chTime(atMs),
    })),
    options,
  );
}
