// `sessionhouse doctor`'s entry: the runner, its output, and the result's shape.
export {
  formatResult,
  logResults,
  overallStatus,
  runDoctor,
  type DoctorOptions,
} from "./runner.js";
export {
  CHECK_FAMILIES,
  CHECK_STATUSES,
  type CheckFamily,
  type CheckResult,
  type CheckStatus,
} from "./check.js";
