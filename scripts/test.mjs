// `npm test`: the unit tier first (seconds), then the integration and slow tiers, which start
// only when every unit test passed: a broken rule stops the run in seconds instead of after the
// integration tier's minutes. Arguments are passed to both vitest runs. A JSON report asked for
// with --outputFile.json=<file> is written once, for the whole run: the two runs' reports are
// summed into it (counts added, test files listed together), so a reader of one report (.ci/run)
// counts every test of every tier that ran.
//
//   node scripts/test.mjs [vitest args…]
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";

const JSON_OUTPUT = "--outputFile.json";

/** The JSON report's path among the arguments, and the arguments without it. */
function splitJsonOutput(args) {
  const rest = [];
  let file;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith(`${JSON_OUTPUT}=`)) file = a.slice(JSON_OUTPUT.length + 1);
    else if (a === JSON_OUTPUT) file = args[++i];
    else rest.push(a);
  }
  return { file, rest };
}

async function vitest(args) {
  const child = spawn(
    process.execPath,
    ["node_modules/vitest/vitest.mjs", "run", ...args],
    { stdio: "inherit" },
  );
  const [code, signal] = await once(child, "exit");
  return code ?? (signal ? 1 : 0);
}

/** One report of several: every count summed, every test file listed, success only if all. */
function merge(reports) {
  const [first, ...others] = reports;
  const merged = { ...first, testResults: [...first.testResults] };
  for (const r of others) {
    for (const [key, value] of Object.entries(r))
      if (key.startsWith("num") && typeof value === "number")
        merged[key] = (merged[key] ?? 0) + value;
    merged.testResults.push(...r.testResults);
    merged.success = merged.success && r.success;
    merged.startTime = Math.min(merged.startTime, r.startTime);
  }
  return merged;
}

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
    ...(part === undefined ? [] : [`${JSON_OUTPUT}=${part}`]),
  ]);
  if (part !== undefined && existsSync(part)) {
    reports.push(JSON.parse(readFileSync(part, "utf8")));
    rmSync(part);
  }
  if (status !== 0) {
    if (i === 0)
      console.error(
        "the unit tier failed: the integration and slow tiers were not run (npm run test:unit runs it alone)",
      );
    break;
  }
}
if (file !== undefined && reports.length > 0)
  writeFileSync(file, JSON.stringify(merge(reports)));
process.exit(status);
