// The one quoting of SQL text (src/warehouse/sql.ts) against the real engine: a table created
// under a hostile name is found under that name, and a hostile value comes back as it went in.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import {
  qualified,
  quoteIdent,
  quoteString,
} from "../../../src/warehouse/sql.js";
import { select, testConfig } from "../../helpers/warehouse.js";

/** Names and values a quoting must carry whole: every character it escapes, and others. */
const HOSTILE = [
  "back`quote",
  "back\\slash",
  "trailing\\",
  "single'quote",
  'double"quote',
  "new\nline",
  "carriage\rreturn",
  "tab\tstop",
  "nul\0byte",
  "`; DROP TABLE x; --",
  "ünïcødé 表 🦆",
  "\\`\\'",
];

let w: Warehouse;

beforeAll(async () => {
  w = await openWarehouse(await testConfig());
  await w.client.command({
    query: `CREATE DATABASE IF NOT EXISTS ${quoteIdent(w.database)}`,
  });
});

afterAll(async () => {
  await w.client.command({
    query: `DROP DATABASE IF EXISTS ${quoteIdent(w.database)}`,
  });
  await w.close();
});

describe("quoteIdent and quoteString", () => {
  it("create tables under hostile names that the engine lists under exactly those names", async () => {
    for (const name of HOSTILE)
      await w.client.command({
        query: `CREATE TABLE ${qualified(w, name)} (v String) ENGINE = Memory`,
      });
    const rows = await select<{ name: string }>(
      w,
      "SELECT name FROM system.tables WHERE database = {db:String}",
      { db: w.database },
    );
    expect(rows.map((r) => r.name).sort()).toEqual([...HOSTILE].sort());
  });

  it("write hostile values into those tables and read them back unchanged", async () => {
    for (const name of HOSTILE)
      await w.client.command({
        query: `INSERT INTO ${qualified(w, name)} VALUES (${quoteString(name)})`,
      });
    for (const name of HOSTILE) {
      const rows = await select<{ v: string }>(
        w,
        `SELECT v FROM ${qualified(w, name)} WHERE v = ${quoteString(name)}`,
      );
      expect(rows).toEqual([{ v: name }]);
    }
  });
});
