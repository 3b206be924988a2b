// The names of the tables the migrations create: every query names a table through these.

export const Tables = {
  sessions: "sessions",
  checkpoints: "checkpoints",
  runs: "runs",
  deadLetters: "dead_letters",
  aggHistogram: "agg_histogram",
  aggTopValues: "agg_top_values",
  aggWindows: "agg_windows",
  aggJobs: "agg_jobs",
  streamWindows: "stream_windows",
  schemaMigrations: "schema_migrations",
  sessionPolls: "session_polls",
  policySuspensions: "policy_suspensions",
  users: "users",
  usersHistory: "users_history",
  userDevices: "user_devices",
  userDevicesHistory: "user_devices_history",
  nativeUsers: "native_users",
  nativeUsersHistory: "native_users_history",
  identityLinks: "native_user_identity_links",
  identityLinksHistory: "native_user_identity_links_history",
  inventoryColumns: "inventory_columns",
  inventoryColumnsHistory: "inventory_columns_history",
  cloudIntegrations: "cloud_integrations",
  cloudIntegrationsHistory: "cloud_integrations_history",
  sessionsEnriched: "sessions_enriched",
  sessionRollupsDaily: "session_rollups_daily",
  dataLabelRollupsDaily: "data_label_rollups_daily",
  rollupDays: "rollup_days",
} as const;

export type TableName = (typeof Tables)[keyof typeof Tables];
