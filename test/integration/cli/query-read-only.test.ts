// `sessionhouse query` on the embedded engine runs one read on a session the engine holds to
// readonly = 1: SQL that would write (a mutation, SYSTEM, INTO OUTFILE) is refused before it runs
// and every table stays as it was; `query --write` is how the owner writes. On a data directory
// or database that does not exist, every read command says so and what creates it (exit 2), and
// creates nothing.
import { existsSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import {
  freshDatabaseName,
  migratedWarehouse,
  select,
  testConfig,
  testDataDir,
} from "../../helpers/warehouse.js";

let w: Warehouse;
let env: Record<string, string>;
const dir = mkdtempSync(join(testTmpDir(), "query-read-only-"));

beforeAll(async () => {
  // The embedded engine, whatever the pass: the session is what is tested.
  const config = await testConfig({ CLICKHOUSE_URL: undefined });
  w = await migratedWarehouse(config);
  await w.client.command({
    query: `INSERT INTO \`${w.database}\`.legal_hold_events (at, hold_id, action, actor, reason, rows)
            SELECT now64(3) - number, concat('h', toString(number)), 'add', 'test', 'matter', 1 FROM numbers(5)`,
  });
  env = {
    SESSIONHOUSE_DATA_DIR: testDataDir(),
    CLICKHOUSE_DATABASE: w.database,
    SESSIONHOUSE_LOG_LEVEL: "silent",
  };
}, 120_000);

afterAll(async () => {
  await w?.close();
});

/** Every table's rows and a hash of them, and the databases: what a write would change. */
async function snapshot(): Promise<unknown> {
  const tables = await select<{ name: string }>(
    w,
    "SELECT name FROM system.tables WHERE database = {db:String} AND engine LIKE '%MergeTree' ORDER BY name",
    { db: w.database },
  );
  const rows: Record<string, unknown> = {};
  for (const t of tables)
    rows[t.name] = await select(
      w,
      `SELECT count() AS n, sum(cityHash64(*)) AS h FROM {db}.\`${t.name}\``,
    );
  const databases = await select(
    w,
    "SELECT name FROM system.databases ORDER BY name",
  );
  return { tables: tables.length, rows, databases };
}

describe("query on the embedded engine", () => {
  it.each([
    ["ALTER TABLE legal_hold_events DELETE WHERE 1", /an ALTER statement/],
    ["TRUNCATE TABLE legal_hold_events", /a TRUNCATE statement/],
    ["SYSTEM STOP MERGES", /a SYSTEM statement/],
    ["KILL QUERY WHERE 1", /statement is not a read/],
    ["SELECT 1; DROP TABLE legal_hold_events", /one statement/],
    ["SELECT 1 SETTINGS readonly = 0", /readonly/],
  ])("refuses %s with exit 2, and no table changes", async (sql, said) => {
    const before = await snapshot();
    const r = await mainInProcess(env, "query", sql);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^error: the SQL (is refused|cannot be read)/);
    expect(r.stderr).toMatch(said);
    expect(r.stderr).toContain("query --write");
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stdout).toBe("");
    expect(await snapshot()).toEqual(before);
  });

  it("refuses SELECT … INTO OUTFILE: no file is written", async () => {
    const file = join(dir, "owned.txt");
    const r = await mainInProcess(
      env,
      "query",
      `SELECT * FROM legal_hold_events INTO OUTFILE '${file}'`,
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("INTO OUTFILE writes a file");
    expect(existsSync(file)).toBe(false);
  });

  it("reads as before: SELECT, SHOW, DESCRIBE and EXPLAIN", async () => {
    const count = await mainInProcess(
      env,
      "query",
      "SELECT count() FROM legal_hold_events",
      "--format",
      "TSV",
    );
    expect(count).toMatchObject({ status: 0, stdout: "5\n", stderr: "" });
    const tables = await mainInProcess(env, "query", "SHOW TABLES");
    expect(tables.status, tables.stderr).toBe(0);
    expect(tables.stdout).toContain("legal_hold_events");
    const explained = await mainInProcess(
      env,
      "query",
      "EXPLAIN SELECT count() FROM legal_hold_events",
      "--format",
      "TSV",
    );
    expect(explained.status, explained.stderr).toBe(0);
    expect(explained.stdout).toContain("ReadFrom");
  });

  it("query --write lets the owner write", async () => {
    const r = await mainInProcess(
      env,
      "query",
      "--write",
      "ALTER TABLE legal_hold_events DELETE WHERE hold_id = 'h0' SETTINGS mutations_sync = 2",
    );
    expect(r.status, r.stderr).toBe(0);
    const [left] = await select<{ n: string }>(
      w,
      "SELECT count() AS n FROM {db}.legal_hold_events",
    );
    expect(Number(left?.n)).toBe(4);
  });
});

describe("a read command where nothing was exported yet", () => {
  it.each([["query", "SELECT count() FROM sessions"], ["status"]])(
    "%s on a database that does not exist: names it and what creates it, exit 2, nothing created",
    async (...args) => {
      const missing = freshDatabaseName();
      const r = await mainInProcess(
        { ...env, CLICKHOUSE_DATABASE: missing },
        ...args,
      );
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(
        new RegExp(
          `^error: ClickHouse at ${testDataDir()} has no database ${missing}`,
        ),
      );
      expect(r.stderr).toMatch(/\nhint: sessionhouse migrate .* creates it/);
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(
        await select(
          w,
          "SELECT 1 FROM system.databases WHERE name = {n:String}",
          {
            n: missing,
          },
        ),
      ).toEqual([]);
    },
  );

  it("query --write on a database that does not exist: says so, no stack", async () => {
    const missing = freshDatabaseName();
    const r = await mainInProcess(
      { ...env, CLICKHOUSE_DATABASE: missing },
      "query",
      "--write",
      "SELECT count() FROM sessions",
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^error: the database ${missing} does not exist in .*: nothing was migrated or synced there`,
      ),
    );
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  it("query on a data directory that does not exist: names it, exit 2, the directory is not made", async () => {
    const absent = join(dir, "never-made");
    const r = await mainInProcess(
      { ...env, SESSIONHOUSE_DATA_DIR: absent },
      "query",
      "SELECT 1",
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      `error: the embedded data directory ${absent} does not exist`,
    );
    expect(r.stderr).toMatch(/\nhint: sessionhouse migrate .* creates it/);
    expect(existsSync(absent)).toBe(false);
  });
});
