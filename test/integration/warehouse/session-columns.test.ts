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

  it("compresses each column with the codec the migrations chose for it", async () => {
    const live = await select<{ name: string; compression_codec: string }>(
      w,
      `SELECT name, compression_codec FROM system.columns
       WHERE database = {db:String} AND table = 'sessions' ORDER BY position`,
      { db: w.database },
    );
    const codec = new Map(live.map((c) => [c.name, c.compression_codec]));
    expect(codec.get("raw")).toBe("CODEC(ZSTD(3))");
    expect(codec.get("start_time")).toBe("CODEC(Delta(8), ZSTD(1))");
    for (const name of [
      "id",
      "client_ip_address",
      "user_email",
      "user_external_ids",
      "resource_name",
      "end_time",
      "duration_ms",
      "user_key",
    ])
      expect([name, codec.get(name)]).toEqual([name, "CODEC(ZSTD(1))"]);
    // Left to the default (LZ4): ZSTD(1) stores these three repeating names in more bytes.
    expect(codec.get("native_username")).toBe("");
  });

  it("writes every column it does not leave to the table", () => {
    const written = SESSION_COLUMNS.filter((c) => "sql" in c);
    expect(SESSION_INSERT_COLUMNS).toEqual(written.map((c) => c.name));
    expect(SESSION_INSERT_COLUMNS).toContain("raw");
  });
});
