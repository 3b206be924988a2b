// Cron expressions as the scheduler reads them (node-cron v4: five fields, or six with seconds
// first), always in UTC. The config schema accepts any string, so schedules are checked here,
// all at once, before anything starts (fail fast, with every problem listed).
import { createTask, validateDetailed } from "node-cron";
import { ConfigError } from "../config/index.js";

export const CRON_TIMEZONE = "UTC";

/** Throws a ConfigError naming every schedule that does not parse. */
export function checkSchedules(
  schedules: ReadonlyArray<{ what: string; schedule: string }>,
): void {
  const problems: string[] = [];
  for (const { what, schedule } of schedules) {
    let detail: string | undefined;
    try {
      const v = validateDetailed(schedule);
      if (!v.valid)
        detail = v.errors.map((e) => e.message).join("; ") || "invalid";
    } catch (err) {
      detail = (err as Error).message;
    }
    if (detail !== undefined) {
      problems.push(
        `${what}: "${schedule}" is not a cron schedule (${detail}); use five fields such as "*/5 * * * *", or six with seconds first`,
      );
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

/** The next `count` instants (epoch ms, UTC) the schedule fires after now. */
export function nextRuns(schedule: string, count: number): number[] {
  // node-cron computes matches only through a task; a task that is never started holds no
  // timer, and destroy() takes it out of node-cron's global registry again.
  const task = createTask(schedule, () => undefined, {
    timezone: CRON_TIMEZONE,
  });
  try {
    return task.getNextRuns(count).map((d) => d.getTime());
  } finally {
    void task.destroy();
  }
}

/**
 * The longest gap between two runs over the next few runs: the period a job is expected to
 * keep. The longest, not the shortest, so an uneven schedule ("0 9,17 * * *") is not called
 * overdue in its long gap.
 */
export function schedulePeriodMs(schedule: string): number {
  const runs = nextRuns(schedule, 12);
  let longest = 0;
  for (let i = 1; i < runs.length; i++)
    longest = Math.max(longest, (runs[i] ?? 0) - (runs[i - 1] ?? 0));
  return longest;
}
