// Window bookkeeping (migrations/0004_aggregations.sql and 0007_stream_windows.sql): the state
// of each window of the aggregation jobs and of the sessions stream, what earlier fetches of an
// aggregation window stored, and the definition each aggregation job's rows were made with.
// Every query about them lives here.
import type { Warehouse } from "./client.js";
import { qualified } from "./sql.js";
import { mutationTarget, SINGLE } from "./cluster.js";
import { chTime, chTimeSeconds, fromChTime } from "./format.js";
import { existingTables } from "./migrate.js";
import {
  selectCount,
  selectLogged,
  selectRows,
  type QueryLog,
} from "./select.js";
import { Tables } from "./tables.js";
import { insertRows, versionWriter, type InsertOptions } from "./insert.js";

export const WINDOW_STATES = [
  "pending",
  "stored",
  "shrunk",
  "poisoned",
  "skipped",
] as const;
export type WindowState = (typeof WINDOW_STATES)[number];

/** States the aggregation checkpoint may move over. */
export const SETTLED_STATES: ReadonlySet<WindowState> = new Set([
  "stored",
  "shrunk",
  "skipped",
]);

export interface WindowRecord {
  /**
   * Aggregation job name (as in agg_histogram), "sessions" for the sessions stream, or the
   * entity stream of a parent.
   */
  job: string;
  /**
   * The parent a stream read per parent could not read (a user, a resource), its window empty
   * (0, 0); "" for a window of time.
   */
  parent: string;
  startMs: number;
  endMs: number;
  state: WindowState;
  /** Failed fetches since the window was last stored. */
  attempts: number;
  lastError: string;
  skippedBy: string;
  skipReason: string;
  runId: string;
  updatedAtMs: number;
}

interface WindowRow {
  job: string;
  parent: string;
  window_start: string;
  window_end: string;
  state: string;
  attempts: number | string;
  last_error: string;
  skipped_by: string;
  skip_reason: string;
  run_id: string;
  updated_at: string;
}

const WINDOW_COLUMNS =
  "job, parent, window_start, window_end, state, attempts, last_error, skipped_by, skip_reason, run_id, updated_at";

function fromRow(r: WindowRow): WindowRecord {
  return {
    job: r.job,
    parent: r.parent,
    startMs: fromChTime(r.window_start),
    endMs: fromChTime(r.window_end),
    state: (WINDOW_STATES as readonly string[]).includes(r.state)
      ? (r.state as WindowState)
      : "pending",
    attempts: Number(r.attempts),
    lastError: r.last_error,
    skippedBy: r.skipped_by,
    skipReason: r.skip_reason,
    runId: r.run_id,
    updatedAtMs: fromChTime(r.updated_at),
  };
}

async function selectWindows(
  w: Warehouse,
  where: string,
  params: Record<string, unknown>,
  log?: QueryLog,
): Promise<WindowRecord[]> {
  const rows = await selectLogged<WindowRow>(
    w,
    {
      id: "status.windows",
      sql: `SELECT ${WINDOW_COLUMNS} FROM ${qualified(w, Tables.streamWindows)} FINAL
            WHERE ${where} ORDER BY job, window_start, parent`,
      params,
    },
    log,
  );
  return rows.map(fromRow);
}

/**
 * What a run of `job` needs to know: its windows that are not settled (wherever they are) and
 * every window that ends after `sinceMs` (a skipped window that began before it still covers
 * the range from there on).
 */
export async function readJobWindows(
  w: Warehouse,
  job: string,
  sinceMs: number,
): Promise<WindowRecord[]> {
  return selectWindows(
    w,
    "job = {job:String} AND parent = '' AND (state IN ('pending', 'poisoned') OR window_end > {since:DateTime('UTC')})",
    { job, since: chTimeSeconds(sinceMs) },
  );
}

/**
 * Windows in the given states (all states when none given), of one job or of all, and those
 * overlapping a range (epoch ms, end excluded) only when given; the parents a stream could not
 * read are among them (see WindowRecord.parent). Tells `log` what it ran.
 */
