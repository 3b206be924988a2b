// access-review: per person, the systems reached in the period, sessions, first and last
// access, data labels returned, privileged or production access; new access since the previous
// period of the same length; accounts with access but no activity when the users stream is
// exported; the detections' hits in the period.
import { aggregationName } from "../../pipeline/names.js";
import {
  ACCESS_PARTS,
  accessOneRead,
  detectionHitsQuery,
  policyHitQueries,
  rollupQueries,
  sessionNeeds,
  text,
  type Row,
} from "../../warehouse/index.js";
import type { Notice } from "../model.js";
import { PartedRows } from "../parts.js";
import { defineKind, totalOf, type TableRead, type Section } from "../spec.js";
import { inactiveAccounts } from "./accounts.js";
import { personNotice, type KindContext } from "./context.js";

/** The report's sections, in the order their first table is listed. */
const PEOPLE: Section = { id: "people", title: "People and their access" };
const SYSTEMS: Section = { id: "systems", title: "Systems reached" };
const CHANGES: Section = { id: "changes", title: "Changes and unused access" };
const DETECTIONS: Section = { id: "detections", title: "Detections" };

/**
 * The one read of the period's sessions (access-one-read.ts), its totals read first; each table
 * of sessions takes its part of it in turn. With the person as the user key, the sessions per
 * day come from the daily rollups where they hold the day, read before it (a row a day: held).
 */
interface Facts {
  totals: Row;
  read: PartedRows;
  rolledUpDays: Row[] | undefined;
}

/** The query every table of sessions comes from (its columns are the same for both sources). */
const ONE_READ = accessOneRead("enriched");

/** What a table of sessions names as not exported: the sessions' tables (never the rollups). */
const sessionsMissing = (ctx: KindContext) =>
  ctx.reader.missing(sessionNeeds(ctx.source));

/** A table of sessions: its part of the one read. */
const part =
  (p: number) =>
  (ctx: KindContext, f: Facts): Promise<TableRead> =>
    Promise.resolve({
      rows: f.read.ran ? f.read.take(p) : undefined,
      notExported: sessionsMissing(ctx),
    });

export const accessReview = defineKind<Facts>({
  title: "Access review",
  facts: async (ctx) => {
    // Read before the one read starts: one statement at a time.
    const rolledUpDays =
      ctx.source === "plain"
        ? await ctx.reader.rows(rollupQueries().sessionsPerDay, ctx.params)
        : undefined;
    const read = new PartedRows(
      ctx.reader.stream(accessOneRead(ctx.source), ctx.params),
    );
    const [totals] = await read.all(ACCESS_PARTS.totals);
    return { totals: totals ?? {}, read, rolledUpDays };
  },
  finish: ({ read }) => read.close(),
  tables: [
    {
      id: "access-per-person",
      section: PEOPLE,
      title: "Access per person",
      note: "Every person with at least one session starting in the period: the accounts they used, how many systems and sessions, first and last access, sessions on production resources (environment prod…) and as a privileged native user (root, admin, postgres, sa, dba, …), and the data labels their sessions returned (known with the control-plane streams).",
      chart: "sessions",
      columns: [
        "person",
        "name",
        "via",
        "accounts",
        "systems:number",
        "sessions:number",
        "first_access",
        "last_access",
        "production_sessions:number",
        "privileged_sessions:number",
        "data_labels",
      ],
      rows: { read: part(ACCESS_PARTS.perPerson), query: ONE_READ },
    },
    {
      id: "access-per-person-system",
      section: SYSTEMS,
      title: "Systems reached per person",
      note: "Each person and system with sessions in the period, the resource's environment (from the logs) and the native users the sessions ran as.",
      columns: [
        "person",
        "system",
        "technology",
        "environment",
        "sessions:number",
        "first_access",
        "last_access",
        "native_users",
      ],
      rows: { read: part(ACCESS_PARTS.perPersonSystem), query: ONE_READ },
    },
    {
      id: "access-new",
      section: CHANGES,
      title: "New access since the previous period",
      note: (ctx) =>
        `Person and system pairs with a session in the period and none in the period of the same length before it (from ${ctx.params.previousFrom ?? ""} UTC).`,
      columns: ["person", "system", "first_access", "sessions:number"],
      rows: { read: part(ACCESS_PARTS.newAccess), query: ONE_READ },
    },
    {
      id: "access-privileged-production",
      section: SYSTEMS,
      title: "Privileged or production access",
      note: "Sessions as a privileged native user, or on a resource whose environment starts with prod, by person, system and native user.",
      columns: [
        "person",
        "system",
        "environment",
        "native_user",
        "privileged:bool",
        "production:bool",
        "sessions:number",
        "last_access",
      ],
      rows: { read: part(ACCESS_PARTS.privileged), query: ONE_READ },
    },
    {
      id: "access-per-day",
      section: PEOPLE,
      title: "Sessions per day",
      note: "Sessions starting on each day of the period (UTC) and the people behind them.",
      chart: "sessions",
      columns: ["day", "sessions:number", "people:number"],
      rows: { read: sessionsPerDay, query: ONE_READ },
    },
    { ...inactiveAccounts<Facts>((f) => f.read), section: CHANGES },
    {
      id: "access-policy-hits",
      section: SYSTEMS,
      title: "Policy hits per person",
      columns: ["person", "policy", "hits:number", "first_hit", "last_hit"],
      rows: { read: policyHits, query: policyHitQueries.perPerson },
    },
    {
      id: "access-detection-hits",
      section: DETECTIONS,
      title: "Detection hits",
      note: "The hits of the detection rules (detections/, recorded by the detections job of `run` as sessions arrive) whose activity is in the period: the rule, its severity and ATT&CK techniques, the person, system and session behind the hit when it is about one session, and whether it paged (alert: paged), is a signal of a hunting rule that never pages (signal), or is history loaded on purpose, as a backfill's, never paged (historical).",
      columns: [
        "event_time",
        "rule",
        "title",
        "severity",
        "techniques",
        "person",
        "system",
        "session_id",
        "alert",
      ],
      rows: detectionHitsQuery,
    },
  ],
  summary: (t, { totals }) => {
    const n = (key: string) => Number(totals[key] ?? 0);
    return [
      { label: "People", value: n("people") },
      { label: "Sessions", value: n("sessions") },
      { label: "Systems", value: n("systems") },
      { label: "Production sessions", value: n("production_sessions") },
      { label: "Privileged sessions", value: n("privileged_sessions") },
      {
        label: "New person-system pairs",
        value: totalOf(t, "access-new"),
      },
    ];
  },
  notices: async (_t, _f, ctx) => [
    ...personNotice(ctx.source),
    ...(await sourceNotice(ctx)),
  ],
  streams: (_t, _f, ctx) => {
    const envJob = ctx.config.aggregations.jobs.find(
      (j) => j.name === "resource_environments" && j.enabled,
    );
    return [
      "sessions",
      ...(envJob ? [aggregationName(envJob)] : []),
      // The person behind machine and native users, and the accounts without activity.
      ...(ctx.source === "enriched" ? ["users", "identity_links"] : []),
    ];
  },
});

