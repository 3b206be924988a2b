// `sessionhouse export` holds a page, not the range: the built CLI, its V8 heap capped below the
// size of what it writes, exports a busy simulated day to a file, every stored session once.
// A process that held the whole export (one string, or the parsed rows) could not finish.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Simulator } from "../../../src/simulator/index.js";
import * as built from "../../helpers/cli.js";
import { NOON } from "../../helpers/simulator.js";
import { simulatedDay } from "../../helpers/simulated-day.js";
import { select, testDataDir } from "../../helpers/warehouse.js";

const HEAP_MB = 48;
const DAY = 24 * 3_600_000;
let sim: Simulator;
let cli: built.CliPackage;
let database: string;
let stored: number;

beforeAll(async () => {
  cli = await built.buildCli();
  const day = await simulatedDay({
    sessionsPerDay: 40_000,
    historyDays: 2,
    lookback: "1d",
    env: { SESSIONHOUSE_PAGE_SIZE: "20000" },
  });
  sim = day.sim;
  const { config, w } = day;
  const [row] = await select<{ n: string }>(
    w,
    "SELECT count() AS n FROM {db}.sessions FINAL",
  );
  stored = Number(row?.n);
  database = config.clickhouse.database;
  await w.close();
}, 600_000);

afterAll(async () => {
  await sim.close();
  built.removeCli(cli);
});

it(`exports a day of some 30000 sessions with a ${HEAP_MB} MB heap`, async () => {
  const file = join(cli.root, "day.jsonl");
  const result = await built.runCli(
    cli,
    [
      "export",
      "ocsf",
      "--from",
      new Date(NOON - 2 * DAY).toISOString(),
      "--to",
      new Date(NOON + DAY).toISOString(),
      "--out",
      file,
    ],
    built.cleanEnv({
      SESSIONHOUSE_DATA_DIR: testDataDir(),
      CLICKHOUSE_DATABASE: database,
      SESSIONHOUSE_LOG_LEVEL: "silent",
      NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}`,
    }),
    600_000,
  );
  expect(result.code, result.stderr).toBe(0);
  expect(stored).toBeGreaterThan(20_000);
  // What it wrote is more than its heap could hold as one string, let alone as parsed rows.
  expect(statSync(file).size).toBeGreaterThan(HEAP_MB * 1024 * 1024);
  const ids = new Set<string>();
  let lines = 0;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line === "") continue;
    lines++;
    ids.add((JSON.parse(line) as { metadata: { uid: string } }).metadata.uid);
  }
  expect(lines).toBe(stored);
  expect(ids.size).toBe(stored);
}, 900_000);
