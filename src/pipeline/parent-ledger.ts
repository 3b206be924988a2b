// The parents a stream read per parent could not read (a user's devices, a resource's native
// users, a user by id), kept in stream_windows with the parent named (migrations/0030): a parent
// whose read fails is pending, poisoned after aggregations.maxWindowAttempts failures in a row,
// and stays so until it answers. It holds the stream's checkpoint until then, unless an operator
// skipped it (`windows skip STREAM --parent ID`, recorded with who and why); a skipped parent is
// still read on every run, and its skip ends the first time it answers. Its stored objects stay
// as they were whatever its state.
import {
  listWindows,
  type WindowRecord,
  type WindowState,
  writeWindows,
} from "../warehouse/index.js";
import type { JobContext } from "./context.js";

/** A parent whose read failed this run, the code it failed with (recorded) and its message. */
export interface ParentFailure {
  parent: string;
  code: string;
  /** What the failure said (the run's error quotes the first one); not recorded. */
  message?: string;
}

export class ParentLedger {
  readonly #stream: string;
  readonly #byParent: ReadonlyMap<string, WindowRecord>;

  private constructor(stream: string, records: readonly WindowRecord[]) {
    this.#stream = stream;
    this.#byParent = new Map(records.map((r) => [r.parent, r]));
  }

  /** The stream's parents that are not stored: pending, poisoned or skipped. */
  static async load(ctx: JobContext, stream: string): Promise<ParentLedger> {
    const records = await listWindows(ctx.warehouse, {
      job: stream,
      states: ["pending", "poisoned", "skipped"],
    });
    return new ParentLedger(
      stream,
      records.filter((r) => r.parent !== ""),
    );
  }

  /**
   * Records how this run went for the parents that failed and for those that answered after an
   * earlier failure; returns the failures that hold the checkpoint (every one not skipped).
   */
  async record(
    ctx: JobContext,
    answered: ReadonlySet<string>,
    failures: readonly ParentFailure[],
  ): Promise<ParentFailure[]> {
    const maxAttempts = ctx.config.aggregations.maxWindowAttempts;
    const entry = (
      parent: string,
      state: WindowState,
      attempts: number,
      lastError: string,
      before: WindowRecord | undefined,
    ): Omit<WindowRecord, "updatedAtMs"> => ({
      job: this.#stream,
      parent,
      startMs: 0,
      endMs: 0,
      state,
      attempts,
      lastError,
      skippedBy: state === "skipped" ? (before?.skippedBy ?? "") : "",
      skipReason: state === "skipped" ? (before?.skipReason ?? "") : "",
      runId: ctx.runId,
    });
    const holding: ParentFailure[] = [];
    const records = failures.map((f) => {
      const before = this.#byParent.get(f.parent);
      const attempts = (before?.attempts ?? 0) + 1;
      if (before?.state === "skipped")
        return entry(f.parent, "skipped", attempts, f.code, before);
      holding.push(f);
      const state = attempts >= maxAttempts ? "poisoned" : "pending";
      return entry(f.parent, state, attempts, f.code, before);
    });
    for (const [parent, before] of this.#byParent)
      if (answered.has(parent))
        records.push(entry(parent, "stored", 0, "", before));
    if (records.length > 0)
      await writeWindows(ctx.warehouse, records, ctx.insert);
    return holding;
  }
}
