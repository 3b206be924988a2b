// Accounts with access but no session in the period, when the users stream is exported.
import { controlPlaneQueries } from "../../warehouse/index.js";
import { columns, table, type ReportTable } from "../model.js";
import type { KindContext } from "./context.js";

export async function inactiveAccountsTable(
  ctx: KindContext,
): Promise<ReportTable> {
  const q = controlPlaneQueries.inactiveAccounts;
  return table(
    {
      id: "access-inactive-accounts",
      title: "Accounts with access but no activity",
      note: "Users the control plane knows (not deleted, created before the period ends) with no session in the period, neither as the user nor as the end user behind a machine.",
      columns: columns("id", "email", "name", "type", "db_username", "expires"),
    },
    await ctx.reader.rows(q, ctx.params),
    ctx.reader.missing(q.needs),
  );
}
