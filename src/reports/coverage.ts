// What the record covers over a report's period, said on every report's first page: the parts of
// the period no checkpoint covers (a stream's own, or a backfill's over its range), windows not
// stored or skipped (who and why), dead letters, a record that starts after the period does,
// streams not exported. The coverage-and-integrity report shows the tables behind it. The
// checkpoints, windows and runs are read through the status read model (src/pipeline/status.ts),
// the one `status` reads; the manifest records the SQL it ran.
import { SESSIONS_STREAM } from "../pipeline/names.js";
import {
  allCheckpoints,
  coveredSpans,
  failedRunsOf,
  runsIn,
  unsettledWindowsIn,
  type Period,
} from "../pipeline/status.js";
import {
  coverageQueries,
  type ReportQuery,
  type ReportReader,
  type Row,
} from "../warehouse/index.js";
import type { KindContext } from "./kinds/context.js";
import type { Notice } from "./model.js";
import type { TableRead, TableSpec } from "./spec.js";

/** A part of the period, in UTC ("2026-11-01 00:00:00"), end excluded. */
export interface Span {
  from: string;
  to: string;
}

/** A part of the period known complete, and the checkpoint that says so. */
export interface KnownSpan extends Span {
  /** "checkpoint" (the stream's own), or "backfill <from> to <to>" (its range, UTC). */
  by: string;
}

export interface StreamCoverage {
  stream: string;
  /** The stream's own checkpoint (null: none). */
  checkpoint: string | null;
  /** Parts of the period known complete: before the stream's checkpoint, or in a backfill's range up to its checkpoint. */
  known: KnownSpan[];
  /** Parts of the period no checkpoint covers: their data may be missing. */
  missing: Span[];
  complete: boolean;
}

export interface Coverage {
  /** Per stream the report relies on: what of the period is known complete, and what not. */
  streams: StreamCoverage[];
  oldestSession: string | null;
  newestSession: string | null;
  windowsNotStored: number;
  windowsSkipped: number;
  deadLetters: number;
  notExported: string[];
  complete: boolean;
}

/** Rows read whole: the few rows page one is made of. */
type HeldRead = TableRead & { rows: readonly Row[] | undefined };

export interface CoverageRead {
  /** The coverage of the streams a report relies on, and what its first page says. */
  forStreams(streams: readonly string[]): {
    coverage: Coverage;
    notices: Notice[];
  };
  /** The rows behind it, shown by the coverage-and-integrity report (COVERAGE_TABLES). */
  read: {
    checkpoints: HeldRead;
    windows: HeldRead;
    deadLetters: HeldRead;
  };
}

/** The tables page one relies on; each one absent is said on page one. */
const COVERAGE_NEEDS = [
  "checkpoints",
  "sessions",
  "stream_windows",
  "dead_letters",
];

/** Failed and abandoned runs listed; the first characters of each error. */
const FAILED_RUNS_SHOWN = 100;
const ERROR_CHARS = 300;

/** The tables behind page one, as the coverage-and-integrity report shows them. */
export const COVERAGE_TABLES = {
  checkpoints: {
    id: "coverage-checkpoints",
    title: "Checkpoints",
    note: "How far each stream's data is known to be stored (written only after the rows it covers), from where (the start of the stream's first sync; empty: not recorded, before the exporter kept it), and when it last moved. A backfill stream <stream>.backfill.<from>-<to> (epoch ms) covers its range from its start up to its position.",
    columns: ["stream", "covers_from", "position", "updated_at"],
    rows: { read: (ctx) => Promise.resolve(ctx.coverage.read.checkpoints) },
  },
  windows: {
    id: "coverage-windows",
    title: "Windows not stored or skipped (aggregation jobs and sessions)",
    note: "Windows of the period that are pending (fetched again on the next run), poisoned (waiting for an operator) or skipped (an operator let the checkpoint pass them), with who skipped them and why.",
    columns: [
      "job",
      "window_start",
      "window_end",
      "state",
      "attempts:number",
      "last_error",
      "skipped_by",
      "skip_reason",
      "updated_at",
    ],
    rows: { read: (ctx) => Promise.resolve(ctx.coverage.read.windows) },
  },
  deadLetters: {
    id: "coverage-dead-letters",
    title: "Dead letters",
    note: "Records read in the period that could not be stored, by job and reason; the raw text of each is kept in the dead_letters table.",
    columns: ["job", "reason", "records:number", "first_seen", "last_seen"],
    rows: { read: (ctx) => Promise.resolve(ctx.coverage.read.deadLetters) },
  },
  runs: {
    id: "coverage-runs",
    title: "Runs in the period",
    note: "Runs of each job started in the period: succeeded, failed, abandoned (found running with its process gone: killed or crashed), other (running or aborted), rows inserted and dead letters.",
    columns: [
      "job",
      "succeeded:number",
      "failed:number",
      "abandoned:number",
      "other:number",
      "rows_inserted:number",
      "dead_letters:number",
    ],
    rows: { read: (ctx) => runRows(ctx) },
  },
  failedRuns: {
    id: "coverage-failed-runs",
    title: "Failed and abandoned runs",
    note: `The first ${FAILED_RUNS_SHOWN} failed or abandoned runs of the period with their error (neither moves a checkpoint past what it did not store; an abandoned run's process was gone before it could record its end).`,
    columns: ["job", "started_at", "run_id", "status", "error"],
    rows: { read: (ctx) => failedRunRows(ctx) },
  },
} satisfies Record<string, Omit<TableSpec<unknown>, "section">>;

