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
import { configFrom, type GlobalOptions } from "../runtime.js";

export async function runDoctorCommand(
  globals: GlobalOptions,
  o: { json?: boolean },
): Promise<void> {
  const config = configFrom(globals, {}, { warnUnknown: false });
  // As `run` does before anything: a schedule that does not parse is a configuration error.
  checkSchedules(serviceSchedules(config));
  const results = await runDoctor(config);
  const status = overallStatus(results);
  if (o.json)
    process.stdout.write(
      `${JSON.stringify({ status, checks: results }, null, 2)}\n`,
    );
  else
    process.stdout.write(
      `${results.map(formatResult).join("\n")}\n\n${summary(results)}\n`,
    );
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

function summary(results: readonly CheckResult[]): string {
  const count = (s: string) => results.filter((r) => r.status === s).length;
  return `${results.length} checks: ${count("ok")} ok, ${count("warn")} warn, ${count("fail")} fail, ${count("skipped")} skipped`;
}
