// Ctrl-C during a backfill: the command ends as the signal ends it (exit by SIGINT, status 130 in
// a shell) after one line that says the work is kept and the same command resumes; run again,
// it finishes, and every session of the range is stored once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../../src/simulator/index.js";
import { cleanEnv, privateCli, runCli, startCli } from "../../helpers/cli.js";
import { API_KEY, testSimulator } from "../../helpers/simulator.js";
import {
  freshDatabaseName,
  select,
  testConfig,
  testDataDir,
} from "../../helpers/warehouse.js";
import { openWarehouse } from "../../../src/warehouse/client.js";

const cli = privateCli();
const NOW = Date.UTC(2026, 10, 20, 12);
let sim: Simulator;
const database = freshDatabaseName();

beforeAll(async () => {
  sim = await testSimulator({
    atMs: NOW,
    historyDays: 3,
    sessionsPerDay: 400,
    // Slow enough that the backfill is still going when the signal comes.
    latency: { firstByteMs: 300, bytesPerSecond: 200_000, maxConcurrent: 1 },
  });
});

afterAll(async () => {
  await sim?.close();
});

const env = () =>
  cleanEnv({
    SESSIONHOUSE_API_URL: sim.url,
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
    const run = startCli(cli(), ["sync", "sessions", ...range], env());
    // Once it is paging: a few windows asked for (the handler is set before the first request).
    const before = sim.stats().requests;
    while (sim.stats().requests - before < 3)
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

    const again = await runCli(cli(), ["sync", "sessions", ...range], env());
    expect(again.code, again.stderr).toBe(0);
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