/**
 * Rows read through the status read model, which tells the reader what it ran; not exported
 * (no rows) when a table they come from is absent.
 */
async function throughStatus(
  reader: ReportReader,
  needs: readonly string[],
  read: () => Promise<Row[]>,
): Promise<HeldRead> {
  const notExported = reader.missing(needs);
  return {
    rows: notExported.length > 0 ? undefined : await read(),
    notExported,
  };
}

/** The report's period in epoch ms, from its parameters (DateTime64 text, UTC). */
function periodOf(params: Record<string, string>): Period {
  return { fromMs: msOf(params.from ?? ""), toMs: msOf(params.to ?? "") };
}

function runRows(ctx: KindContext): Promise<TableRead> {
  const { reader } = ctx;
  return throughStatus(reader, ["runs"], async () =>
    (await runsIn(reader.warehouse, periodOf(ctx.params), reader.log)).map(
      (r) => ({
        job: r.job,
        succeeded: r.succeeded,
        failed: r.failed,
        abandoned: r.abandoned,
        other: r.other,
        rows_inserted: r.rowsInserted,
        dead_letters: r.deadLetters,
      }),
    ),
  );
}

function failedRunRows(ctx: KindContext): Promise<TableRead> {
  const { reader } = ctx;
  return throughStatus(reader, ["runs"], async () =>
    (
      await failedRunsOf(
        reader.warehouse,
        periodOf(ctx.params),
        FAILED_RUNS_SHOWN,
        reader.log,
      )
    ).map((r) => ({
      job: r.job,
      started_at: plainOf(r.startedAtMs),
      run_id: r.runId,
      status: r.status,
      error: r.error.slice(0, ERROR_CHARS),
    })),
  );
}

/** "2026-11-01 00:00:00" from "2026-11-01T00:00:00.000Z". */
function plainTime(iso: string): string {
  return iso.replace("T", " ").replace(/(\.\d+)?Z$/, "");
}

/** The rows page one is made of. */
interface CoverageRows {
  checkpoints: readonly Row[];
  extent: Row | undefined;
  windows: readonly Row[];
  deadLetters: readonly Row[];
  notExported: string[];
}

/** The sessions' retention (days, 0 = kept forever) and the time it is reckoned from. */
interface Retention {
  days: number;
  nowMs: number;
}

export async function readCoverage(
  reader: ReportReader,
  params: Record<string, string>,
  period: { from: string; to: string },
  retention: Retention,
): Promise<CoverageRead> {
  const q = coverageQueries;
  const read = async (query: ReportQuery): Promise<HeldRead> => ({
    rows: await reader.rows(query, params),
    notExported: reader.missing(query.needs),
  });
  const w = reader.warehouse;
  const range = periodOf(params);
  const checkpoints = await throughStatus(reader, ["checkpoints"], async () =>
    (await allCheckpoints(w, reader.log)).map((c) => ({
      stream: c.stream,
      covers_from: c.coversFromMs === undefined ? "" : plainOf(c.coversFromMs),
      position: plainOf(c.positionMs),
      updated_at: plainOf(c.updatedAtMs),
    })),
  );
  const extent = (await reader.rows(q.sessionsExtent, params))?.[0];
  const windows = await throughStatus(reader, ["stream_windows"], async () =>
    (await unsettledWindowsIn(w, range, reader.log)).map((r) => ({
      job: r.job,
      window_start: plainOf(r.startMs),
      window_end: plainOf(r.endMs),
      state: r.state,
      attempts: r.attempts,
      last_error: r.lastError,
      skipped_by: r.skippedBy,
      skip_reason: r.skipReason,
      updated_at: plainOf(r.updatedAtMs),
    })),
  );
  const deadLetters = await read(q.deadLetters);
  const rows: CoverageRows = {
    checkpoints: checkpoints.rows ?? [],
    extent,
    windows: windows.rows ?? [],
    deadLetters: deadLetters.rows ?? [],
    notExported: reader.missing(COVERAGE_NEEDS),
  };
  return {
    forStreams: (streams) => coverageOf(streams, rows, period, retention),
    read: { checkpoints, windows, deadLetters },
  };
}

