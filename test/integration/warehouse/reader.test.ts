// Every warehouse has a reader: a client the engine itself holds to readonly = 1. Whatever SQL it
// is given, no table and no file changes; reads answer as on the writer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { checkReadStatement } from "../../../src/warehouse/read-statement.js";
import { quoteIdent } from "../../../src/warehouse/sql.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

let w: Warehouse;
let db: string;

beforeAll(async () => {
  w = await migratedWarehouse(await testConfig());
  db = quoteIdent(w.database);
  await w.client.command({
    query: `INSERT INTO ${db}.legal_hold_events (at, hold_id, action, actor, reason, rows) SELECT now64(3), 'h1', 'add', 'test', 'matter 1', 3`,
  });
});

afterAll(async () => {
  await w?.close();
});

const writes = [
  "ALTER TABLE {db}.legal_hold_events DELETE WHERE 1",
  "TRUNCATE TABLE {db}.legal_hold_events",
  "DROP TABLE {db}.legal_hold_events",
  "INSERT INTO {db}.legal_hold_events (hold_id, action) VALUES ('h1', 'release')",
  "OPTIMIZE TABLE {db}.legal_hold_events FINAL",
  "CREATE TABLE {db}.x (a UInt8) ENGINE = Memory",
  "SET readonly = 0",
  "SET output_format_schema = '/tmp/x.proto'",
];

describe("the warehouse's reader", () => {
  it("reads what the writer stored", async () => {
    const rs = await w.reader.query({
      query: `SELECT count() AS n FROM ${db}.legal_hold_events`,
      format: "JSONEachRow",
    });
    expect(await rs.json()).toEqual([{ n: expect.anything() as unknown }]);
  });

  it.each(writes)("is refused by the engine: %s", async (sql) => {
    await expect(
      w.reader.command({ query: sql.replaceAll("{db}", db) }),
    ).rejects.toThrow(/readonly/i);
    const [row] = await select<{ n: string }>(
      w,
      "SELECT count() AS n FROM {db}.legal_hold_events",
    );
    expect(Number(row?.n)).toBe(1);
  });
});

// What readonly = 1 still lets through, and the allow-list of statement kinds refuses.
const notReads = [
  "SYSTEM STOP MERGES",
  "KILL QUERY WHERE 1",
  "SELECT 1 INTO OUTFILE 'owned.txt'",
  "SELECT 1; SYSTEM STOP MERGES",
  "SELECT 1 -- a comment\n; KILL QUERY WHERE 1",
  "SHOW PROCESSLIST",
  "SELECT 1 SETTINGS max_threads = 1",
  "ALTER TABLE {db}.legal_hold_events DELETE WHERE 1",
];

describe("checkReadStatement", () => {
  it.each(notReads)("refuses %s before it runs", async (sql) => {
    await expect(
      checkReadStatement(w, sql.replaceAll("{db}", db)),
    ).rejects.toMatchObject({ code: "NOT_A_READ" });
  });

  it.each([
    "SELECT count() FROM {db}.legal_hold_events WHERE at > {from:DateTime64(3, 'UTC')}",
    "WITH x AS (SELECT 1 AS a) SELECT a FROM x UNION ALL SELECT 2 FORMAT JSON",
    "SHOW TABLES FROM {db}",
    "DESCRIBE TABLE {db}.legal_hold_events",
    "EXISTS TABLE {db}.legal_hold_events",
    "SHOW CREATE TABLE {db}.legal_hold_events",
  ])("lets %s run", async (sql) => {
    await checkReadStatement(w, sql.replaceAll("{db}", db), {
      from: "2026-01-01 00:00:00.000",
    });
  });
});
