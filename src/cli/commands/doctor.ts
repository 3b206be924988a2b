// `sessionhouse doctor`: the preflight platform teams run before `run`. One line per check (what
// was checked, what was found, what to do), or JSON with --json. Exit status 0 when nothing
// failed (warnings included), 1 when a check failed, 2 for a configuration that does not load.
import {
  formatResult,
  overallStatus,
  runDoctor,
  type CheckResult,
} from "../../ops/doctor/index.js";
import { checkSchedules } from "../../scheduler/index.js";
import { serviceSchedules } from "../../scheduler/schedules.js";
import { FatalError } from "../../util/errors.js";
import { loadSettingsReport, type SettingLine } from "../../config/index.js";
import { counted, heading, printTable } from "../output.js";
import { configFrom, type GlobalOptions } from "../runtime.js";

export async function runDoctorCommand(
  globals: GlobalOptions,
  o: { json?: boolean; offline?: boolean },
): Promise<void> {
  const { config, settings } = o.offline
    ? offlineConfig(globals)
    : { config: configFrom(globals, {}, { warnUnknown: false }), settings: [] };
  // As `run` does before anything: a schedule that does not parse is a configuration error.
  checkSchedules(serviceSchedules(config));
  const results = await runDoctor(config, { offline: o.offline === true });
  const status = overallStatus(results);
  if (o.json)
    process.stdout.write(
      `${JSON.stringify({ status, checks: results, ...(o.offline ? { settings } : {}) }, null, 2)}\n`,
    );
  else {
    if (o.offline) printSettings(settings);
    process.stdout.write(
      `${results.map(formatResult).join("\n")}\n\n${summary(results)}\n`,
    );
  }
  const failed = results.filter((r) => r.status === "fail");
  if (failed.length > 0)
    throw new FatalError(
      "DOCTOR_FAILED",
      `${failed.length} check${failed.length === 1 ? "" : "s"} failed: ${failed.map((r) => `${r.family} ${r.name}`).join(", ")}`,
      {
        hint: "fix what each failed line says, then run sessionhouse doctor again",
      },
    );
}

/**
 * The configuration with every setting's value and source, read without the API settings (an
 * offline check is for a machine that has none yet).
 */
function offlineConfig(globals: GlobalOptions) {
  return loadSettingsReport({
    configFile: globals.config,
    overrides: globals.logLevel ? { "log.level": globals.logLevel } : {},
  });
}

/** The settings given somewhere (or missing), then how many are at their default. */
function printSettings(settings: readonly SettingLine[]): void {
  const given = settings.filter((l) => l.from !== "default");
  heading("Settings given, their values and where they came from");
  printTable(given.map((l) => ({ ...l })));
  process.stdout.write(
    `and ${counted(settings.length - given.length, "setting")} at the default (doctor --offline --json lists every one)\n\n`,
  );
}

function summary(results: readonly CheckResult[]): string {
  const count = (s: string) => results.filter((r) => r.status === s).length;
  return `${results.length} checks: ${count("ok")} ok, ${count("warn")} warn, ${count("fail")} fail, ${count("skipped")} skipped`;
}
