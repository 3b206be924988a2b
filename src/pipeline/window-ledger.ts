// The state of a stream's windows during one run (stored in stream_windows,
// migrations/0007_stream_windows.sql): the windows of each aggregation job, keyed by the job's
// name, and those of the sessions stream, keyed "sessions". It decides which windows a run
// fetches, records how each fetch went, and tells how far the checkpoint may move: only over
// the leading windows that are stored, shrunk or skipped by an operator. A window whose fetch
// failed for a reason of its own (windowFailure) stays pending and is fetched again on every run
// until it is stored; after `maxAttempts` failures it is poisoned and waits for an operator.
// A poisoned aggregation window is no longer fetched; a poisoned sessions window still is (the
// sessions checkpoint cannot pass it otherwise), and both hold their checkpoint until skipped.
import { ApiError, refusesEveryCall } from "../api/errors.js";
import { PagingError } from "../sources/session-pages.js";
import type { Window } from "../sources/windows.js";
import {
  readJobWindows,
  SETTLED_STATES,
  type WindowRecord,
  type WindowState,
  writeWindows,
} from "../warehouse/index.js";
import type { JobContext } from "./context.js";

export type WindowOutcome =
  { kind: "stored" } | { kind: "shrunk" } | { kind: "failed"; error: string };

export interface FailedWindow {
  window: Window;
  state: WindowState;
  attempts: number;
  error: string;
}

/**
 * API codes that are not about one window: the same request for any other window would fail the
 * same way (the run was cancelled; the service cannot be reached, is down or rate-limits; the URL
 * names no such service). They fail the run without counting an attempt against the window, so
 * that an outage does not poison every window it meets.
 */
const NOT_THE_WINDOWS: ReadonlySet<string> = new Set([
  "ABORTED",
  "canceled",
  "NETWORK",
  "TLS",
  "unavailable",
  "resource_exhausted",
  "not_found",
  "unimplemented",
  "HTTP_404",
  "HTTP_405",
  "HTTP_429",
  "HTTP_502",
  "HTTP_503",
]);

/**
 * What a failed fetch of one window records in the ledger (its error code and message), or
 * undefined when the failure is not the window's and must fail the run without counting an
 * attempt: the run aborted or shutting down, the API key refused (refusesEveryCall), an API code
 * in NOT_THE_WINDOWS, and anything not raised by the API or the paging of the window (ClickHouse
 * errors, bugs). The rest is the window's, whatever its code: an answer the service refuses to
 * give for it (invalid_argument, out_of_range, failed_precondition), one it does not give in
 * time (deadline_exceeded, TIMEOUT), one that is bad (BAD_RESPONSE, RESPONSE_TOO_LARGE, internal)
 * or paging that does not end (PagingError).
 */
export function windowFailure(
  err: unknown,
  signal: AbortSignal,
): string | undefined {
  if (signal.aborted || refusesEveryCall(err)) return undefined;
  if (err instanceof ApiError)
    return NOT_THE_WINDOWS.has(err.code) ? undefined : err.message;
  if (err instanceof PagingError) return `${err.code}: ${err.message}`;
  return undefined;
}

/**
 * Whether the checkpoint may move over `w`, given the ledger's record of the window starting
 * where it starts: only when that record is settled (stored, shrunk, or skipped by an operator)
 * and covers all of `w`. A window with no record was never stored.
 */
export function windowSettled(
  record: Pick<WindowRecord, "state" | "endMs"> | undefined,
  w: Window,
): boolean {
  return (
    record !== undefined &&
    SETTLED_STATES.has(record.state) &&
    record.endMs >= w.endMs
  );
}

/**
 * A window's state after one fetch of it, from its record before (undefined: none): a stored or
 * shrunk fetch settles it with no attempts counted; a failed one counts one more attempt after
 * earlier failures (pending, poisoned), starting from one otherwise, and poisons the window at
 * `maxAttempts`.
 */
export function nextWindowState(
  before: Pick<WindowRecord, "state" | "attempts"> | undefined,
  outcome: WindowOutcome,
  maxAttempts: number,
): { state: WindowState; attempts: number; lastError: string } {
  if (outcome.kind !== "failed")
    return { state: outcome.kind, attempts: 0, lastError: "" };
  const failing = before?.state === "pending" || before?.state === "poisoned";
  const attempts = (failing ? before.attempts : 0) + 1;
  return {
    state: attempts >= maxAttempts ? "poisoned" : "pending",
    attempts,
    lastError: outcome.error,
  };
}