/** The coverage of some streams over the period, and the notices of page one in their order. */
function coverageOf(
  streams: readonly string[],
  read: CoverageRows,
  period: { from: string; to: string },
  retention: Retention,
): { coverage: Coverage; notices: Notice[] } {
  const checkpoints = read.checkpoints.map((r: Row) => ({
    stream: String(r.stream),
    position: String(r.position),
    coversFrom: typeof r.covers_from === "string" ? r.covers_from : "",
  }));
  const perStream = streams.map((s) => streamCoverage(s, checkpoints, period));
  const extent = extentOf(
    read.extent,
    streamCoverage(SESSIONS_STREAM, checkpoints, period),
    period,
    retention,
  );
  const windows = windowNotices(read.windows);
  const deadCount = read.deadLetters.reduce((n, r) => n + Number(r.records), 0);
  const notices: Notice[] = [
    ...perStream.flatMap((c) => streamNotices(c, period)),
    ...extent.notices,
    ...windows.notices,
    ...(deadCount > 0
      ? [
          warning(
            `${deadCount} records read in the period could not be stored (dead letters, by job and reason in the coverage tables).`,
          ),
        ]
      : []),
    ...read.notExported.map((t) =>
      warning(
        `The table ${t} is not in this warehouse: what it would say is not in this report.`,
      ),
    ),
  ];
  return {
    coverage: {
      streams: perStream,
      oldestSession: extent.oldest,
      newestSession: extent.newest,
      windowsNotStored: windows.notStored,
      windowsSkipped: windows.skipped,
      deadLetters: deadCount,
      notExported: read.notExported,
      complete: notices.every((n) => n.level !== "warning"),
    },
    notices,
  };
}

const warning = (text: string): Notice => ({ level: "warning", text });

/**
 * The oldest and newest session, and what page one says when the record starts after the
 * period does: what the record holds, told with what the sessions' checkpoints prove of that
 * time, so that the two never contradict each other. Synced by a checkpoint, the time before
 * the oldest session had no session, unless the retention could have reached it since.
 */
function extentOf(
  extent: Row | undefined,
  sessions: StreamCoverage,
  period: { from: string; to: string },
  retention: Retention,
): { oldest: string | null; newest: string | null; notices: Notice[] } {
  const from = plainTime(period.from);
  const oldest =
    extent && String(extent.oldest) !== "" ? String(extent.oldest) : null;
  const newest =
    extent && String(extent.newest) !== "" ? String(extent.newest) : null;
  const notices: Notice[] = [];
  if (extent && oldest === null)
    notices.push(warning("The sessions table holds no session at all."));
  else if (oldest !== null && oldest > from)
    notices.push(lateRecordNotice(oldest, sessions, period, retention));
  return { oldest, newest, notices };
}

/** What page one says of a record whose oldest session started after the period began. */
function lateRecordNotice(
  oldest: string,
  sessions: StreamCoverage,
  period: { from: string; to: string },
  retention: Retention,
): Notice {
  const from = plainTime(period.from);
  const to = plainTime(period.to);
  const gapEnd = oldest < to ? oldest : to;
  if (!spansCover(sessions.known, from, gapEnd))
    return warning(
      `The oldest stored session started at ${oldest} UTC, after the period starts (${from}): the record holds no earlier session, and no checkpoint shows that the time before it was synced (the export started later, or retention removed them).`,
    );
  const reachable =
    retention.days > 0 &&
    msOf(from) < retention.nowMs - retention.days * 86_400_000;
  if (reachable)
    return warning(
      `The oldest stored session started at ${oldest} UTC, after the period starts (${from}). The checkpoints show the sessions from ${from} to ${gapEnd} UTC were synced, and the retention deletes sessions older than ${retention.days} ${retention.days === 1 ? "day" : "days"}: any session of that time was stored and has since been deleted, so the record no longer holds it.`,
    );
  return {
    level: "info",
    text: `No session started from ${from} to ${gapEnd} UTC: the checkpoints show that time was synced, and the oldest stored session started at ${oldest} UTC.`,
  };
}

/** Whether known spans cover [from, to) whole (plain UTC times, which sort as text). */
function spansCover(known: readonly Span[], from: string, to: string): boolean {
  let at = from;
  for (const k of [...known].sort((a, b) => (a.from < b.from ? -1 : 1))) {
    if (k.from > at) break;
    if (k.to > at) at = k.to;
  }
  return at >= to;
}

