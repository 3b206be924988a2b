// The one engine entry of every stream: `syncStream` reads a stream as its entry in the
// catalogue says (stream-specs.ts), by the reader of the entry's read kind. The scheduler's jobs
// and `sessionhouse sync` run every stream through it; a stream's name chooses its entry, and
// the entry's read kind its reader, never the name.
import type { AggregationJobConfig } from "../config/index.js";
import {
  syncAggregations,
  type AggregationSyncOptions,
  type AggregationSyncResult,
} from "./aggregations.js";
import type { JobContext } from "./context.js";
import { syncEntityStream, type EntityStreamResult } from "./entity-streams.js";
import type { EntityStream, StreamName } from "./names.js";
import {
  syncSessions,
  type SessionSyncOptions,
  type SessionSyncResult,
} from "./session-sync.js";
import { STREAM_SPECS, type ReadKindOf } from "./stream-specs.js";

/** One run of an entity stream: the time of the read (default now). */
interface DirectoryRun {
  options: { nowMs?: number | undefined };
  result: EntityStreamResult;
}

/** What a run of each read kind is given and gives back: one entry per kind. */
interface KindRuns {
  sessionWindows: { options: SessionSyncOptions; result: SessionSyncResult };
  aggregationWindows: {
    /** The aggregation job whose stream is synced. */
    options: AggregationSyncOptions & { job: AggregationJobConfig };
    result: AggregationSyncResult;
  };
  listing: DirectoryRun;
  perParent: DirectoryRun;
  get: DirectoryRun;
}

export type StreamOptions<S extends StreamName> =
  KindRuns[ReadKindOf<S>]["options"];
export type StreamResult<S extends StreamName> =
  KindRuns[ReadKindOf<S>]["result"];

/** A run of one stream with its options, as a scheduled job holds it. */
export type StreamJob = {
  [S in StreamName]: { stream: S; options: StreamOptions<S> };
}[StreamName];

/** Runs stream `stream` once, as its entry's read kind says. */
export async function syncStream<S extends StreamName>(
  ctx: JobContext,
  stream: S,
  options: StreamOptions<S>,
): Promise<StreamResult<S>> {
  const read = STREAM_SPECS[stream].read;
  switch (read.kind) {
    case "sessionWindows":
      return syncSessions(ctx, options);
    case "aggregationWindows": {
      // The compiler does not follow a generic S from the entry's kind to its options: they
      // are this kind's by StreamOptions, which reads the same entry.
      const o = options as KindRuns["aggregationWindows"]["options"];
      return syncAggregations(ctx, o.job, o);
    }
    case "listing":
    case "perParent":
    case "get":
      return syncEntityStream(
        ctx,
        // The entity streams' entries are the ones of these kinds (stream-specs.ts).
        stream as EntityStream,
        options.nowMs,
      );
  }
}

/**
 * The name a stream job's rows and windows go by in the stream's tables: an aggregation job's
 * name (its rows in the agg_ tables, its windows in stream_windows), else the stream's (the
 * sessions windows, an entity stream's tables and failed parents).
 */
export function streamKey(job: StreamJob): string {
  return "job" in job.options ? job.options.job.name : job.stream;
}
