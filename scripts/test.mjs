// `npm test`: the unit tier first (seconds), then the integration and slow tiers, which start
// only when every unit test passed: a broken rule stops the run in seconds instead of after the
// integration tier's minutes. Arguments are passed to both vitest runs. A JSON report asked for
// with --outputFile.json=<file> is written once, for the whole run: the two runs' reports are
// summed into it (scripts/vitest-run.mjs), so a reader of one report (.ci/run) counts every test
// of every tier that ran.
//
//   node scripts/test.mjs [vitest args…]
import {
  jsonOutputArg,
  splitJsonOutput,
  takeReport,
  vitest,
  writeMerged,
} from "./vitest-run.mjs";

const { file, rest } = splitJsonOutput(process.argv.slice(2));
// File filters may name files of one tier only: the other tier then finds none, which is no failure.
const filtered = rest.some((a) => !a.startsWith("-"));
const tiers = [
  ["--project", "unit"],
  ["--project", "integration", "--project", "slow"],
];
const reports = [];
let status = 0;
for (const [i, tier] of tiers.entries()) {
  const part = file === undefined ? undefined : `${file}.tier${i}`;
  status = await vitest([
    ...tier,
    ...(filtered ? ["--passWithNoTests"] : []),
    ...rest,
    ...(part === undefined ? [] : [jsonOutputArg(part)]),
  ]);
  const report = part === undefined ? undefined : takeReport(part);
  if (report !== undefined) reports.push(report);
  if (status !== 0) {
    if (i === 0)
      console.error(
        "the unit tier failed: the integration and slow tiers were not run (npm run test:unit runs it alone)",
      );
    break;
  }
}
writeMerged(file, reports);
process.exit(status);
