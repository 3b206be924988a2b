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
  sessionRollupsDaily: "session_rollups_daily",
  dataLabelRollupsDaily: "data_label_rollups_daily",
  rollupDays: "rollup_days",
  legalHolds: "legal_holds",
  legalHoldEvents: "legal_hold_events",
  retentionSettings: "retention_settings",
} as const;

export type TableName = (typeof Tables)[keyof typeof Tables];
