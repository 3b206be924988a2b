// `archive export`, `verify` and `restore` of a month larger than the memory they may take: the
// engine writes and reads the Parquet a row group at a time, and the files are hashed a chunk
// at a time, so none of them holds the month's file. Each command runs through the built CLI
// with a 64 MB V8 heap and reports its own peak resident set size, held to the target (1 GiB);
// the file's row groups, which bound what the engine holds, are read from its metadata.
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { quoteString, type Warehouse } from "../../../src/warehouse/index.js";
import {
  buildCli,
  cleanEnv,
  removeCli,
  startCli,
  type CliPackage,
} from "../../helpers/cli.js";
import {
  markSessionsSynced,
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

/** Sessions of October 2026, each with a raw record of random (incompressible) text. */
const SESSIONS = 200_000;
const RAW_BYTES = 400;
const MiB = 1024 * 1024;

let cli: CliPackage | undefined;
let tmp: string;
let dataDir: string;
let database: string;

beforeAll(async () => {
  tmp = mkdtempSync(join(testTmpDir(), "archive-memory-"));
  dataDir = join(tmp, "data");
  const config = await testConfig({ SESSIONHOUSE_DATA_DIR: dataDir });
  database = config.clickhouse.database;
  const w = await migratedWarehouse(config);
  try {
    await w.client.command({
      query: `INSERT INTO ${database}.sessions (id, start_time, session_status, user_email, resource_name, raw, fetched_at, version)
        SELECT concat('ses_', toString(number)),
               toDateTime64('2026-10-01 00:00:00', 3, 'UTC') + toIntervalMillisecond(number * 10000),
               'completed', concat('u', toString(number % 500), '@acme.example'),
               concat('r', toString(number % 50)), randomPrintableASCII(${RAW_BYTES}),
               toDateTime64('2026-11-01 00:00:00', 3, 'UTC'), 1
        FROM numbers(${SESSIONS})`,
    });
    await markSessionsSynced(w, "2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z");
  } finally {
    await w.close();
  }
  cli = await buildCli();
  writeFileSync(
    join(tmp, "peak-rss.mjs"),
    "process.on('exit', () => process.stderr.write(`peak-rss ${process.resourceUsage().maxRSS * 1024}\\n`));\n",
  );
}, 120_000);

afterAll(() => {
  removeCli(cli);
  rmSync(tmp, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  peakRss: number;
}

/** The CLI with a small V8 heap, on `dir` as its data directory; its peak RSS at exit. */
async function sessionhouse(args: string[], dir = dataDir): Promise<Run> {
  if (!cli) throw new Error("no CLI package");
  const run = startCli(
    cli,
    args,
    cleanEnv({
      SESSIONHOUSE_DATA_DIR: dir,
      CLICKHOUSE_DATABASE: database,
      SESSIONHOUSE_LOG_LEVEL: "silent",
      NODE_OPTIONS: `--max-old-space-size=64 --import ${join(tmp, "peak-rss.mjs")}`,
    }),
  );
  const r = await run.result;
  return {
    code: r.code,
    stdout: r.stdout,
    stderr: r.stderr,
    peakRss: Number(/peak-rss (\d+)/.exec(r.stderr)?.[1] ?? NaN),
  };
}

it("exports, verifies and restores a month a row group at a time, each command under 1 GiB", async () => {
  const root = join(tmp, "archive");
  const restore = (from: string, month: string, dir: string) =>
    sessionhouse(
      [
        "archive",
        "restore",
        "--month",
        month,
        "--from",
        from,
        "--allow-unsigned",
      ],
      dir,
    );
  const exported = await sessionhouse([
    "archive",
    "export",
    "--month",
    "2026-10",
    "--to",
    root,
  ]);
  expect(exported.code, exported.stderr).toBe(0);
  expect(exported.stdout).toContain(
    `sessions: ${SESSIONS} rows → sessions.parquet`,
  );
  const fileBytes = statSync(join(root, "2026-10", "sessions.parquet")).size;
  expect(fileBytes).toBeGreaterThan(SESSIONS * RAW_BYTES * 0.8);

  const verified = await sessionhouse(["archive", "verify", root]);
  expect(verified.code, verified.stderr).toBe(0);
  expect(verified.stdout).toContain(`${SESSIONS} rows read back`);

  const restoreDir = join(tmp, "restored");
  const restored = await restore(root, "2026-10", restoreDir);
  expect(restored.code, restored.stderr).toBe(0);
  const config = await testConfig(
    { SESSIONHOUSE_DATA_DIR: restoreDir },
    database,
  );
  const w: Warehouse = await migratedWarehouse(config);
  try {
    const [n] = await select<{ n: string; bytes: string }>(
      w,
      "SELECT count() AS n, sum(length(raw)) AS bytes FROM {db}.sessions FINAL",
    );
    expect(Number(n?.n)).toBe(SESSIONS);
    expect(Number(n?.bytes)).toBe(SESSIONS * RAW_BYTES);
    // The file's row groups: what a writer holds while it encodes and a reader while it
    // decodes, whatever the month's size.
    const [groups] = await select<{ groups: string; max_bytes: string }>(
      w,
      `SELECT num_row_groups AS groups,
              arrayMax(arrayMap(g -> g.total_uncompressed_size, row_groups)) AS max_bytes
       FROM file(${quoteString(join(root, "2026-10", "sessions.parquet"))}, ParquetMetadata)`,
    );
    expect(Number(groups?.groups)).toBeGreaterThan(1);
    expect(Number(groups?.max_bytes)).toBeLessThanOrEqual(32 * MiB);
  } finally {
    await w.close();
  }
  // The target: each command under 1 GiB whatever the month's size.
  for (const r of [exported, verified, restored])
    expect(r.peakRss, `peak RSS, the file ${fileBytes} bytes`).toBeLessThan(
      1024 * MiB,
    );
}, 300_000);
