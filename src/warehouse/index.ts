// The warehouse's one entry: everything the pipeline, the reports, the CLI, ops, the scheduler,
// the HTTP front and the bench use of the ClickHouse side, and nothing they do not. Code outside
// src/warehouse/ imports from here only (eslint.config.js refuses a deep import). Opening a
// warehouse loads no server code: nothing here reaches src/http-front/ by a static import
// (test/unit/architecture/imports.test.ts).

// Opening the warehouse, and the SQL text written by hand.
export { openWarehouse, readerView, type Warehouse } from "./client.js";
export { quoteIdent, quoteString, stringList } from "./sql.js";
export {
  checkReadStatement,
  READ_STATEMENT_KINDS,
  readStatementRefusal,
} from "./read-statement.js";
export { READER_SETTINGS } from "./reader-settings.js";
export {
  readableTables,
  readerTableRefusal,
  type ReaderTables,
} from "./reader-tables.js";
export { Tables } from "./tables.js";
export { chTime, chTimeSeconds, fromChTime } from "./format.js";
export { ClickHouseCode, type ClickHouseCodeName } from "./clickhouse-codes.js";
export {
  appliedVersion,
  existingTables,
  migrate,
  pendingMigrations,
} from "./migrate.js";
export { selectRows, type ExecutedQuery, type QueryLog } from "./select.js";

// Writing rows.
export { insertBlock, insertRows, type InsertOptions } from "./insert.js";
export { RowBlock, splitRows, type TakenRows } from "./row-block.js";
export { blockFileDir, blockFilePath } from "./block-files.js";
export {
  rejectedSessionRow,
  SESSION_INSERT_COLUMNS,
  SESSION_ROWS,
  SessionInputs,
  sessionRowsSelect,
  sessionTimesFit,
  sessionValueProblem,
} from "./session-rows.js";
export {
  deleteKeysOfDeletedSessions,
  retireSupersededKeys,
} from "./session-keys.js";

// The exporter's bookkeeping: runs, checkpoints, dead letters, windows, polls.
export {
  abandonOrphanedRuns,
  COVERS_FROM_KEY,
  deadLetterCounts,
  earliestRunningStart,
  failedRunsIn,
  insertDeadLetters,
  lastRuns,
  lastSuccesses,
  readCheckpoint,
  readCheckpoints,
  recordJobSchedules,
  recordRun,
  runCountsIn,
  writeCheckpoint,
  type Checkpoint,
  type RunCounts,
  type RunRecord,
  type RunStatus,
} from "./bookkeeping.js";
export {
  readLease,
  writeLease,
  type LeaseClaim,
  type LeaseState,
} from "./lease.js";
export {
  aggregationRowCounts,
  forgetJob,
  hasWindowTables,
  listWindows,
  readJobDefinition,
  readJobWindows,
  readPreviousFetch,
  recordJobDefinition,
  SETTLED_STATES,
  storedAggregationJobs,
  windowJobs,
  WINDOW_STATES,
  writeWindows,
  type ForgetResult,
  type JobDefinition,
  type PreviousFetch,
  type StoredWindow,
  type WindowRecord,
  type WindowState,
} from "./windows.js";
export {
  countSessionsToPoll,
  countVanishedSessions,
  sessionsToPoll,
  writeSessionPolls,
  type SessionPoll,
  type SessionToPoll,
} from "./session-polls.js";
export { countStoredSessions, storedSessionIds } from "./session-reads.js";

// Detections: the rules' queries and their hits.
export {
  detectionRows,
  emptyTables,
  insertHits,
  recordedHitKeys,
  type DetectionHit,
} from "./detections.js";
export { sigmaField, type FieldDef } from "./detection-fields.js";
export {
  detectionAlertSql,
  scopedSelect,
  SESSIONS_PLACEHOLDER,
  SESSION_PLACEHOLDERS,
  sigmaSelect,
  type Condition,
  type FieldMatch,
  type Scope,
  type SigmaQuery,
} from "./detection-sql.js";

// The directory's entity tables.
export {
  ENTITY_TABLES,
  entityRowCounts,
  humanUserIds,
  insertEntityRows,
  knownSuspensionVersions,
  openVersions,
  sessionResourceIds,
  sessionUserIds,
  suspensionRemovals,
  usersLastRead,
  type HistoryRow,
  type DirectoryHistory,
  type HistoryStream,
} from "./entities.js";

// Rollups, retention, legal holds and archives.
export {
  changedDataLabelDays,
  changedEnvironmentDays,
  changedSessionDays,
  computeDataLabelRollups,
  computeEnvironmentRollups,
  computeSessionRollups,
  openSessionsByDay,
  rollupStatus,
  type ChangedDay,
  type RollupStatus,
} from "./rollups.js";
export {
  appliedRetention,
  keepingEverything,
  retentionSettings,
  type AppliedRetention,
  type RetentionSettings,
} from "./retention.js";
export {
  activeHolds,
  addHold,
  applyActiveHolds,
  applyHolds,
  countHeldSessions,
  holdMatcher,
  isActive,
  listHolds,
  releaseHold,
  seenInSessions,
  type HoldScope,
  type LegalHold,
} from "./holds.js";
export {
  ARCHIVE_FORMAT,
  DEFAULT_ARCHIVE_DIR,
  ARCHIVE_TABLES,
  archiveFileName,
  archivedColumns,
  archiveSpec,
  archiveSpecs,
  exportMonth,
  markArchived,
  monthRows,
  openScratchEngine,
  parquetFileStats,
  parquetStats,
  parquetStatsSql,
  refusePatternPath,
  restoreFile,
  thinnedSessionDays,
  unmarkedRows,
  withMergesPaused,
  storedColumns,
  type ArchiveSpec,
  type ColumnType,
  type MonthRange,
  type RowStats,
  type ScratchEngine,
} from "./archive.js";

// Reading for people: summaries, the query command, the reports' queries.
export {
  aggregationSummary,
  entitySummary,
  sessionSummary,
  type SummaryTable,
} from "./summary.js";
export { outputFormat, userQueryRows, writeUserQuery } from "./user-query.js";
export {
  ReportReader,
  text,
  type ReportQuery,
  type Row,
} from "./reports/query.js";
export { controlPlaneQueries } from "./reports/control-plane.js";
export { coverageQueries } from "./reports/coverage.js";
export { sensitiveQueries } from "./reports/sensitive.js";
export {
  filteredSessionsQuery,
  filterSeenQuery,
  filterValuesQuery,
  type FilterKey,
} from "./reports/filters.js";
export {
  accessQueries,
  detectionHitsQuery,
  policyHitQueries,
  rollupQueries,
  sessionNeeds,
  type SessionSource,
} from "./reports/session-queries.js";

// What `sessionhouse doctor` asks ClickHouse.
export { engineLockPid, openProbe, type ClickHouseProbe } from "./preflight.js";

// The service file of `sessionhouse run`'s read access, for the HTTP front that serves it.
export {
  findService,
  removeServiceFile,
  serviceFilePath,
  type ServiceRecord,
} from "./service-access.js";

// The sessions in standard schemas (OCSF, ECS): the views and their export.
export { exportStandard } from "./standards/export.js";
export { STANDARD_VIEWS, type StandardName } from "./standards/views.js";
