// The status read model: how far each stream's data is (its checkpoint, its lag), which windows
// wait or were skipped, how the runs went; typed, read from the warehouse only (nothing
// written), so it works beside a running service. `status` (src/ops/status.ts), /readyz and
// /metrics read it, and so do every report's first page and the coverage-and-integrity report
// (src/reports/coverage.ts): each read tells an optional QueryLog the SQL it ran, which a
// report's manifest records.
import { isLiveStream, parseBackfillStream } from "./names.js";
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

/**
 * Where the checkpoint of each stream of `plans` is: live streams only (isLiveStream, the rule
 * the lag alert and panel share), so a backfill never counts as behind.
 */
export async function checkpointPositions(
  w: Warehouse,
  plans: readonly { stream?: string | undefined }[],
  log?: QueryLog,
): Promise<StreamCheckpoint[]> {
  const streams = new Set(plans.flatMap((p) => (p.stream ? [p.stream] : [])));
  return (await allCheckpoints(w, log)).filter(
    (c) => streams.has(c.stream) && isLiveStream(c.stream),
  );
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

/** A part of a period some checkpoint says is complete, and which one ("checkpoint", a backfill). */
export interface CoveredSpan extends Period {
  by: string;
}

/**
 * What of a period a stream's checkpoints say is complete (`known`, in order) and what not
 * (`missing`): the one rule of coverage, which the reports' page one and `archive export` read.
 * The stream's own checkpoint covers from where its first sync started (`coversFromMs`; one that
 * does not say covers everything before its position) up to its position; a backfill's
 * (backfillStream) covers its range from its start up to its position, so a backfill
 * interrupted halfway covers its first part. A checkpoint is written only after the rows it
 * covers are stored. `label` names a backfill's range in `by`.
 */
export function coveredSpans(
  stream: string,
  checkpoints: readonly Omit<StreamCheckpoint, "updatedAtMs">[],
  period: Period,
  label: (range: Period) => string,
): { known: CoveredSpan[]; missing: Period[] } {
  const spans: CoveredSpan[] = [];
  const own = checkpoints.find((c) => c.stream === stream);
  if (own)
    spans.push({
      fromMs: own.coversFromMs ?? -Infinity,
      toMs: own.positionMs,
      by: "checkpoint",
    });
  for (const c of checkpoints) {
    const range = parseBackfillStream(stream, c.stream);
    if (!range) continue;
    spans.push({
      fromMs: range.fromMs,
      toMs: Math.min(c.positionMs, range.toMs),
      by: `backfill ${label(range)}`,
    });
  }
  const known = spans
    .map((k) => ({
      fromMs: Math.max(k.fromMs, period.fromMs),
      toMs: Math.min(k.toMs, period.toMs),
      by: k.by,
    }))
    .filter((k) => k.fromMs < k.toMs)
    .sort((a, b) => a.fromMs - b.fromMs || b.toMs - a.toMs);
  const missing: Period[] = [];
  let at = period.fromMs;
  for (const k of known) {
    if (k.fromMs > at) missing.push({ fromMs: at, toMs: k.fromMs });
    at = Math.max(at, k.toMs);
  }
  if (at < period.toMs) missing.push({ fromMs: at, toMs: period.toMs });
  return { known, missing };
}
