// Where a sync starts, where it ends and which checkpoint it keeps — the same rules for the
// sessions and for every aggregation job. A backfill (`--from`) keeps a checkpoint of its own,
// so an interrupted one resumes where it stopped and the incremental stream's checkpoint never
// jumps over a range nobody synced. The incremental stream starts from its checkpoint (minus
// what the caller re-reads) and only ever moves it forward: re-read windows lie behind it. Its
// checkpoint keeps where its first sync started (`coversFromMs` in the detail): what it says
// is complete starts there (a backfill's range is in its stream's name).
import { windowLabel } from "../sources/session-pages.js";
import { floorSecond, type Window } from "../sources/windows.js";
import {
  COVERS_FROM_KEY,
  readCheckpoint,
  writeCheckpoint,
} from "../warehouse/index.js";
import { UsageError } from "../util/errors.js";
import type { JobContext } from "./context.js";
import { backfillStream } from "./names.js";

/** Earliest instant a sync may cover: sessions cannot predate the service. */
const EPOCH_FLOOR_MS = Date.UTC(2000, 0, 1);

export interface SyncRange {
  startMs: number;
  endMs: number;
  /** The checkpoint stream the sync advances. */
  stream: string;
  /** Where that checkpoint stood, then where the sync moved it. */
  positionMs: number;
  /**
   * Incremental stream: where its first sync started, kept in its checkpoint's detail
   * (undefined for a checkpoint written before it was kept, and for a backfill).
   */
  coversFromMs?: number | undefined;
}

export interface RangeOptions {
  /** The incremental stream; a backfill's stream derives from it. */
  stream: string;
  /** The clock, already floored to a second. */
  nowMs: number;
  fromMs?: number | undefined;
  toMs?: number | undefined;
  /** Aligns a start (window or interval boundaries, whole seconds at least). */
  floorStart: (ms: number) => number;
  /** Start of an incremental sync, from its checkpoint (undefined: never synced). */
  incrementalStart: (checkpointMs: number | undefined, nowMs: number) => number;
}

export async function resolveRange(
  ctx: JobContext,
  o: RangeOptions,
): Promise<SyncRange> {
  if (o.fromMs === undefined) {
    const cp = await readCheckpoint(ctx.warehouse, o.stream);
    const kept = cp?.detail[COVERS_FROM_KEY];
    // A stream whose first sync stored nothing yet starts where that sync started.
    const startMs =
      cp !== undefined && cp.positionMs === kept
        ? cp.positionMs
        : o.floorStart(o.incrementalStart(cp?.positionMs, o.nowMs));
    if (cp === undefined) {
      // The first sync fixes where the stream starts before it reads anything: a first run
      // that stores nothing (its first window fails) leaves the stream starting there, so the
      // next run goes on from it instead of from its own clock, which would leave a hole.
      await writeCheckpoint(
        ctx.warehouse,
        o.stream,
        startMs,
        { [COVERS_FROM_KEY]: startMs },
        ctx.insert,
      );
      return {
        startMs,
        endMs: o.nowMs,
        stream: o.stream,
        positionMs: startMs,
        coversFromMs: startMs,
      };
    }
    return {
      startMs,
      endMs: o.nowMs,
      stream: o.stream,
      positionMs: cp.positionMs,
      coversFromMs: typeof kept === "number" ? kept : undefined,
    };
  }
  let startMs = o.floorStart(o.fromMs);
  const endMs = floorSecond(Math.min(o.toMs ?? o.nowMs, o.nowMs));
  if (startMs < EPOCH_FLOOR_MS)
    throw new UsageError(
      `--from is before ${new Date(EPOCH_FLOOR_MS).toISOString()}`,
    );
  if (startMs >= endMs) {
    throw new UsageError(
      `--from (${new Date(startMs).toISOString()}) must be before --to (${new Date(endMs).toISOString()})`,
      { hint: "swap the two dates, or leave --to out to backfill up to now" },
    );
  }
  const stream = backfillStream(o.stream, startMs, endMs);
  const resume = await readCheckpoint(ctx.warehouse, stream);
  if (resume && resume.positionMs > startMs) {
    ctx.logger.info(
      { stream, resumeFrom: new Date(resume.positionMs).toISOString() },
      "resuming an interrupted backfill",
    );
    startMs = Math.min(resume.positionMs, endMs);
  }
  return { startMs, endMs, stream, positionMs: 0 };
}

/**
 * How many of `planned` (in window order) lie in the settled prefix, given that the first
 * `from` of them are already known to: the count grows over each following window that is
 * settled and stops at the first that is not, so the checkpoint never passes a window that is
 * pending, poisoned or not yet stored, whatever comes after it.
 */
export function settledPrefixEnd<W>(
  planned: readonly W[],
  from: number,
  settled: (w: W) => boolean,
): number {
  let end = from;
  while (end < planned.length && settled(planned[end] as W)) end++;
  return end;
}

/**
 * Where a checkpoint standing at `positionMs` moves once `window` and every window before it are
 * stored: the window's end, or undefined (it stays) when that end is not past it. A checkpoint
 * never moves back: re-read windows lie behind it.
 */
export function checkpointTarget(
  positionMs: number,
  window: Window,
): number | undefined {
  return window.endMs > positionMs ? window.endMs : undefined;
}

/** Moves the range's checkpoint to the end of `window` once its data is stored, never back. */
export async function advanceCheckpoint(
  ctx: JobContext,
  range: SyncRange,
  window: Window,
): Promise<void> {
  const positionMs = checkpointTarget(range.positionMs, window);
  if (positionMs === undefined) return;
  await writeCheckpoint(
    ctx.warehouse,
    range.stream,
    positionMs,
    {
      window: windowLabel(window),
      ...(range.coversFromMs === undefined
        ? {}
        : { [COVERS_FROM_KEY]: range.coversFromMs }),
    },
    ctx.insert,
  );
  range.positionMs = positionMs;
  ctx.observer.onCheckpoint?.({ stream: range.stream, positionMs });
}