export async function listWindows(
  w: Warehouse,
  filter: {
    job?: string | undefined;
    states?: readonly WindowState[];
    overlapping?: { fromMs: number; toMs: number };
  } = {},
  log?: QueryLog,
): Promise<WindowRecord[]> {
  const states = filter.states ?? WINDOW_STATES;
  const where = ["state IN {states:Array(String)}"];
  const params: Record<string, unknown> = { states };
  if (filter.job !== undefined) {
    where.push("job = {job:String}");
    params.job = filter.job;
  }
  if (filter.overlapping) {
    where.push(
      "window_start < {to:DateTime64(3, 'UTC')} AND window_end > {from:DateTime64(3, 'UTC')}",
    );
    params.from = chTime(filter.overlapping.fromMs);
    params.to = chTime(filter.overlapping.toMs);
  }
  return selectWindows(w, where.join(" AND "), params, log);
}

/** Records window states; the newest write of a window wins (updated_at always grows here). */
export const writeWindows = versionWriter(
  Tables.streamWindows,
  (r: Omit<WindowRecord, "updatedAtMs">) => ({
    job: r.job,
    parent: r.parent,
    window_start: chTimeSeconds(r.startMs),
    window_end: chTimeSeconds(r.endMs),
    state: r.state,
    attempts: r.attempts,
    last_error: r.lastError,
    skipped_by: r.skippedBy,
    skip_reason: r.skipReason,
    run_id: r.runId,
  }),
);

// ---------------------------------------------------------------------------------------------
// What earlier fetches stored

export interface StoredHistogramKey {
  /** bucket_time as ClickHouse prints it. */
  t: string;
  level: number;
  key1: string;
  key2: string;
  key3: string;
  /** window_start as ClickHouse prints it. */
  ws: string;
  /** The stored count, UInt64 as a decimal string. */
  stored_count: string;
}

export interface StoredTopKey {
  ws: string;
  we: string;
  member: string;
  key: string;
}

export interface StoredWindow {
  /** window_start as ClickHouse prints it. */
  ws: string;
  we: string;
  /** numHits as a decimal string (UInt64). */
  numHits: string;
  histogramRows: string;
  fetchedAtMs: number;
}

export interface PreviousFetch {
  histogram: StoredHistogramKey[];
  top: StoredTopKey[];
  windows: Map<string, StoredWindow>;
  /** Latest fetched_at of any of those rows (epoch ms), 0 when there are none. */
  lastFetchMs: number;
}

/** The live rows (count > 0) earlier fetches stored for `job` in [fromMs, toMs). */
export async function readPreviousFetch(
  w: Warehouse,
  job: string,
  fromMs: number,
  toMs: number,
): Promise<PreviousFetch> {
  const span = { job, from: chTimeSeconds(fromMs), to: chTimeSeconds(toMs) };
  const histogram = await selectStored<StoredHistogramKey>(w, span, {
    table: Tables.aggHistogram,
    columns:
      "toString(bucket_time) AS t, level, key1, key2, key3, toString(window_start) AS ws, toString(count) AS stored_count",
    time: "bucket_time",
    live: true,
  });
  const top = await selectStored<StoredTopKey>(w, span, {
    table: Tables.aggTopValues,
    columns:
      "toString(window_start) AS ws, toString(window_end) AS we, member, key",
    time: "window_start",
    live: true,
  });
  const windowRows = await selectStored<StoredWindowRow>(w, span, {
    table: Tables.aggWindows,
    columns:
      "toString(window_start) AS ws, toString(window_end) AS we, toString(num_hits) AS n, toString(histogram_rows) AS h",
    time: "window_start",
    live: false,
  });
  // A loop, not Math.max(...rows): a spread of a few hundred thousand arguments overflows the stack.
  let lastFetchMs = 0;
  for (const rows of [histogram, top, windowRows])
    for (const r of rows) lastFetchMs = Math.max(lastFetchMs, Number(r.f));
  const windows = new Map<string, StoredWindow>();
  for (const r of windowRows)
    windows.set(r.ws, {
      ws: r.ws,
      we: r.we,
      numHits: r.n,
      histogramRows: r.h,
      fetchedAtMs: Number(r.f),
    });
  return { histogram, top, windows, lastFetchMs };
}

interface StoredWindowRow {
  ws: string;
  we: string;
  n: string;
  h: string;
}

/**
 * Rows of one aggregation table for `job` whose `time` column lies in [from, to), each with its
 * fetched_at (epoch ms) as `f`; `live` keeps only rows with count > 0.
 */
