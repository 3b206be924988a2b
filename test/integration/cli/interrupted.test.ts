// Ctrl-C during a backfill: the command ends as the signal ends it (exit by SIGINT, status 130 in
// a shell) after one line that says the work is kept and the same command resumes; run again,
// it finishes, and every session of the range is stored once. The interrupted run is a child
// (the signal ends it); the rerun runs the CLI's main in this process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../../src/simulator/index.js";
import { cleanEnv, privateCli, startCli } from "../../helpers/cli.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { API_KEY, testSimulator } from "../../helpers/simulator.js";
import {
  freshDatabaseName,
  migratedWarehouse,
  select,
  testConfig,
  testDataDir,
} from "../../helpers/warehouse.js";
import { openWarehouse } from "../../../src/warehouse/client.js";

const cli = privateCli();
const NOW = Date.UTC(2026, 10, 20, 12);
/** The control plane of the interrupted run: slow enough that it is paging when the signal comes. */
let slow: Simulator;
/** The same history, answered at once: the rerun's. */
let sim: Simulator;
const database = freshDatabaseName();

beforeAll(async () => {
  const history = { atMs: NOW, historyDays: 3, sessionsPerDay: 400 };
  [slow, sim] = await Promise.all([
    testSimulator({
      ...history,
      latency: { firstByteMs: 300, bytesPerSecond: 200_000, maxConcurrent: 1 },
    }),
    testSimulator(history),
  ]);
  // The database as `migrate` leaves it (the run's schema replayed): the test is about the
  // backfill, not the first migration.
  const w = await migratedWarehouse(await testConfig({}, database));
  await w.close();
});

afterAll(async () => {
  await Promise.all([slow?.close(), sim?.close()]);
});

const env = (api: Simulator) =>
  cleanEnv({
    SESSIONHOUSE_API_URL: api.url,
    SESSIONHOUSE_API_KEY: API_KEY,
    SESSIONHOUSE_DATA_DIR: testDataDir(),
    CLICKHOUSE_DATABASE: database,
    CLICKHOUSE_URL: process.env.CLICKHOUSE_URL,
    SESSIONHOUSE_LOG_LEVEL: "warn",
    SESSIONHOUSE_WINDOW: "1h",
  });
const range = [
  "--from",
  "2026-11-18T00:00:00Z",
  "--to",
  "2026-11-20T00:00:00Z",
];

describe("an interrupted backfill", () => {
  it("says how it resumes, and the rerun completes it", async () => {
    const run = startCli(cli(), ["sync", "sessions", ...range], env(slow));
    // Once it is paging: a few windows asked for (the handler is set before the first request).
    const before = slow.stats().requests;
    while (slow.stats().requests - before < 3)
      await new Promise((r) => setTimeout(r, 100));
    run.child.kill("SIGINT");
    const r = await run.result;
    expect(r.signal).toBe("SIGINT");
    expect(r.stderr).toContain(
      "interrupted: sessionhouse sync stopped before it finished (SIGINT)",
    );
    expect(r.stderr).toContain(
      "running the same command again resumes where it stopped",
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);

    // The rerun needs no child: the CLI's main in this process, with the same settings.
    const vars: Record<string, string> = {};
    for (const [k, v] of Object.entries(env(sim)))
      if (
        v !== undefined &&
        (k.startsWith("SESSIONHOUSE_") || k.startsWith("CLICKHOUSE_"))
      )
        vars[k] = v;
    const again = await mainInProcess(vars, "sync", "sessions", ...range);
    expect(again.status, again.stderr).toBe(0);
    const w = await openWarehouse(await testConfig({}, database));
    try {
      const [row] = await select<{ n: string; d: string }>(
        w,
        "SELECT count() AS n, uniqExact(id) AS d FROM {db}.sessions FINAL WHERE start_time >= '2026-11-18' AND start_time < '2026-11-20'",
      );
      expect(Number(row?.n)).toBeGreaterThan(0);
      expect(row?.n).toBe(row?.d);
    } finally {
      await w.close();
    }
  });
});