/** Windows of the period not stored or skipped, each said on page one. */
function windowNotices(windows: readonly Row[]): {
  notStored: number;
  skipped: number;
  notices: Notice[];
} {
  let notStored = 0;
  let skipped = 0;
  const notices = windows.map((r) => {
    const what = `${r.job === SESSIONS_STREAM ? "The sessions" : `Aggregation ${String(r.job)}`} window ${String(r.window_start)} to ${String(r.window_end)}`;
    if (r.state === "skipped") {
      skipped++;
      return warning(
        `${what} was skipped by ${String(r.skipped_by) || "an unnamed operator"} (${String(r.skip_reason) || "no reason given"}) at ${String(r.updated_at)}: its data is not in the record.`,
      );
    }
    notStored++;
    return warning(
      `${what} is ${String(r.state)} after ${String(r.attempts)} attempts: its data is not in the record (last error: ${String(r.last_error).split("\n")[0] ?? ""}).`,
    );
  });
  return { notStored, skipped, notices };
}

const msOf = (plain: string): number =>
  Date.parse(`${plain.replace(" ", "T")}Z`);
const plainOf = (ms: number): string => plainTime(new Date(ms).toISOString());

/**
 * What of the period a stream's checkpoints say is complete, in the report's plain times (the
 * rule is coveredSpans, src/pipeline/status.ts).
 */
export function streamCoverage(
  stream: string,
  checkpoints: readonly {
    stream: string;
    position: string;
    coversFrom?: string;
  }[],
  period: { from: string; to: string },
): StreamCoverage {
  const own = checkpoints.find((c) => c.stream === stream)?.position ?? null;
  const { known, missing } = coveredSpans(
    stream,
    checkpoints.map((c) => ({
      stream: c.stream,
      positionMs: msOf(c.position),
      coversFromMs: c.coversFrom ? msOf(c.coversFrom) : undefined,
    })),
    { fromMs: Date.parse(period.from), toMs: Date.parse(period.to) },
    (r) => `${plainOf(r.fromMs)} to ${plainOf(r.toMs)}`,
  );
  return {
    stream,
    checkpoint: own,
    known: known.map((k) => ({
      from: plainOf(k.fromMs),
      to: plainOf(k.toMs),
      by: k.by,
    })),
    missing: missing.map((m) => ({
      from: plainOf(m.fromMs),
      to: plainOf(m.toMs),
    })),
    complete: missing.length === 0,
  };
}

/** What page one says of a stream: nothing when the period is known complete. */
function streamNotices(
  c: StreamCoverage,
  period: { from: string; to: string },
): Notice[] {
  const to = plainTime(period.to);
  if (c.complete) {
    if (c.known.every((k) => k.by === "checkpoint")) return [];
    return [
      {
        level: "info",
        text: `The stream ${c.stream} is known complete over the period: ${spansText(c.known)}.`,
      },
    ];
  }
  if (c.known.length === 0)
    return [
      {
        level: "warning",
        text: `The stream ${c.stream} has no checkpoint covering the period: none of its data from ${plainTime(period.from)} to ${to} is known to be complete.`,
      },
    ];
  // The part after the scheduled checkpoint, up to the period's end: the sync has not got there
  // yet (said the way `status` shows a lag). Any other part is a hole nobody synced.
  const last = c.missing[c.missing.length - 1];
  const tail =
    last !== undefined && last.from === c.checkpoint && last.to === to
      ? last
      : undefined;
  const holes = tail ? c.missing.slice(0, -1) : c.missing;
  const notices: Notice[] = [];
  if (holes.length > 0)
    notices.push({
      level: "warning",
      text: `The stream ${c.stream} is not known to be complete ${holes.map((m) => `from ${m.from} to ${m.to}`).join(", ")} UTC: no checkpoint or completed backfill covers ${holes.length === 1 ? "it" : "them"}, and data there may be missing. It is known complete ${spansText(c.known)}.`,
    });
  if (tail)
    notices.push({
      level: "warning",
      text: `The stream ${c.stream} is complete only up to ${tail.from} UTC; the period ends at ${to}: data after ${tail.from} may still be missing.`,
    });
  return notices;
}

/** "from A to B UTC (backfill X to Y), from …" */
function spansText(spans: readonly KnownSpan[]): string {
  return spans
    .map(
      (k) =>
        `from ${k.from} to ${k.to} UTC (${k.by === "checkpoint" ? "its scheduled sync" : k.by})`,
    )
    .join(", ");
}
