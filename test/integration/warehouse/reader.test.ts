// Every warehouse has a reader: a client the engine itself holds to readonly = 1. Whatever SQL it
// is given, no table and no file changes; reads answer as on the writer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
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
  "SYSTEM STOP MERGES",
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
