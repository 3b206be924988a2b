// Reconciliation: a range is listed again window by window, through the same writer as the
// sync, to store what the incremental sync missed — a session first listed more than the
// lookback after its start lies behind every window the sync still re-reads. Per window, the
// sessions listed are compared with the sessions stored. It never moves a checkpoint, and a
// pass is safe to repeat (rows collapse to one per session).
import { IdHashSet } from "../sources/id-set.js";
import { ApiError } from "../api/errors.js";
import {
  windowLabel,
  idOf,
  PagingError,
  type RawRecord,
} from "../sources/session-pages.js";
import { FatalError } from "../util/errors.js";
import { floorSecond, type Window } from "../sources/windows.js";
import { readCheckpoint, storedSessionIds } from "../warehouse/index.js";
import type { JobContext } from "./context.js";
import { sessionWindows, syncWindow } from "./session-sync.js";
import { SESSIONS_STREAM } from "./names.js";

const DAY_MS = 86_400_000;

export interface ReconcileOptions {
  fromMs: number;
  toMs: number;
}

export interface ReconcileResult {
  startMs: number;
  endMs: number;
  windows: number;
  /** Distinct session ids listed, over all windows. */
  listed: number;
  /** Sessions listed that were not stored before this pass, and are now. */
  missing: number;
  /** Windows whose listed and stored session counts differ after the pass. */
  differing: number;
  rows: number;
  deadLetters: number;
}

export interface RecentRange {
  fromMs: number;
  toMs: number;
  /** False when the sessions stream has no checkpoint yet (the range then ends now). */
  checkpointed: boolean;
}

/**
 * The `days` before the sessions checkpoint. Sessions after it are the incremental sync's to
 * store: counted here, they would all look missing.
 */
export async function recentRange(
  ctx: JobContext,
  days: number,
  nowMs: number,
): Promise<RecentRange> {
  const cp = await readCheckpoint(ctx.warehouse, SESSIONS_STREAM);
  const toMs = floorSecond(Math.min(cp?.positionMs ?? nowMs, nowMs));
  return { fromMs: toMs - days * DAY_MS, toMs, checkpointed: cp !== undefined };
}

export async function reconcileSessions(
  ctx: JobContext,
  options: ReconcileOptions,
): Promise<ReconcileResult> {
  const startMs = floorSecond(options.fromMs);
  const endMs = floorSecond(options.toMs);
  const windows = sessionWindows(ctx, startMs, endMs, "reconciling sessions");
  const result: ReconcileResult = {
    startMs,
    endMs,
    windows: windows.length,
    listed: 0,
    missing: 0,
    differing: 0,
    rows: 0,
    deadLetters: 0,
  };
  let done = 0;
  const failed: { window: Window; err: Error }[] = [];
  for (const window of windows) {
    try {
      addWindow(ctx, result, window, await reconcileWindow(ctx, window));
    } catch (err) {
      if (!isWindowFailure(ctx, err)) throw err;
      // A window the service cannot page (a cursor loop, an answer that stays bad) must not
      // keep the windows after it from being reconciled: they go on, and the run fails after.
      failed.push({ window, err });
      ctx.logger.warn(
        { window: windowLabel(window), err: err.message },
        "window not reconciled",
      );
    }
    done++;
    ctx.observer.onProgress?.({
      job: ctx.job,
      windowsDone: done,
      windowsTotal: windows.length,
      rows: result.rows,
      positionMs: window.endMs,
    });
  }
  logSummary(ctx, result);
  if (failed.length > 0) throw incomplete(failed, windows.length);
  return result;
}

/** An API or paging failure of one window, as opposed to one that stops every window. */
function isWindowFailure(ctx: JobContext, err: unknown): err is Error {
  if (ctx.signal.aborted || ctx.budget.refusal !== undefined) return false;
  return err instanceof ApiError || err instanceof PagingError;
}

function incomplete(
  failed: readonly { window: Window; err: Error }[],
  total: number,
): FatalError {
  const first = failed[0] as { window: Window; err: Error };
  return new FatalError(
    "RECONCILE_INCOMPLETE",
    `${failed.length} of ${total} window(s) could not be reconciled (the others were): ${failed
      .slice(0, 5)
      .map((f) => windowLabel(f.window))
      .join(
        ", ",
      )}${failed.length > 5 ? ", …" : ""}; first: ${first.err.message}`,
    {
      cause: first.err,
      hint: "the next reconciliation lists them again; if the same windows keep failing, see the error above",
    },
  );
}

/**
 * Adds one window's counts to `result`; reports the sessions it stored that were missing, and
 * the window when its listed and stored counts differ.
 */
function addWindow(
  ctx: JobContext,
  result: ReconcileResult,
  window: Window,
  w: WindowReconciled,
): void {
  result.listed += w.listed;
  result.missing += w.missing;
  result.rows += w.rows;
  result.deadLetters += w.deadLetters;
  if (w.missing > 0)
    ctx.observer.onReconcileMissing?.({ job: ctx.job, count: w.missing });
  if (w.listed !== w.stored) {
    result.differing++;
    ctx.observer.onReconcileWindowsDiffering?.({ job: ctx.job, count: 1 });
    ctx.logger.warn(
      { window: windowLabel(window), listed: w.listed, stored: w.stored },
      "sessions listed and stored differ for a window after reconciliation",
    );
  }
}

/** The closing log line: a warning when the pass stored sessions the sync missed. */
function logSummary(ctx: JobContext, result: ReconcileResult): void {
  const summary = {
    windows: result.windows,
    listed: result.listed,
    missing: result.missing,
    differing: result.differing,
  };
  if (result.missing > 0)
    ctx.logger.warn(
      summary,
      "reconciliation stored sessions the incremental sync missed (listed later than SESSIONHOUSE_LOOKBACK after their start); a longer lookback stores them sooner",
    );
  else ctx.logger.info(summary, "sessions reconciled");
}

interface WindowReconciled {
  listed: number;
  stored: number;
  missing: number;
  rows: number;
  deadLetters: number;
}

async function reconcileWindow(
  ctx: JobContext,
  window: Window,
): Promise<WindowReconciled> {
  const before = idSet(await storedSessionIds(ctx.warehouse, window));
  const listed = new IdHashSet();
  /** Listed ids not stored before this pass. */
  const fresh: string[] = [];
  const onRecords = (records: readonly RawRecord[]) => {
    for (const r of records) {
      const id = idOf(r);
      if (id === undefined) continue;
      const size = listed.size;
      listed.add(id, 1);
      if (listed.size > size && before.tagOf(id) === 0) fresh.push(id);
    }
  };
  const { rows, deadLetters } = await syncWindow(ctx, window, onRecords);
  const storedIds = await storedSessionIds(ctx.warehouse, window);
  const after = idSet(storedIds);
  return {
    listed: listed.size,
    stored: storedIds.length,
    missing: fresh.filter((id) => after.tagOf(id) !== 0).length,
    rows,
    deadLetters,
  };
}

function idSet(ids: readonly string[]): IdHashSet {
  const set = new IdHashSet();
  for (const id of ids) set.add(id, 1);
  return set;
}