async function selectStored<Row>(
  w: Warehouse,
  span: { job: string; from: string; to: string },
  read: {
    table: (typeof Tables)["aggHistogram" | "aggTopValues" | "aggWindows"];
    columns: string;
    time: "bucket_time" | "window_start";
    live: boolean;
  },
): Promise<Array<Row & { f: string | number }>> {
  const rs = await w.client.query({
    query: `SELECT ${read.columns}, toUnixTimestamp64Milli(fetched_at) AS f
            FROM ${qualified(w, read.table)} FINAL
            WHERE job = {job:String} AND ${read.time} >= {from:DateTime('UTC')} AND ${read.time} < {to:DateTime('UTC')}${read.live ? " AND count > 0" : ""}`,
    query_params: span,
    format: "JSONEachRow",
  });
  return rs.json<Row & { f: string | number }>();
}

// ---------------------------------------------------------------------------------------------
// Job definitions

export interface JobDefinition {
  job: string;
  query: string;
  intervalS: number;
  windowMs: number;
  groupBy: readonly string[];
}

export async function readJobDefinition(
  w: Warehouse,
  job: string,
): Promise<(JobDefinition & { recordedAtMs: number }) | undefined> {
  const rs = await w.client.query({
    query: `SELECT job, query, interval_s, toString(window_ms) AS window_ms, group_by, recorded_at
            FROM ${qualified(w, Tables.aggJobs)} FINAL WHERE job = {job:String}`,
    query_params: { job },
    format: "JSONEachRow",
  });
  const [row] = await rs.json<{
    job: string;
    query: string;
    interval_s: number | string;
    window_ms: string;
    group_by: string[];
    recorded_at: string;
  }>();
  if (!row) return undefined;
  return {
    job: row.job,
    query: row.query,
    intervalS: Number(row.interval_s),
    windowMs: Number(row.window_ms),
    groupBy: row.group_by,
    recordedAtMs: fromChTime(row.recorded_at),
  };
}

export async function recordJobDefinition(
  w: Warehouse,
  d: JobDefinition,
  options: InsertOptions,
): Promise<void> {
  await insertRows(
    w,
    Tables.aggJobs,
    [
      {
        job: d.job,
        query: d.query,
        interval_s: d.intervalS,
        window_ms: d.windowMs,
        group_by: d.groupBy,
        recorded_at: chTime(Date.now()),
      },
    ],
    options,
  );
}

/** Tables holding an aggregation job's rows, keyed by `job` (stream_windows apart: forgetJob). */
const JOB_TABLES = [
  Tables.aggHistogram,
  Tables.aggTopValues,
  Tables.aggWindows,
  Tables.aggJobs,
] as const;

/** What forgetJob deleted, counted as a reader sees the rows (FINAL) before and after. */
export interface ForgetResult {
  /** Rows deleted, by table (stream_windows: the job's windows of time). */
  rows: Record<string, number>;
  /** Checkpoints deleted: the job's stream and its backfills. */
  checkpoints: number;
  /** The job's windows an operator skipped: kept, with who and why. */
  keptSkips: WindowRecord[];
}

/** The aggregation jobs the warehouse holds rows of (their definition, or a window stored). */
export async function storedAggregationJobs(w: Warehouse): Promise<string[]> {
  const existing = await existingTables(w);
  const parts = [Tables.aggJobs, Tables.aggWindows]
    .filter((t) => existing.has(t))
    .map((t) => `SELECT DISTINCT job FROM ${qualified(w, t)}`);
  if (parts.length === 0) return [];
  const rows = await selectRows<{ job: string }>(
    w,
    `SELECT DISTINCT job FROM (${parts.join(" UNION ALL ")}) ORDER BY job`,
  );
  return rows.map((r) => r.job);
}

/** The rows of each table, and the checkpoints, that forgetJob deletes, as FINAL reads them. */
async function forgettable(
  w: Warehouse,
  job: string,
  streams: { stream: string; backfillPrefix: string },
): Promise<{ rows: Record<string, number>; checkpoints: number }> {
  const existing = await existingTables(w);
  const rows: Record<string, number> = {};
  for (const table of JOB_TABLES)
    if (existing.has(table))
      rows[table] = await selectCount(
        w,
        `SELECT count() AS n FROM ${qualified(w, table)} FINAL WHERE job = {job:String}`,
        { job },
      );
  if (existing.has(Tables.streamWindows))
    rows[Tables.streamWindows] = await selectCount(
      w,
      `SELECT count() AS n FROM ${qualified(w, Tables.streamWindows)} FINAL WHERE ${JOB_WINDOWS} AND state != 'skipped'`,
      { job },
    );
  const checkpoints = await selectCount(
    w,
    `SELECT count(DISTINCT stream) AS n FROM ${qualified(w, Tables.checkpoints)} WHERE ${JOB_CHECKPOINTS}`,
    { stream: streams.stream, backfill: streams.backfillPrefix },
  );
  return { rows, checkpoints };
}

