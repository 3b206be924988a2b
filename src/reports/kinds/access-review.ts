// access-review: per person, the systems reached in the period, sessions, first and last
// access, data labels returned, privileged or production access; new access since the previous
// period of the same length; accounts with access but no activity when the users stream is
// exported; the detections' hits in the period.
import { ENVIRONMENT_JOB } from "../../config/index.js";
import { aggregationName } from "../../pipeline/names.js";
import {
  accessQueries,
  detectionHitsQuery,
  policyHitQueries,
  rollupQueries,
  sessionNeeds,
  text,
  type Row,
} from "../../warehouse/index.js";
import type { Notice } from "../model.js";
import { defineKind, totalOf, type TableRead, type Section } from "../spec.js";
import { INACTIVE_ACCOUNTS } from "./accounts.js";
import { personNotice, type KindContext } from "./context.js";

/** The report's sections, in the order their first table is listed. */
const PEOPLE: Section = { id: "people", title: "People and their access" };
const SYSTEMS: Section = { id: "systems", title: "Systems reached" };
const CHANGES: Section = { id: "changes", title: "Changes and unused access" };
const DETECTIONS: Section = { id: "detections", title: "Detections" };

/**
 * The period's totals and its sessions per day, read first in one read of the period (a row a
 * day: held); the days undefined when the sessions are not exported.
 */
interface Facts {
  totals: Row;
  days: Row[] | undefined;
}

const queries = (ctx: KindContext) => accessQueries(ctx.source);

/** What a table of sessions names as not exported: the sessions' tables (never the rollups). */
const sessionsMissing = (ctx: KindContext) =>
  ctx.reader.missing(sessionNeeds(ctx.source));

export const accessReview = defineKind<Facts>({
  title: "Access review",
  facts: async (ctx) => {
    const rows = await ctx.reader.rows(queries(ctx).totalsAndDays, ctx.params);
    const whole = (r: Row) => Number(r.whole_period) === 1;
    return {
      totals: rows?.find(whole) ?? {},
      days: rows?.filter((r) => !whole(r)),
    };
  },
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
      rows: (ctx) => queries(ctx).perPerson,
      notExported: sessionsMissing,
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
      rows: (ctx) => queries(ctx).perPersonSystem,
      notExported: sessionsMissing,
    },
    {
      id: "access-new",
      section: CHANGES,
      title: "New access since the previous period",
      note: (ctx) =>
        `Person and system pairs with a session in the period and none in the period of the same length before it (from ${ctx.params.previousFrom ?? ""} UTC).`,
      columns: ["person", "system", "first_access", "sessions:number"],
      // The pairs of _Systems reached per person_ that are new, as that table is read.
      rows: { of: "access-per-person-system", keep: (r) => isNew(r.new) },
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
      // The pairs' privileged or production native users, as _Systems reached per person_ is read.
      rows: { of: "access-per-person-system", expand: privilegedRows },
    },
    {
      id: "access-per-day",
      section: PEOPLE,
      title: "Sessions per day",
      note: "Sessions starting on each day of the period (UTC) and the people behind them.",
      chart: "sessions",
      columns: ["day", "sessions:number", "people:number"],
      rows: {
        read: sessionsPerDay,
        query: accessQueries("enriched").totalsAndDays,
      },
    },
    { ...INACTIVE_ACCOUNTS, section: CHANGES },
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
      (j) => j.name === ENVIRONMENT_JOB && j.enabled,
    );
    return [
      "sessions",
      ...(envJob ? [aggregationName(envJob)] : []),
      // The person behind machine and native users, and the accounts without activity.
      ...(ctx.source === "enriched" ? ["users", "identity_links"] : []),
    ];
  },
});

/** A pair of _Systems reached per person_ with no session in the previous period (`new` is a UInt8). */
const isNew = (v: unknown): boolean => v === 1;

/**
 * The rows of _Privileged or production access_ a pair of _Systems reached per person_ gives:
 * one per native user of its `privileged_native_users` (native user, privileged, production,
 * sessions, last access), in that order; a tuple arrives as an array, or as an object when the
 * engine names its elements.
 */
function privilegedRows(pair: Row): Row[] {
  const users = pair.privileged_native_users;
  if (!Array.isArray(users)) return [];
  return users.map((u: unknown) => {
    const [nativeUser, privileged, production, sessions, last] = (
      Array.isArray(u) ? u : Object.values(u as object)
    ) as unknown[];
    return {
      person: pair.person,
      system: pair.system,
      environment: pair.environment,
      native_user: nativeUser,
      privileged,
      production,
      sessions,
      last_access: last,
    };
  });
}

/**
 * The sessions per day: read with the totals, or, with the person as the user key, from the
 * daily rollups (the only table they can answer) and the sessions.
 */
function sessionsPerDay(ctx: KindContext, facts: Facts): Promise<TableRead> {
  return Promise.resolve({
    rows:
      ctx.source === "plain"
        ? ctx.reader.stream(rollupQueries().sessionsPerDay, ctx.params)
        : facts.days,
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
