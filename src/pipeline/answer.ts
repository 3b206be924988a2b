// What every stream makes of an answer of the control plane (a page of sessions, a window's
// aggregations, a directory listing or one parent's), one definition for sessions, aggregations
// and the seven directory streams:
//   accepted  the records stored, each under its id;
//   rejected  the records that cannot be stored: a dead letter each, with the reason, the record
//             as received and its id when one can be read ("" when not). A rejected record is
//             never evidence that its object is gone: its id (or, without one, its scope or the
//             whole listing) is kept from every deletion the answer would otherwise prove;
//   proof     what the answer proves: "whole" when it was read to its end and its parts agree,
//             and only then may its window settle or an id it did not return be taken as gone;
//             "bad" when its parts disagree (totals against buckets, a key twice, hits claimed
//             with nothing to show): nothing of it replaces what is stored, its window stays
//             pending and is read again.
// Sessions: the session writer accepts or rejects each record of a page (and a row ClickHouse
// refuses), and a window proves itself whole when its last page ends without a cursor
// (sources/session-pages.ts); only then does the window ledger settle it. Aggregations: a
// window's answer (aggregation-rows.ts) carries its proof, "bad" when its parts disagree
// (aggregation-checks.ts). Directory streams: each parent's listing is an Answer
// (entity-streams.ts), and only a whole one proves an id gone.
// storeRejected is the one place rejected records reach dead_letters, the run's counters and
// the metrics.
import type { JobContext } from "./context.js";
import { insertDeadLetters } from "../warehouse/index.js";

export interface Rejected {
  /** The record's id when one can be read, else "". */
  recordId: string;
  reason: string;
  /** The record as received (secrets removed). */
  raw: string;
  /**
   * The stored objects a listing holding this record cannot prove gone: those whose content
   * `column` holds `value` (an inventory container's datastore or resource). Without it: the
   * record's id, or every object of the listing when the id could not be read.
   */
  scope?: { column: string; value: string };
}

export type Proof = { kind: "whole" } | { kind: "bad"; problem: string };

export interface Answer<R> {
  accepted: R[];
  rejected: Rejected[];
  proof: Proof;
}

/**
 * Stores rejected records in dead_letters under the run, counts them and tells the metrics;
 * logs their number and first reasons at warn (never the records).
 */
export async function storeRejected(
  ctx: JobContext,
  rejected: readonly Rejected[],
): Promise<void> {
  if (rejected.length === 0) return;
  await insertDeadLetters(
    ctx.warehouse,
    { job: ctx.job, runId: ctx.runId },
    rejected,
    ctx.insert,
  );
  ctx.counters.deadLetters += rejected.length;
  ctx.observer.onDeadLetters?.({ job: ctx.job, count: rejected.length });
  ctx.logger.warn(
    {
      count: rejected.length,
      reasons: [...new Set(rejected.map((d) => d.reason))].slice(0, 3),
    },
    "records dead-lettered",
  );
}
