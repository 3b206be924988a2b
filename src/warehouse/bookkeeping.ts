// Checkpoints, dead letters and runs: the tables that say how far the data is, what could not
// be stored, and how each run went (migrations/0003_bookkeeping.sql).
import { createHash } from "node:crypto";
import { qualified, type Warehouse } from "./client.js";
import { consistentReadSettings, SINGLE } from "./cluster.js";
import { chTime, fromChTime } from "./format.js";
import { insertRows, type InsertOptions } from "./insert.js";
import { selectRows } from "./select.js";
import { Tables } from "./tables.js";

export interface Checkpoint {
  stream: string;
  positionMs: number;
  detail: Record<string, unknown>;
  updatedAtMs: number;
}

export async function readCheckpoint(
  w: Warehouse,
  stream: string,
): Promise<Checkpoint | undefined> {
  const rs = await w.client.query({
    query: `SELECT stream, position, detail, updated_at FROM ${qualified(w, Tables.checkpoints)} FINAL WHERE stream = {stream:String}`,
    query_params: { stream },
    format: "JSONEachRow",
    clickhouse_settings: consistentReadSettings(w.cluster ?? SINGLE),
  });
  const [row] = await rs.json<{
    stream: string;
    position: string;
    detail: string;
    updated_at: string;
  }>();
  if (!row) return undefined;
  return {
    stream: row.stream,
    positionMs: fromChTime(row.position),
    detail: row.detail
      ? (JSON.parse(row.detail) as Record<string, unknown>)
      : {},
    updatedAtMs: fromChTime(row.updated_at),
  };
}

export async function readCheckpoints(
  w: Warehouse,
  prefix = "",
): Promise<Checkpoint[]> {
  const rs = await w.client.query({
    query: `SELECT stream, position, detail, updated_at FROM ${qualified(w, Tables.checkpoints)} FINAL WHERE startsWith(stream, {prefix:String}) ORDER BY stream`,
    query_params: { prefix },
    format: "JSONEachRow",
    clickhouse_settings: consistentReadSettings(w.cluster ?? SINGLE),
  });
  return (
    await rs.json<{
      stream: string;
      position: string;
      detail: string;
      updated_at: string;
    }>()
  ).map((row) => ({
    stream: row.stream,
    positionMs: fromChTime(row.position),
    detail: row.detail
      ? (JSON.parse(row.detail) as Record<string, unknown>)
      : {},
    updatedAtMs: fromChTime(row.updated_at),
  }));
}

/** Records a position; call it only after every row the position covers was inserted. */
export async function writeCheckpoint(
  w: Warehouse,
  stream: string,
  positionMs: number,
  detail: Record<string, unknown>,
  options: InsertOptions,
): Promise<void> {
  // updated_at must grow even for two writes in one millisecond, or FINAL could keep the older.
  const now = Math.max(Date.now(), lastWrite + 1);
  lastWrite = now;
  await insertRows(
    w,
    Tables.checkpoints,
    [
      {
        stream,
        position: chTime(positionMs),
        detail: JSON.stringify(detail),
        updated_at: chTime(now),
      },
    ],
    options,
  );
}
let lastWrite = 0;

export interface DeadLetter {
  job: string;
  recordId: string;
  reason: string;
  raw: string;
  runId: string;
}

export function deadLetterRow(d: DeadLetter, seenAtMs: number): object {
  return {
    job: d.job,
    record_hash: createHash("sha256").update(d.raw).digest("hex").slice(0, 32),
    record_id: d.recordId,
    reason: d.reason,
    raw: d.raw,
    seen_at: chTime(seenAtMs),
    run_id: d.runId,
  };
}

export async function insertDeadLetters(
  w: Warehouse,
  letters: readonly DeadLetter[],
  options: InsertOptions,
): Promise<void> {
  const now = Date.now();
  await insertRows(
    w,
    Tables.deadLetters,
    letters.map((d) => deadLetterRow(d, now)),
    options,
  );
}

export type RunStatus = "running" | "succeeded" | "failed" | "aborted";

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
}

/** The latest run of each of `jobs` (FINAL: a run's end supersedes its start). */
export async function lastRuns(
  w: Warehouse,
  jobs: readonly string[],
): Promise<RunRecord[]> {
  const rows = await selectRows<RunRow>(
    w,
    `SELECT job, run_id, status, started_at, finished_at, pages, rows_inserted, dead_letters, retries, error
     FROM ${qualified(w, Tables.runs)} FINAL WHERE job IN {jobs:Array(String)}
     ORDER BY started_at DESC LIMIT 1 BY job`,
    { jobs },
  );
  return rows.map((r) => ({
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
  }));
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