/** An aggregation job's windows of time in stream_windows (a parent's row is an entity stream's). */
const JOB_WINDOWS = "job = {job:String} AND parent = ''";
/** An aggregation job's checkpoints: its stream and every backfill of it. */
const JOB_CHECKPOINTS =
  "stream = {stream:String} OR startsWith(stream, {backfill:String})";

/**
 * Deletes every row of an aggregation job and its checkpoints (incremental and backfills), so
 * that the job starts again from nothing under its current definition. A window an operator
 * skipped stays, with who and why: that decision is part of the record, and the job does not
 * read the window again. Returns what was deleted, counted before and after.
 */
export async function forgetJob(
  w: Warehouse,
  job: string,
  streams: { stream: string; backfillPrefix: string },
): Promise<ForgetResult> {
  const before = await forgettable(w, job, streams);
  const keptSkips = (await hasWindowTables(w))
    ? (await listWindows(w, { job, states: ["skipped"] })).filter(
        (r) => r.parent === "",
      )
    : [];
  const existing = await existingTables(w);
  const mutate = async (
    table: string,
    where: string,
    params: Record<string, unknown>,
  ) => {
    if (!existing.has(table)) return;
    await w.client.command({
      query: `ALTER TABLE ${mutationTarget(w.cluster ?? SINGLE, w.database, table)} DELETE WHERE ${where}`,
      query_params: params,
      clickhouse_settings: { mutations_sync: "2" },
    });
  };
  for (const table of JOB_TABLES)
    await mutate(table, "job = {job:String}", { job });
  await mutate(
    Tables.streamWindows,
    `${JOB_WINDOWS} AND window_start NOT IN {kept:Array(DateTime('UTC'))}`,
    { job, kept: keptSkips.map((r) => chTimeSeconds(r.startMs)) },
  );
  await mutate(Tables.checkpoints, JOB_CHECKPOINTS, {
    stream: streams.stream,
    backfill: streams.backfillPrefix,
  });
  const after = await forgettable(w, job, streams);
  const rows: Record<string, number> = {};
  for (const [table, n] of Object.entries(before.rows))
    rows[table] = n - (after.rows[table] ?? 0);
  return {
    rows,
    checkpoints: before.checkpoints - after.checkpoints,
    keptSkips,
  };
}

const AGGREGATION_ROW_TABLES = [
  Tables.aggHistogram,
  Tables.aggTopValues,
  Tables.aggWindows,
] as const;

/**
 * Rows stored for an aggregation job per table, of the tables that exist. Count-0 rows, which
 * a re-fetch writes for buckets that vanished, hold nothing and are not counted.
 */
export async function aggregationRowCounts(
  w: Warehouse,
  job: string,
  existing: ReadonlySet<string>,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of AGGREGATION_ROW_TABLES) {
    if (!existing.has(table)) continue;
    const live = table === Tables.aggWindows ? "" : " AND count > 0";
    counts[table] = await selectCount(
      w,
      `SELECT count() AS n FROM ${qualified(w, table)} FINAL WHERE job = {job:String}${live}`,
      { job },
    );
  }
  return counts;
}

/** Whether migrations/0007_stream_windows.sql was applied to this database. */
/** The jobs with a window or a parent in stream_windows, in any state; none without the table. */
export async function windowJobs(w: Warehouse): Promise<string[]> {
  if (!(await hasWindowTables(w))) return [];
  const rows = await selectRows<{ job: string }>(
    w,
    `SELECT DISTINCT job FROM ${qualified(w, Tables.streamWindows)} ORDER BY job`,
  );
  return rows.map((r) => r.job);
}

export async function hasWindowTables(w: Warehouse): Promise<boolean> {
  return (await existingTables(w)).has(Tables.streamWindows);
}
