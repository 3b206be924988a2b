// The status read model: how far each stream's data is (its checkpoint, its lag), which windows
// wait or were skipped, how the runs went; typed, read from the warehouse only (nothing
// written), so it works beside a running service. `status` (src/ops/status.ts), /readyz and
// /metrics read it, and so do every report's first page and the coverage-and-integrity report
// (src/reports/coverage.ts): each read tells an optional QueryLog the SQL it ran, which a
// report's manifest records.
import {
  COVERS_FROM_KEY,
  failedRunsIn,
  listWindows,
  readCheckpoints,
  runCountsIn,
  type Checkpoint,
  type QueryLog,
  type RunCounts,
  type RunRecord,
  type Warehouse,
  type WindowRecord,
} from "../warehouse/index.js";

/** A time range, end excluded, in epoch milliseconds. */
export interface Period {
  fromMs: number;
  toMs: number;
}

/** A stream's checkpoint as the read model gives it. */
export interface StreamCheckpoint {
  stream: string;
  positionMs: number;
  /** Where the stream's data is complete from (its first sync's start); undefined: not recorded. */
  coversFromMs: number | undefined;
  updatedAtMs: number;
}

function streamCheckpoint(c: Checkpoint): StreamCheckpoint {
  const from = c.detail[COVERS_FROM_KEY];
  return {
    stream: c.stream,
    positionMs: c.positionMs,
    coversFromMs: typeof from === "number" ? from : undefined,
    updatedAtMs: c.updatedAtMs,
  };
}

/** Every stream's checkpoint, the backfills' included. */
export async function allCheckpoints(
  w: Warehouse,
  log?: QueryLog,
): Promise<StreamCheckpoint[]> {
  return (await readCheckpoints(w, "", log)).map(streamCheckpoint);
}

/** Where the checkpoint of each stream of `plans` is; other streams (backfills) are left out. */
export async function checkpointPositions(
  w: Warehouse,
  plans: readonly { stream?: string | undefined }[],
  log?: QueryLog,
): Promise<StreamCheckpoint[]> {
  const streams = new Set(plans.flatMap((p) => (p.stream ? [p.stream] : [])));
  return (await allCheckpoints(w, log)).filter((c) => streams.has(c.stream));
}

/** How far a checkpoint is behind now, in milliseconds (0 for a position in the future). */
export function checkpointLagMs(positionMs: number, nowMs: number): number {
  return Math.max(0, nowMs - positionMs);
}

/** The windows that wait, pending or poisoned, of every job that keeps windows. */
export async function waitingWindows(
  w: Warehouse,
  log?: QueryLog,
): Promise<WindowRecord[]> {
  return listWindows(w, { states: ["pending", "poisoned"] }, log);
}

/** The windows overlapping a period that are not stored (pending, poisoned) or were skipped. */
export async function unsettledWindowsIn(
  w: Warehouse,
  period: Period,
  log?: QueryLog,
): Promise<WindowRecord[]> {
  return listWindows(
    w,
    { states: ["pending", "poisoned", "skipped"], overlapping: period },
    log,
  );
}

/**
 * Unsettled windows by what they wait for: `pending` ones are fetched again on the next run;
 * every other (`poisoned`, or one read without its state) waits for an operator.
 */
export function splitUnsettled<W extends { state?: string }>(
  windows: readonly W[],
): { pending: W[]; poisoned: W[] } {
  const pending: W[] = [];
  const poisoned: W[] = [];
  for (const w of windows) (w.state === "pending" ? pending : poisoned).push(w);
  return { pending, poisoned };
}

/** Per job, the runs started in a period by how they ended (abandoned ones apart). */
export async function runsIn(
  w: Warehouse,
  period: Period,
  log?: QueryLog,
): Promise<RunCounts[]> {
  return runCountsIn(w, period, log);
}

/** The first `limit` failed or abandoned runs started in a period, with their error. */
export async function failedRunsOf(
  w: Warehouse,
  period: Period,
  limit: number,
  log?: QueryLog,
): Promise<RunRecord[]> {
  return failedRunsIn(w, period, limit, log);
}
