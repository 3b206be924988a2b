// `sessionhouse doctor`'s entry: the runner, its output, and the result's shape.
export {
  formatResult,
  logResults,
  overallStatus,
  runDoctor,
} from "./runner.js";
export type { CheckResult } from "./check.js";
