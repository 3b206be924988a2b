// Every cron schedule of a configuration, named as a person finds it: the jobs `run` schedules
// and the scheduled reports. `run` checks them before it opens anything; `doctor` also looks at
// when each fires.
import type { Config } from "../config/index.js";
import { planJobs } from "./jobs.js";
import { reportJobNames } from "./report-jobs.js";

export interface NamedSchedule {
  /** The job and the setting, for messages. */
  what: string;
  schedule: string;
}

export function serviceSchedules(config: Config): NamedSchedule[] {
  const reportNames = reportJobNames(config.reports.schedules);
  return [
    ...planJobs(config).map((p) => ({
      what: `schedule of job ${p.name}`,
      schedule: p.schedule,
    })),
    ...config.reports.schedules.map((r, i) => ({
      what: `schedule of ${reportNames[i] ?? r.kind} (reports.schedules[${i}].cron)`,
      schedule: r.cron,
    })),
  ];
}
