// The reports `run` writes on a schedule (reports.schedules): at each tick, the report of the
// period before it (the previous month, ISO week or day, UTC) into its own directory under
// `out`. A tick whose report is already written (a manifest is there) does nothing; a directory
// left without a manifest by an interrupted run is written again. Each run is a row of `runs`.
import { existsSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ReportScheduleConfig } from "../config/index.js";
import { MANIFEST_FILE } from "../evidence/manifest.js";
import { withRun } from "../pipeline/context.js";
import { previousPeriod, reportDirName } from "../reports/period.js";
import { parseFilters, reportFrom } from "../reports/produce.js";
import { readerView } from "../warehouse/index.js";
import { DEFAULT_RUN_DEADLINE_MS, type PipelineDeps } from "./jobs.js";
import type { ScheduledJob } from "./scheduler.js";

/** `report.<kind>`, or `report.<kind>.<n>` (from 2) for a kind scheduled more than once. */
export function reportJobNames(
  schedules: readonly ReportScheduleConfig[],
): string[] {
  const seen = new Map<string, number>();
  return schedules.map((s) => {
    const n = (seen.get(s.kind) ?? 0) + 1;
    seen.set(s.kind, n);
    return n === 1 ? `report.${s.kind}` : `report.${s.kind}.${n}`;
  });
}

export function reportJobs(
  deps: PipelineDeps,
  nowMs: () => number = Date.now,
): ScheduledJob[] {
  const schedules = deps.config.reports.schedules;
  const names = reportJobNames(schedules);
  return schedules.map((s, i) => {
    const name = names[i] ?? `report.${s.kind}`;
    // A bad filter is a configuration error at start, not at the first tick.
    const filters = parseFilters(s.filter);
    return {
      name,
      schedule: s.cron,
      deadlineMs: DEFAULT_RUN_DEADLINE_MS,
      run: (control) =>
        withRun({ ...deps, signal: control.signal }, name, async (ctx) => {
          const { fromMs, toMs } = previousPeriod(s.range, nowMs());
          const dir = resolve(s.out, reportDirName(s.kind, fromMs, toMs));
          if (existsSync(join(dir, MANIFEST_FILE))) {
            ctx.logger.info({ dir }, "report already written");
            return;
          }
          rmSync(dir, { recursive: true, force: true });
          // Read-only, as the report command reads: the engine refuses any write.
          const written = await reportFrom(
            readerView(deps.warehouse),
            deps.config,
            {
              kind: s.kind,
              fromMs,
              toMs,
              out: dir,
              formats: s.format,
              filters,
            },
          );
          ctx.logger.info(
            { dir, files: written.files.length, signed: written.signed },
            "report written",
          );
        }),
    };
  });
}
