export {
  Scheduler,
  type JobState,
  type RunControl,
  type ScheduledJob,
  type SchedulerObserver,
  type SkipReason,
} from "./scheduler.js";
export { checkSchedules, nextRuns, schedulePeriodMs } from "./cron.js";
export {
  composeObservers,
  pipelineJobs,
  planJobs,
  type JobKind,
  type JobPlan,
} from "./jobs.js";
