export {
  Scheduler,
  type JobPhase,
  type JobState,
  type RunControl,
  type ScheduledJob,
  type SchedulerObserver,
  type SchedulerOptions,
  type SkipReason,
} from "./scheduler.js";
export {
  CRON_TIMEZONE,
  checkSchedules,
  nextRuns,
  schedulePeriodMs,
} from "./cron.js";
export {
  DEFAULT_RUN_DEADLINE_MS,
  composeObservers,
  pipelineJobs,
  planJobs,
  type JobKind,
  type JobPlan,
  type PipelineDeps,
} from "./jobs.js";
