// Runs test files a second time against a ClickHouse server: the HTTP front over a real engine
// (scripts/http-front.mjs), so that the server insert path, its retries and its error handling
// run on machines without a ClickHouse server. Arguments are passed to vitest; without any, the
// sync, aggregation, dashboard and query-output suites run (not the wire chaos run: the
// first pass's two-services suite already kills exporters inserting through a front, and CI's
// 25 minutes hold both passes only without it). Uses the build in dist/.
//
//   npm run build && node scripts/test-server.mjs [vitest args…]
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const SUITES = [
  "test/integration/pipeline",
  "test/integration/cli/query.test.ts",
  "test/integration/dashboards/queries.test.ts",
  "test/integration/faults/clickhouse-faults.test.ts",
  "test/integration/faults/secrets.test.ts",
  "test/integration/streams/directory-contract.test.ts",
  "test/integration/streams/list-counts.test.ts",
  "test/integration/cli/abandoned-runs.test.ts",
  "test/integration/reports/backfill-coverage.test.ts",
  "test/integration/faults/sessions-windows.test.ts",
  "test/integration/streams/integrity-property.test.ts",
  "test/integration/warehouse/bad-rows.test.ts",
  "test/integration/warehouse/engine-rows.test.ts",
  "test/integration/warehouse/session-columns.test.ts",
  "test/integration/scheduler/lease.test.ts",
  "test/integration/warehouse/checkpoint-monotonic.test.ts",
  "test/integration/warehouse/standard-views.test.ts",
  "test/integration/cli/export.test.ts",
  "test/integration/warehouse/upgrade-fixtures.test.ts",
  "test/integration/cli/migrate-dry-run.test.ts",
  "test/integration/cli/migrate-killed.test.ts",
  "test/integration/detections/arrival.test.ts",
  "test/integration/detections/sigma.test.ts",
];

// The front's engine directory is removed when the pass ends.
const frontDir = mkdtempSync(join(tmpdir(), "sessionhouse-front-"));
const front = spawn(process.execPath, ["scripts/http-front.mjs"], {
  stdio: ["ignore", "pipe", "inherit"],
  env: { ...process.env, HTTP_FRONT_DATA_DIR: frontDir },
});
const lines = createInterface({ input: front.stdout });
const [first] = await Promise.race([
  once(lines, "line"),
  once(front, "exit").then(([code]) => {
    throw new Error(`the HTTP front exited with ${code} before it listened`);
  }),
]);
const url = /^CLICKHOUSE_URL=(\S+)$/.exec(first)?.[1];
if (!url)
  throw new Error(`unexpected first line from the HTTP front: ${first}`);
console.log(`server pass: CLICKHOUSE_URL=${url}`);

const args = process.argv.slice(2);
const hasFiles = args.some((a) => !a.startsWith("-"));
const vitest = spawn(
  process.execPath,
  [
    "node_modules/vitest/vitest.mjs",
    "run",
    ...(hasFiles ? [] : SUITES),
    ...args,
  ],
  {
    stdio: "inherit",
    env: { ...process.env, CLICKHOUSE_URL: url },
  },
);
const [code] = await once(vitest, "exit");
front.kill("SIGTERM");
await once(front, "exit");
rmSync(frontDir, { recursive: true, force: true });
process.exit(code ?? 1);
