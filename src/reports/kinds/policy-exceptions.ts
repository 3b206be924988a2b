// policy-exceptions: policy suspensions in force at some time of the period (their latest
// version): policy, identity, type, created by, request id, from and until, still in force at
// the period's end; and the sessions of their identities while they were in force.
import { controlPlaneQueries } from "../../warehouse/index.js";
import { columns, table } from "../model.js";
import type { KindContext, KindResult } from "./context.js";

export async function policyExceptions(ctx: KindContext): Promise<KindResult> {
  const { reader, params } = ctx;
  const q = controlPlaneQueries;
  const suspensions = table(
    {
      id: "policy-suspensions",
      title: "Policy suspensions in force during the period",
      note: "Every suspension created before the period ends and not expired before it starts, as its latest version says; still active means in force at the period's end.",
      columns: columns(
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
      ),
    },
    await reader.rows(q.suspensions, params),
    reader.missing(q.suspensions.needs),
  );
  const sessions = table(
    {
      id: "policy-sessions-under-suspensions",
      title: "Sessions under a suspension",
      note: "Sessions starting in the period while a suspension of their user (as user or end user) or one of their groups was in force.",
      columns: columns(
        "suspension_id",
        "policy_id",
        "session_id",
        "start_time",
        "user",
        "resource",
        "native_user",
      ),
    },
    await reader.rows(q.sessionsUnder, params),
    reader.missing(q.sessionsUnder.needs),
  );
  const notices =
    suspensions.notExported === undefined
      ? []
      : [
          {
            level: "warning" as const,
            text: "The policy suspensions stream (policy_suspensions) is not exported to this warehouse: this report cannot list the exceptions; the coverage below is still the record's.",
          },
        ];
  return {
    title: "Policy exceptions",
    summary: [
      { label: "Suspensions", value: suspensions.rows.length },
      {
        label: "Still active",
        value: suspensions.rows.filter((r) => r.still_active === true).length,
      },
      { label: "Sessions under them", value: sessions.rows.length },
    ],
    sections: [
      {
        id: "suspensions",
        title: "Suspensions",
        tables: [suspensions, sessions],
      },
    ],
    notices,
    streams:
      suspensions.notExported === undefined
        ? ["sessions", "policy_suspensions"]
        : ["sessions"],
  };
}
