export {
  Metrics,
  type CheckpointSource,
  type MetricsOptions,
} from "./metrics.js";
export {
  OVERDUE_PERIODS,
  checkReadiness,
  overdueAfterMs,
  overdueJobs,
  type OverdueJob,
  type ReadinessReport,
  type ReadinessSource,
} from "./readiness.js";
export {
  startOpsServer,
  type OpsServer,
  type OpsServerOptions,
} from "./server.js";
export {
  checkpointPositions,
  collectStatus,
  waitingWindows,
  type JobStatus,
  type StatusReport,
} from "./status.js";