/**
 * The sessions per day: a part of the one read, or, with the person as the user key, from the
 * daily rollups (the only table they can answer) and the sessions, read first.
 */
function sessionsPerDay(ctx: KindContext, facts: Facts): Promise<TableRead> {
  if (ctx.source !== "plain") return part(ACCESS_PARTS.perDay)(ctx, facts);
  return Promise.resolve({
    rows: facts.rolledUpDays,
    notExported: sessionsMissing(ctx),
  });
}

/** Policy hits per person, from the aggregation job that groups logs by person and policy. */
async function policyHits(ctx: KindContext): Promise<TableRead> {
  const job = text(
    (await ctx.reader.rows(policyHitQueries.job, ctx.params))?.[0]?.job,
  );
  return {
    rows:
      job === ""
        ? undefined
        : ctx.reader.stream(policyHitQueries.perPerson, ctx.params),
    notExported: [
      "an aggregation job grouping logs by user.email and policy.name",
    ],
    note: `Log events a policy acted on, by person (user.email) and policy, from the aggregation job ${job || "grouping logs by user.email and policy.name (none is configured)"}.`,
  };
}

/**
 * Which source answered what, when the period is long enough for the rollups to answer some of
 * it: only the sessions per day can come from them (with the person as the user key).
 */
async function sourceNotice(ctx: KindContext): Promise<Notice[]> {
  const { rolledUpDays } = rollupQueries();
  const row = (await ctx.reader.rows(rolledUpDays, ctx.params))?.[0];
  const days = Number(row?.days ?? 0);
  if (days === 0) return [];
  const span = `${text(row?.first)} to ${text(row?.last)}`;
  return [
    {
      level: "info",
      text:
        ctx.source === "plain"
          ? `Sources: Sessions per day reads ${days} rolled-up days (${span}) from the daily rollups (session_rollups_daily) and the other days from sessions; every other table reads sessions, which holds only the days the raw retention keeps.`
          : `Sources: every table reads sessions, which holds only the days the raw retention keeps; the daily rollups hold ${days} days of the period (${span}) but not the person behind machine and native users.`,
    },
  ];
}
