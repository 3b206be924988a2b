// coverage-and-integrity: what the record covers. Every stream's checkpoint, windows not stored
// or skipped (who and why), dead letters, runs, gaps, retention, oldest and newest record, rows
// per month. Its first page, like every report's, says what of the period is not covered.
import { aggregationName } from "../../pipeline/names.js";
import { coverageQueries } from "../../warehouse/index.js";
import type { CoverageRead } from "../coverage.js";
import { columns, table } from "../model.js";
import type { KindContext, KindResult } from "./context.js";

export async function coverageAndIntegrity(
  ctx: KindContext,
  cov: CoverageRead,
): Promise<KindResult> {
  const { reader, params } = ctx;
  const q = coverageQueries;
  const runs = table(
    {
      id: "coverage-runs",
      title: "Runs in the period",
      note: "Runs of each job started in the period: succeeded, failed, abandoned (found running with its process gone: killed or crashed), other (running or aborted), rows inserted and dead letters.",
      columns: columns(
        "job",
        "succeeded:number",
        "failed:number",
        "abandoned:number",
        "other:number",
        "rows_inserted:number",
        "dead_letters:number",
      ),
    },
    await reader.rows(q.runs, params),
    reader.missing(q.runs.needs),
  );
  const failed = table(
    {
      id: "coverage-failed-runs",
      title: "Failed and abandoned runs",
      note: "The first 100 failed or abandoned runs of the period with their error (neither moves a checkpoint past what it did not store; an abandoned run's process was gone before it could record its end).",
      columns: columns("job", "started_at", "run_id", "status", "error"),
    },
    await reader.rows(q.failedRuns, params),
    reader.missing(q.failedRuns.needs),
  );
  const gaps = table(
    {
      id: "coverage-aggregation-gaps",
      title: "Aggregation windows stored in the period",
      note: "Per aggregation job: its window length, the windows the period holds, and the windows stored (fewer stored than held: a gap, or the checkpoint has not reached the period's end).",
      columns: columns(
        "job",
        "window_s:number",
        "windows_in_period:number",
        "windows_stored:number",
      ),
    },
    await reader.rows(q.aggregationGaps, params),
    reader.missing(q.aggregationGaps.needs),
  );
  const emptyDays = table(
    {
      id: "coverage-days-without-sessions",
      title: "Days of the period without any session",
      note: "A day without a session stored is a gap to explain (a quiet day, or data not exported).",
      columns: columns("day"),
    },
    await reader.rows(q.daysWithoutSessions, params),
    reader.missing(q.daysWithoutSessions.needs),
  );
  const perMonth = table(
    {
      id: "coverage-sessions-per-month",
      title: "Sessions per month (whole record)",
      note: "Sessions stored per month of their start, with the people (user keys) and resources.",
      columns: columns(
        "month",
        "sessions:number",
        "people:number",
        "resources:number",
      ),
      chart: { label: "month", value: "sessions" },
    },
    await reader.rows(q.sessionsPerMonth, params),
    reader.missing(q.sessionsPerMonth.needs),
  );
  const aggPerMonth = table(
    {
      id: "coverage-aggregation-windows-per-month",
      title: "Aggregation windows per month (whole record)",
      note: "Windows stored per job and month, the log events they count, and those kept after a re-fetch reported fewer (shrunk).",
      columns: columns(
        "month",
        "job",
        "windows:number",
        "log_events:number",
        "shrunk:number",
      ),
    },
    await reader.rows(q.aggregationsPerMonth, params),
    reader.missing(q.aggregationsPerMonth.needs),
  );
  const retention = table(
    {
      id: "coverage-retention",
      title: "Retention",
      note: `The TTL each table holds (empty: kept forever). The configured session retention is ${ctx.config.clickhouse.retentionDays === 0 ? "none (kept forever)" : `${ctx.config.clickhouse.retentionDays} days`}.`,
      columns: columns("table", "engine", "ttl"),
    },
    await reader.rows(q.retention, params),
    [],
  );
  const settings = table(
    {
      id: "coverage-retention-settings",
      title: "Retention settings applied",
      note: "The TTL the exporter last gave each table from its retention settings: days on the hot volume, the cold volume, days kept (0 = forever), and when it was applied.",
      columns: columns(
        "table",
        "ttl",
        "hot_days:number",
        "cold_volume",
        "retention_days:number",
        "applied",
      ),
    },
    await reader.rows(q.retentionSettings, params),
    reader.missing(q.retentionSettings.needs),
  );
  const holds = table(
    {
      id: "coverage-legal-holds",
      title: "Legal holds in force during the period",
      note: "Holds whose sessions the retention does not delete (by user, resource or session), in force at some time of the period.",
      columns: columns(
        "hold_id",
        "scope",
        "value",
        "reason",
        "created_by",
        "created",
        "until",
        "released",
        "released_by",
      ),
    },
    await reader.rows(q.legalHolds, params),
    reader.missing(q.legalHolds.needs),
  );
  const streams = [
    "sessions",
    ...ctx.config.aggregations.jobs
      .filter((j) => j.enabled)
      .map((j) => aggregationName(j)),
  ];
  const c = cov.forStreams(streams).coverage;
  return {
    title: "Coverage and integrity",
    summary: [
      {
        label: "Streams complete over the period",
        value: `${c.streams.filter((s) => s.complete).length} of ${c.streams.length}`,
      },
      { label: "Windows not stored", value: c.windowsNotStored },
      { label: "Windows skipped", value: c.windowsSkipped },
      { label: "Dead letters", value: c.deadLetters },
      { label: "Oldest session", value: c.oldestSession ?? "none" },
      { label: "Newest session", value: c.newestSession ?? "none" },
    ],
    sections: [
      {
        id: "streams",
        title: "Streams and checkpoints",
        tables: [cov.tables.checkpoints, gaps, emptyDays],
      },
      {
        id: "integrity",
        title: "What could not be stored",
        tables: [cov.tables.windows, cov.tables.deadLetters, runs, failed],
      },
      {
        id: "record",
        title: "The record",
        tables: [perMonth, aggPerMonth, retention, settings, holds],
      },
    ],
    notices: [],
    streams,
  };
}
