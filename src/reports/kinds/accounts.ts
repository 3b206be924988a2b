// Accounts with access but no session in the period, when the users stream is exported: the
// users the control plane knows, less the users and end users (by id or e-mail) of the period's
// sessions, which a part of the access review's one read of them lists (every session of the
// period, whatever the report's filters: as the users' query alone reads them,
// controlPlaneQueries.inactiveAccounts).
import {
  ACCESS_PARTS,
  controlPlaneQueries,
  text,
  type Row,
} from "../../warehouse/index.js";
import type { PartedRows } from "../parts.js";
import type { TableRead, TableSpec } from "../spec.js";
import type { KindContext } from "./context.js";

/** The table, its rows filtered from the users as they are read. */
export function inactiveAccounts<F>(
  sessions: (facts: F) => PartedRows,
): Omit<TableSpec<F>, "section"> {
  return {
    id: "access-inactive-accounts",
    title: "Accounts with access but no activity",
    note: "Users the control plane knows (not deleted, created before the period ends) with no session in the period, neither as the user nor as the end user behind a machine.",
    columns: ["id", "email", "name", "type", "db_username", "expires"],
    rows: {
      read: (ctx, facts) => readInactive(ctx, sessions(facts)),
      query: controlPlaneQueries.accounts,
    },
  };
}

async function readInactive(
  ctx: KindContext,
  read: PartedRows,
): Promise<TableRead> {
  const q = controlPlaneQueries.accounts;
  const notExported = ctx.reader.missing([...q.needs, "sessions"]);
  // The sessions' accounts, read to the end of the one read before the users are asked for.
  const active = read.ran
    ? await read.all(ACCESS_PARTS.activeAccounts)
    : undefined;
  const users =
    active === undefined || notExported.length > 0
      ? undefined
      : ctx.reader.stream(q, ctx.params);
  return {
    rows:
      users === undefined ? undefined : withoutActivity(users, active ?? []),
    notExported,
  };
}

/** The users none of whose ids or e-mails is among the active accounts' (a few thousand: held). */
async function* withoutActivity(
  users: AsyncIterable<Row>,
  active: readonly Row[],
): AsyncIterable<Row> {
  const ids = new Set<string>();
  const emails = new Set<string>();
  for (const a of active) {
    ids.add(text(a.user_id)).add(text(a.end_user_id));
    emails.add(text(a.user_email)).add(text(a.end_user_email));
  }
  for await (const u of users) {
    const email = text(u.email);
    if (!ids.has(text(u.id)) && (email === "" || !emails.has(email))) yield u;
  }
}
