// What scripts/test.mjs and scripts/test-server.mjs share: one vitest run as a child process,
// the JSON report's path taken out of the arguments, and several runs' reports merged into one
// (counts added, test files listed together, success only if all), so that a reader of one
// report (.ci/run) counts every test of every run.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";

const JSON_OUTPUT = "--outputFile.json";

/** The JSON report's path among the arguments, and the arguments without it. */
export function splitJsonOutput(args) {
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

/** The argument that asks vitest for a JSON report at `file`. */
export const jsonOutputArg = (file) => `${JSON_OUTPUT}=${file}`;

/** Runs vitest with `args` (and `env` added); resolves to its exit code. */
export async function vitest(args, env = {}) {
  const child = spawn(
    process.execPath,
    ["node_modules/vitest/vitest.mjs", "run", ...args],
    { stdio: "inherit", env: { ...process.env, ...env } },
  );
  const [code, signal] = await once(child, "exit");
  return code ?? (signal ? 1 : 0);
}

/** The report at `part`, removed once read; undefined when the run wrote none. */
export function takeReport(part) {
  if (!existsSync(part)) return undefined;
  const report = JSON.parse(readFileSync(part, "utf8"));
  rmSync(part);
  return report;
}

/** One report of several. */
export function merge(reports) {
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

/** Writes the merged report of `reports` to `file`, when a report was asked for and written. */
export function writeMerged(file, reports) {
  if (file !== undefined && reports.length > 0)
    writeFileSync(file, JSON.stringify(merge(reports)));
}
