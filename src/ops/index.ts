export { Metrics } from "./metrics.js";
export {
  checkReadiness,
  overdueAfterMs,
  overdueJobs,
  type ReadinessReport,
} from "./readiness.js";
export { startOpsServer, type OpsServer } from "./server.js";
export { collectStatus, type StatusReport } from "./status.js";
