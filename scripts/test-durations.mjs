// Writes test/durations.json from a vitest JSON report (.ci/run keeps one for each pass; any
// `npm test -- --reporter=json --outputFile.json=<file>` writes one): the seconds each test file
// of the integration and slow tiers took. vitest.config.ts starts the longest files first, so
// that no long file starts last and runs alone at the end; a file the list does
// not name starts before all of them (as vitest runs files it has no timing of).
//
//   node scripts/test-durations.mjs <report.json>
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";

const [report] = process.argv.slice(2);
if (!report) {
  console.error("usage: node scripts/test-durations.mjs <vitest JSON report>");
  process.exit(2);
}
const { testResults } = JSON.parse(readFileSync(report, "utf8"));
const seconds = {};
for (const r of testResults) {
  const file = relative(process.cwd(), r.name).split("\\").join("/");
  if (file.startsWith("test/unit/")) continue;
  seconds[file] = Math.round((r.endTime - r.startTime) / 100) / 10;
}
const sorted = Object.fromEntries(
  Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync("test/durations.json", `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(sorted).length} files`);
