// The state of an aggregation job's windows during one run (stored in stream_windows,
// migrations/0007_stream_windows.sql). It decides which windows a run fetches, records how each
// fetch went, and tells how far the checkpoint may move: only over the leading windows that are
// stored, shrunk or skipped by an operator. A window whose answer was bad stays pending and is
// fetched again on every run until it is stored; after `maxAttempts` failures it is poisoned and
// no longer fetched until an operator skips it.
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

  /** Whether the checkpoint may move over `w`. */
  settled(w: Window): boolean {
    const r = this.#byStart.get(w.startMs);
    return r !== undefined && SETTLED_STATES.has(r.state) && r.endMs >= w.endMs;
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
      const before = this.#byStart.get(window.startMs);
      let state: WindowState;
      let attempts = 0;
      let lastError = "";
      if (outcome.kind === "failed") {
        attempts = (before?.state === "pending" ? before.attempts : 0) + 1;
        state = attempts >= this.#maxAttempts ? "poisoned" : "pending";
        lastError = outcome.error;
        failed.push({ window, state, attempts, error: outcome.error });
      } else {
        state = outcome.kind;
      }
      const record: WindowRecord = {
        job: this.#job,
        startMs: window.startMs,
        endMs: window.endMs,
        state,
        attempts,
        lastError,
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
