// Accounts with access but no session in the period, when the users stream is exported.
import { controlPlaneQueries } from "../../warehouse/index.js";
import type { TableSpec } from "../spec.js";

export const INACTIVE_ACCOUNTS = {
  id: "access-inactive-accounts",
  title: "Accounts with access but no activity",
  note: "Users the control plane knows (not deleted, created before the period ends) with no session in the period, neither as the user nor as the end user behind a machine.",
  columns: ["id", "email", "name", "type", "db_username", "expires"],
  rows: controlPlaneQueries.inactiveAccounts,
} satisfies Omit<TableSpec<unknown>, "section">;
