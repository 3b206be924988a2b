// The session row contract against the live table: the columns the writer knows (names, order,
// types, which ones the table computes itself) are exactly the columns the migrations create.
// A migration that adds, drops, reorders or retypes a column without the writer fails here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  SESSION_COLUMNS,
  SESSION_INSERT_COLUMNS,
} from "../../../src/warehouse/session-rows.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

let w: Warehouse;
beforeAll(async () => {
  w = await migratedWarehouse(await testConfig());
});
afterAll(async () => {
  await w.close();
});

describe("the sessions table and the row writer", () => {
  it("agree on every column's name, position, type and kind", async () => {
    const live = await select<{
      name: string;
      type: string;
      default_kind: string;
    }>(
      w,
      `SELECT name, type, default_kind FROM system.columns
       WHERE database = {db:String} AND table = 'sessions' ORDER BY position`,
      { db: w.database },
    );
    expect(live.length).toBeGreaterThan(30);
    expect(
      SESSION_COLUMNS.map((c) => ({
        name: c.name,
        type: c.type,
        default_kind:
          "materialized" in c
            ? "MATERIALIZED"
            : "defaulted" in c
              ? "DEFAULT"
              : "",
      })),
    ).toEqual(live);
  });

  it("writes every column it does not leave to the table", () => {
    const written = SESSION_COLUMNS.filter((c) => "sql" in c);
    expect(SESSION_INSERT_COLUMNS).toEqual(written.map((c) => c.name));
    expect(SESSION_INSERT_COLUMNS).toContain("raw");
  });
});
