// Which test files prove the server path: the code that branches on the warehouse's kind
// (embedded or server), and the test file that runs each such source against a ClickHouse server.
// `pass: "server"` files run a second time in the server pass (scripts/test-server.mjs, against
// the HTTP front over a real engine); `pass: "own front"` files start a front themselves and
// prove their server path in the first pass already. A suite belongs in the server pass only when
// it runs a source of this list: the rest of the code issues the same SQL through the same
// client interface on both kinds, and the first pass proves it. test/unit/architecture/
// server-suites.test.ts fails when a source that branches on the kind is covered by no file
// here, or when a file named here does not exist.

/** @type {readonly { suite: string; pass: "server" | "own front"; covers: readonly string[] }[]} */
export const SERVER_SUITES = [
  // Inserts: the body sent with exec, its retries, rows the server refuses one by one.
  {
    suite: "test/integration/pipeline/sessions-sync.test.ts",
    pass: "server",
    covers: ["src/warehouse/insert.ts"],
  },
  {
    suite: "test/integration/pipeline/aggregations-sync.test.ts",
    pass: "server",
    covers: ["src/warehouse/insert.ts"],
  },
  {
    suite: "test/integration/warehouse/bad-rows.test.ts",
    pass: "server",
    covers: ["src/warehouse/insert.ts"],
  },
  {
    suite: "test/integration/warehouse/engine-rows.test.ts",
    pass: "server",
    covers: ["src/warehouse/insert.ts"],
  },
  {
    suite: "test/integration/warehouse/session-columns.test.ts",
    pass: "server",
    covers: ["src/warehouse/insert.ts"],
  },
  {
    suite: "test/integration/pipeline/bad-values.test.ts",
    pass: "server",
    covers: ["src/warehouse/insert.ts"],
  },
  {
    suite: "test/integration/warehouse/checkpoint-monotonic.test.ts",
    pass: "server",
    covers: ["src/warehouse/insert.ts"],
  },
  {
    suite: "test/integration/streams/directory-contract.test.ts",
    pass: "server",
    covers: ["src/warehouse/insert.ts"],
  },
  {
    suite: "test/integration/streams/list-counts.test.ts",
    pass: "server",
    covers: ["src/warehouse/insert.ts"],
  },
  // The server client: its errors, retries and what it never says (the key, the password).
  {
    suite: "test/integration/faults/clickhouse-faults.test.ts",
    pass: "server",
    covers: ["src/warehouse/client.ts", "src/warehouse/preflight.ts"],
  },
  {
    suite: "test/integration/faults/secrets.test.ts",
    pass: "server",
    covers: ["src/warehouse/client.ts"],
  },
  {
    suite: "test/integration/warehouse/pinned-settings.test.ts",
    pass: "own front",
    covers: ["src/warehouse/preflight.ts", "src/warehouse/client.ts"],
  },
  // Reads: the read-only client of a server, user queries, exports, views and reports.
  {
    suite: "test/integration/cli/query.test.ts",
    pass: "server",
    covers: ["src/warehouse/user-query.ts", "src/warehouse/client.ts"],
  },
  {
    suite: "test/integration/cli/read-only-credentials.test.ts",
    pass: "own front",
    covers: ["src/warehouse/client.ts", "src/warehouse/user-query.ts"],
  },
  {
    suite: "test/integration/cli/export.test.ts",
    pass: "server",
    covers: ["src/warehouse/client.ts"],
  },
  {
    suite: "test/integration/warehouse/standard-views.test.ts",
    pass: "server",
    covers: ["src/warehouse/client.ts"],
  },
  {
    suite: "test/integration/reports/backfill-coverage.test.ts",
    pass: "server",
    covers: ["src/warehouse/reports/query.ts"],
  },
  {
    suite: "test/integration/reports/reports.test.ts",
    pass: "own front",
    covers: ["src/warehouse/reports/query.ts"],
  },
  // Migrations on a server: the database created when missing, a migration killed midway.
  {
    suite: "test/integration/cli/migrate-dry-run.test.ts",
    pass: "server",
    covers: ["src/warehouse/client.ts"],
  },
  {
    suite: "test/integration/cli/migrate-killed.test.ts",
    pass: "server",
    covers: ["src/warehouse/client.ts"],
  },
  // The other sources that branch on the kind.
  {
    suite: "test/integration/detections/arrival.test.ts",
    pass: "server",
    covers: ["src/warehouse/detections.ts"],
  },
  {
    suite: "test/integration/pipeline/archive.test.ts",
    pass: "server",
    covers: [
      "src/warehouse/archive.ts",
      "src/pipeline/archive/export.ts",
      "src/pipeline/archive/check.ts",
    ],
  },
  {
    suite: "test/integration/pipeline/archive-trust.test.ts",
    pass: "server",
    covers: ["src/warehouse/archive.ts", "src/pipeline/archive/check.ts"],
  },
  {
    suite: "test/integration/scheduler/lease.test.ts",
    pass: "server",
    covers: ["src/scheduler/lease.ts"],
  },
  {
    suite: "test/integration/cli/doctor.test.ts",
    pass: "own front",
    covers: ["src/ops/doctor/clickhouse-checks.ts"],
  },
  {
    suite: "test/integration/cli/two-services.test.ts",
    pass: "own front",
    covers: ["src/cli/commands/run.ts", "src/scheduler/lease.ts"],
  },
];
