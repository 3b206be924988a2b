// policy-exceptions: policy suspensions in force at some time of the period (their latest
// version): policy, identity, type, created by, request id, from and until, still in force at
// the period's end; and the sessions of their identities while they were in force.
import { controlPlaneQueries as q, type Row } from "../../warehouse/index.js";
import { defineKind, totalOf, type Tables, type Section } from "../spec.js";

/** The report's sections, in the order their first table is listed. */
const SUSPENSIONS: Section = { id: "suspensions", title: "Suspensions" };

/** The suspensions' totals, read first. */
interface Facts {
  totals: Row;
}

/** The suspensions are exported (the table of them is in the report). */
const exported = (t: Tables): boolean =>
  t.get("policy-suspensions")?.notExported === undefined;

export const policyExceptions = defineKind<Facts>({
  title: "Policy exceptions",
  facts: async (ctx) => ({
    totals: (await ctx.reader.rows(q.suspensionTotals, ctx.params))?.[0] ?? {},
  }),
  tables: [
    {
      id: "policy-suspensions",
      section: SUSPENSIONS,
      title: "Policy suspensions in force during the period",
      note: "Every suspension created before the period ends and not expired before it starts, as its latest version says; still active means in force at the period's end.",
      columns: [
        "id",
        "policy_id",
        "identity_type",
        "identity_id",
        "suspension_type",
        "created_by",
        "request_id",
        "valid_from",
        "valid_until",
        "still_active:bool",
        "input_condition",
      ],
      rows: q.suspensions,
    },
    {
      id: "policy-sessions-under-suspensions",
      section: SUSPENSIONS,
      title: "Sessions under a suspension",
      note: "Sessions starting in the period while a suspension of their user (as user or end user) or one of their groups was in force.",
      columns: [
        "suspension_id",
        "policy_id",
        "session_id",
        "start_time",
        "user",
        "resource",
        "native_user",
      ],
      rows: q.sessionsUnder,
    },
  ],
  summary: (t, { totals }) => [
    { label: "Suspensions", value: Number(totals.suspensions ?? 0) },
    { label: "Still active", value: Number(totals.still_active ?? 0) },
    {
      label: "Sessions under them",
      value: totalOf(t, "policy-sessions-under-suspensions"),
    },
  ],
  notices: (t) =>
    Promise.resolve(
      exported(t)
        ? []
        : [
            {
              level: "warning",
              text: "The policy suspensions stream (policy_suspensions) is not exported to this warehouse: this report cannot list the exceptions; the coverage below is still the record's.",
            },
          ],
    ),
  streams: (t) =>
    exported(t) ? ["sessions", "policy_suspensions"] : ["sessions"],
});
