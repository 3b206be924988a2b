import { defineConfig } from "vitest/config";

// The embedded engine allows one data path per process, so every test file runs in its own
// forked process (isolate) with its own engine directory; see test/helpers/warehouse.ts.
//
// Two projects: `unit` holds the files that need no engine, no server and no child process
// (seconds, `npm run test:unit`); `integration` holds the rest. `npm test` runs both.
const UNIT = [
  "test/api/counts.test.ts",
  "test/architecture/imports.test.ts",
  "test/api/errors.test.ts",
  "test/api/json-stream.test.ts",
  "test/api/pacing.test.ts",
  "test/api/schemas.test.ts",
  "test/api/session-fast.test.ts",
  "test/api/session-scan.test.ts",
  "test/architecture/docs-files.test.ts",
  "test/architecture/exports.test.ts",
  "test/cluster/render.test.ts",
  "test/config/config.test.ts",
  "test/dashboards/alerting-schema.test.ts",
  "test/dashboards/grafana-sql.test.ts",
  "test/dashboards/schema.test.ts",
  "test/evidence/manifest.test.ts",
  "test/faults/retry.test.ts",
  "test/ops/metrics.test.ts",
  "test/pipeline/window-pool.test.ts",
  "test/reports/stream-coverage.test.ts",
  "test/reports/units.test.ts",
  "test/simulator/generator.test.ts",
  "test/simulator/logs-aggregate.test.ts",
  "test/simulator/logs-query.test.ts",
  "test/sources/id-set.test.ts",
  "test/streams/directory-records.test.ts",
  "test/sources/record-id.test.ts",
  "test/util/secrets.test.ts",
  "test/http-front/statement.test.ts",
  "test/warehouse/insert-files.test.ts",
  "test/warehouse/value-checks.test.ts",
];

const shared = {
  pool: "forks" as const,
  // Two files at once, also on two cores (the default would be one): most integration files
  // spend their time waiting for child processes, simulated latency and timers. On the 2-core
  // development machine the whole run took 626 s this way against 970 s one file at a time.
  maxWorkers: 2,
  testTimeout: 60_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    reporters: ["default"],
    projects: [
      { test: { ...shared, name: "unit", include: UNIT } },
      {
        test: {
          ...shared,
          name: "integration",
          include: ["test/**/*.test.ts"],
          exclude: UNIT,
        },
      },
    ],
  },
});