export class WindowLedger {
  readonly #job: string;
  readonly #maxAttempts: number;
  readonly #byStart = new Map<number, WindowRecord>();

  private constructor(job: string, maxAttempts: number) {
    this.#job = job;
    this.#maxAttempts = maxAttempts;
  }

  /** Loads the job's unsettled windows and every window from `sinceMs` on. */
  static async load(
    ctx: JobContext,
    job: string,
    sinceMs: number,
  ): Promise<WindowLedger> {
    const ledger = new WindowLedger(
      job,
      ctx.config.aggregations.maxWindowAttempts,
    );
    for (const r of await readJobWindows(ctx.warehouse, job, sinceMs))
      ledger.#byStart.set(r.startMs, r);
    return ledger;
  }

  /** Pending windows that start before `beforeMs`: fetched again on their own. */
  pendingBefore(beforeMs: number): Window[] {
    return [...this.#byStart.values()]
      .filter((r) => r.state === "pending" && r.startMs < beforeMs)
      .sort((a, b) => a.startMs - b.startMs)
      .map((r) => ({ startMs: r.startMs, endMs: r.endMs }));
  }

  /** Every poisoned window of the job, oldest first. */
  poisoned(): WindowRecord[] {
    return [...this.#byStart.values()]
      .filter((r) => r.state === "poisoned")
      .sort((a, b) => a.startMs - b.startMs);
  }

  /**
   * Whether a run fetches `w`: not when it is poisoned or skipped, nor when it was settled in
   * full and lies before `refetchFromMs` (its numbers no longer change).
   */
  needsFetch(w: Window, refetchFromMs: number): boolean {
    const r = this.#byStart.get(w.startMs);
    if (!r) return true;
    if (r.state === "poisoned" || r.state === "skipped") return false;
    if (r.state === "pending") return true;
    return r.endMs < w.endMs || w.endMs > refetchFromMs;
  }

  /** Whether an operator skipped a window that holds all of `w`: it is not read, and passed. */
  skipped(w: Window): boolean {
    for (const r of this.#byStart.values())
      if (r.state === "skipped" && r.startMs <= w.startMs && w.endMs <= r.endMs)
        return true;
    return false;
  }

  /** Pending and poisoned windows that lie within [fromMs, toMs). */
  unsettledWithin(fromMs: number, toMs: number): Window[] {
    return [...this.#byStart.values()]
      .filter(
        (r) =>
          (r.state === "pending" || r.state === "poisoned") &&
          r.startMs >= fromMs &&
          r.endMs <= toMs,
      )
      .map((r) => ({ startMs: r.startMs, endMs: r.endMs }));
  }

  /** Whether the checkpoint may move over `w` (windowSettled). */
  settled(w: Window): boolean {
    return windowSettled(this.#byStart.get(w.startMs), w);
  }

  /**
   * Records the outcome of a fetch of each window (after its rows were stored) and returns the
   * windows that failed, with their new state.
   */
  async record(
    ctx: JobContext,
    outcomes: ReadonlyArray<{ window: Window; outcome: WindowOutcome }>,
  ): Promise<FailedWindow[]> {
    const failed: FailedWindow[] = [];
    const records = outcomes.map(({ window, outcome }) => {
      const next = nextWindowState(
        this.#byStart.get(window.startMs),
        outcome,
        this.#maxAttempts,
      );
      if (outcome.kind === "failed")
        failed.push({
          window,
          state: next.state,
          attempts: next.attempts,
          error: outcome.error,
        });
      const record: WindowRecord = {
        job: this.#job,
        parent: "",
        startMs: window.startMs,
        endMs: window.endMs,
        ...next,
        skippedBy: "",
        skipReason: "",
        runId: ctx.runId,
        updatedAtMs: Date.now(),
      };
      this.#byStart.set(window.startMs, record);
      return record;
    });
    await writeWindows(ctx.warehouse, records, ctx.insert);
    return failed;
  }
}
