// access-review: per person, the systems reached in the period, sessions, first and last
// access, data labels returned, privileged or production access; new access since the previous
// period of the same length; accounts with access but no activity when the users stream is
// exported.
import { aggregationName } from "../../pipeline/names.js";
import { text } from "../../warehouse/reports/query.js";
import type { ReportQuery } from "../../warehouse/reports/query.js";
import {
  accessQueries,
  policyHitQueries,
  rollupQueries,
} from "../../warehouse/reports/session-queries.js";
import { columns, table, type Notice } from "../model.js";
import { personNotice, type KindContext, type KindResult } from "./context.js";
import { inactiveAccountsTable } from "./accounts.js";

export async function accessReview(ctx: KindContext): Promise<KindResult> {
  const { reader, params } = ctx;
  const q = accessQueries(ctx.source);
  const rollups = rollupQueries();
  const missing = reader.missing(q.perPerson.needs);
  const totals = (await reader.rows(q.totals, params))?.[0] ?? {};
  const perPerson = table(
    {
      id: "access-per-person",
      title: "Access per person",
      note: "Every person with at least one session starting in the period: the accounts they used, how many systems and sessions, first and last access, sessions on production resources (environment prod…) and as a privileged native user (root, admin, postgres, sa, dba, …), and the data labels their sessions returned (known with the control-plane streams).",
      columns: columns(
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
      ),
      chart: { label: "person", value: "sessions" },
    },
    await reader.rows(q.perPerson, params),
    missing,
  );
  const perSystem = table(
    {
      id: "access-per-person-system",
      title: "Systems reached per person",
      note: "Each person and system with sessions in the period, the resource's environment (from the logs) and the native users the sessions ran as.",
      columns: columns(
        "person",
        "system",
        "technology",
        "environment",
        "sessions:number",
        "first_access",
        "last_access",
        "native_users",
      ),
    },
    await reader.rows(q.perPersonSystem, params),
    missing,
  );
  const newAccess = table(
    {
      id: "access-new",
      title: "New access since the previous period",
      note: `Person and system pairs with a session in the period and none in the period of the same length before it (from ${params.previousFrom ?? ""} UTC).`,
      columns: columns("person", "system", "first_access", "sessions:number"),
    },
    await reader.rows(q.newAccess, params),
    missing,
  );
  const privileged = table(
    {
      id: "access-privileged-production",
      title: "Privileged or production access",
      note: "Sessions as a privileged native user, or on a resource whose environment starts with prod, by person, system and native user.",
      columns: columns(
        "person",
        "system",
        "environment",
        "native_user",
        "privileged:bool",
        "production:bool",
        "sessions:number",
        "last_access",
      ),
    },
    await reader.rows(q.privileged, params),
    missing,
  );
  const perDay = table(
    {
      id: "access-per-day",
      title: "Sessions per day",
      note: "Sessions starting on each day of the period (UTC) and the people behind them.",
      columns: columns("day", "sessions:number", "people:number"),
      chart: { label: "day", value: "sessions" },
    },
    await reader.rows(
      ctx.source === "plain" ? rollups.sessionsPerDay : q.sessionsPerDay,
      params,
    ),
    missing,
  );
  const inactive = await inactiveAccountsTable(ctx);
  const policyJob = text(
    (await reader.rows(policyHitQueries.job, params))?.[0]?.job,
  );
  const policyHits = table(
    {
      id: "access-policy-hits",
      title: "Policy hits per person",
      note: `Log events a policy acted on, by person (user.email) and policy, from the aggregation job ${policyJob || "grouping logs by user.email and policy.name (none is configured)"}.`,
      columns: columns(
        "person",
        "policy",
        "hits:number",
        "first_hit",
        "last_hit",
      ),
    },
    policyJob === ""
      ? undefined
      : await reader.rows(policyHitQueries.perPerson, params),
    ["an aggregation job grouping logs by user.email and policy.name"],
  );
  const envJob = ctx.config.aggregations.jobs.find(
    (j) => j.name === "resource_environments" && j.enabled,
  );
  return {
    title: "Access review",
    summary: [
      { label: "People", value: Number(totals.people ?? 0) },
      { label: "Sessions", value: Number(totals.sessions ?? 0) },
      { label: "Systems", value: Number(totals.systems ?? 0) },
      {
        label: "Production sessions",
        value: Number(totals.production_sessions ?? 0),
      },
      {
        label: "Privileged sessions",
        value: Number(totals.privileged_sessions ?? 0),
      },
      { label: "New person-system pairs", value: newAccess.rows.length },
    ],
    sections: [
      {
        id: "people",
        title: "People and their access",
        tables: [perPerson, perDay],
      },
      {
        id: "systems",
        title: "Systems reached",
        tables: [perSystem, privileged, policyHits],
      },
      {
        id: "changes",
        title: "Changes and unused access",
        tables: [newAccess, inactive],
      },
    ],
    notices: [
      ...personNotice(ctx.source),
      ...(await sourceNotice(ctx, rollups.rolledUpDays)),
    ],
    streams: [
      "sessions",
      ...(envJob ? [aggregationName(envJob)] : []),
      // The person behind machine and native users, and the accounts without activity.
      ...(ctx.source === "enriched" ? ["users", "identity_links"] : []),
    ],
  };
}

/**
 * Which source answered what, when the period is long enough for the rollups to answer some of
 * it: only the sessions per day can come from them (with the person as the user key).
 */
async function sourceNotice(
  ctx: KindContext,
  rolledUpDays: ReportQuery,
): Promise<Notice[]> {
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
