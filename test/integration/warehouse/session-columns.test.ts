// The session row contract against the live table: the columns the writer knows (names, order,
// types, which ones the table computes itself) are exactly the columns the migrations create.
// A migration that adds, drops, reorders or retypes a column without the writer fails here.
// Then the compression of the rollups and of `session_keys` (migrations/0052) against the live
// tables: every column of every rollup table, and of session_keys, is stored with the codec its
// table and type call for, so a rollup table added later without codecs (stored with the
// default, LZ4, about half as large again) fails here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { Tables } from "../../../src/warehouse/tables.js";
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

/** Integers, days and times: T64 first, which keeps the bits a block uses. */
const NUMERIC = /^(Date|DateTime|DateTime64|UInt8|UInt16|UInt32|UInt64)\b/;

/**
 * session_keys, read by no panel: ZSTD. The rollups, read by the panels: LZ4 after T64 on
 * numbers, ZSTD on strings, arrays and aggregate states, and low-cardinality names left to the
 * default (LZ4), which a filter reads whole.
 */
function expectedCodec(table: string, type: string): string {
  if (table === Tables.sessionKeys)
    return NUMERIC.test(type) ? "CODEC(T64, ZSTD(1))" : "CODEC(ZSTD(1))";
  if (NUMERIC.test(type)) return "CODEC(T64, LZ4)";
  return type.startsWith("LowCardinality(") ? "" : "CODEC(ZSTD(1))";
}

describe("the rollups and session_keys", () => {
  it("store every column with the codec its type calls for", async () => {
    const columns = await select<{
      table: string;
      name: string;
      type: string;
      compression_codec: string;
    }>(
      w,
      `SELECT table, name, type, compression_codec FROM system.columns
       WHERE database = {db:String}
         AND table IN (SELECT name FROM system.tables
                       WHERE database = {db:String} AND engine LIKE '%MergeTree'
                         AND (name LIKE '%\\_rollups\\_%' OR name = {keys:String}))
       ORDER BY table, position`,
      { db: w.database, keys: Tables.sessionKeys },
    );
    const tables = [...new Set(columns.map((c) => c.table))];
    // Every rollup table the code names is among those read here (and none is missed by the
    // name pattern).
    const named = Object.values(Tables).filter(
      (t) => t.includes("_rollups_") || t === Tables.sessionKeys,
    );
    expect(tables.sort()).toEqual([...named].sort());
    const wrong = columns
      .filter((c) => c.compression_codec !== expectedCodec(c.table, c.type))
      .map((c) => `${c.table}.${c.name} ${c.type}: ${c.compression_codec}`);
    expect(wrong).toEqual([]);
  });
});
