// coverage-and-integrity: what the record covers. Every stream's checkpoint, windows not stored
// or skipped (who and why), dead letters, runs, gaps, retention, oldest and newest record, rows
// per month. Its first page, like every report's, says what of the period is not covered.
import { aggregationName } from "../../pipeline/names.js";
import { coverageQueries as q } from "../../warehouse/index.js";
import { COVERAGE_TABLES } from "../coverage.js";
import { defineKind, type Section } from "../spec.js";
import type { KindContext } from "./context.js";

/** The report's sections, in the order their first table is listed. */
const STREAMS: Section = { id: "streams", title: "Streams and checkpoints" };
const INTEGRITY: Section = {
  id: "integrity",
  title: "What could not be stored",
};
const RECORD: Section = { id: "record", title: "The record" };

/** The streams the record is made of: sessions and every enabled aggregation job. */
function recordStreams(ctx: KindContext): string[] {
  return [
    "sessions",
    ...ctx.config.aggregations.jobs
      .filter((j) => j.enabled)
      .map((j) => aggregationName(j)),
  ];
}

export const coverageAndIntegrity = defineKind<null>({
  title: "Coverage and integrity",
  facts: () => Promise.resolve(null),
  tables: [
    { ...COVERAGE_TABLES.checkpoints, section: STREAMS },
    { ...COVERAGE_TABLES.windows, section: INTEGRITY },
    { ...COVERAGE_TABLES.deadLetters, section: INTEGRITY },
    { ...COVERAGE_TABLES.runs, section: INTEGRITY },
    { ...COVERAGE_TABLES.failedRuns, section: INTEGRITY },
    {
      id: "coverage-aggregation-gaps",
      section: STREAMS,
      title: "Aggregation windows stored in the period",
      note: "Per aggregation job: its window length, the windows the period holds, and the windows stored (fewer stored than held: a gap, or the checkpoint has not reached the period's end).",
      columns: [
        "job",
        "window_s:number",
        "windows_in_period:number",
        "windows_stored:number",
      ],
      rows: q.aggregationGaps,
    },
    {
      id: "coverage-days-without-sessions",
      section: STREAMS,
      title: "Days of the period without any session",
      note: "A day without a session stored is a gap to explain (a quiet day, or data not exported).",
      columns: ["day"],
      rows: q.daysWithoutSessions,
    },
    {
      id: "coverage-sessions-per-month",
      section: RECORD,
      title: "Sessions per month (whole record)",
      note: "Sessions stored per month of their start, with the people (user keys) and resources.",
      chart: "sessions",
      columns: [
        "month",
        "sessions:number",
        "people:number",
        "resources:number",
      ],
      rows: q.sessionsPerMonth,
    },
    {
      id: "coverage-aggregation-windows-per-month",
      section: RECORD,
      title: "Aggregation windows per month (whole record)",
      note: "Windows stored per job and month, the log events they count, and those kept after a re-fetch reported fewer (shrunk).",
      columns: [
        "month",
        "job",
        "windows:number",
        "log_events:number",
        "shrunk:number",
      ],
      rows: q.aggregationsPerMonth,
    },
    {
      id: "coverage-retention",
      section: RECORD,
      title: "Retention",
      note: (ctx) => {
        const days = ctx.config.clickhouse.retentionDays;
        return `The TTL each table holds (empty: kept forever). The configured session retention is ${days === 0 ? "none (kept forever)" : `${days} days`}.`;
      },
      columns: ["table", "engine", "ttl"],
      rows: q.retention,
    },
    {
      id: "coverage-retention-settings",
      section: RECORD,
      title: "Retention settings applied",
      note: "The TTL the exporter last gave each table from its retention settings: days on the hot volume, the cold volume, days kept (0 = forever), and when it was applied.",
      columns: [
        "table",
        "ttl",
        "hot_days:number",
        "cold_volume",
        "retention_days:number",
        "applied",
      ],
      rows: q.retentionSettings,
    },
    {
      id: "coverage-legal-holds",
      section: RECORD,
      title: "Legal holds in force during the period",
      note: "Holds whose sessions the retention does not delete (by user, resource or session), in force at some time of the period.",
      columns: [
        "hold_id",
        "scope",
        "value",
        "reason",
        "created_by",
        "created",
        "until",
        "released",
        "released_by",
      ],
      rows: q.legalHolds,
    },
  ],
  summary: (_t, _f, ctx) => {
    const c = ctx.coverage.forStreams(recordStreams(ctx)).coverage;
    return [
      {
        label: "Streams complete over the period",
        value: `${c.streams.filter((s) => s.complete).length} of ${c.streams.length}`,
      },
      { label: "Windows not stored", value: c.windowsNotStored },
      { label: "Windows skipped", value: c.windowsSkipped },
      { label: "Dead letters", value: c.deadLetters },
      { label: "Oldest session", value: c.oldestSession ?? "none" },
      { label: "Newest session", value: c.newestSession ?? "none" },
    ];
  },
  notices: () => Promise.resolve([]),
  streams: (_t, _f, ctx) => recordStreams(ctx),
});
