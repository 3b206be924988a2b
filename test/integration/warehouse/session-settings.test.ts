// A setting one query sets must not carry over to the next. The embedded engine's session keeps
// what a query set; an insert's deduplication token carried over would make the next inserts
// into a table with a deduplication window repeats of the first, dropped without an error.
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { insertDeadLetters } from "../../../src/warehouse/bookkeeping.js";
import { qualified } from "../../../src/warehouse/sql.js";
import { Tables } from "../../../src/warehouse/tables.js";
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

const letter = (recordId: string) => ({
  recordId,
  reason: "test",
  raw: recordId,
});

it("stores an insert without a token after one with a token, into the same deduplicated table", async () => {
  // Through insert.ts: under a token digest of the block.
  await insertDeadLetters(
    w,
    { job: "settings-test", runId: "r" },
    [letter("a")],
    { retries: 0 },
  );
  // Straight through the client, twice, with no token of its own.
  for (const id of ["b", "c"])
    await w.client.insert({
      table: qualified(w, Tables.deadLetters),
      values: [
        {
          job: "settings-test",
          record_id: id,
          record_hash: id,
          reason: "test",
          raw: id,
          seen_at: "2026-11-23 00:00:00.000",
          run_id: "r",
        },
      ],
      format: "JSONEachRow",
    });
  const rows = await select<{ record_id: string }>(
    w,
    `SELECT record_id FROM {db}.dead_letters WHERE job = 'settings-test' ORDER BY record_id`,
  );
  expect(rows.map((r) => r.record_id)).toEqual(["a", "b", "c"]);
  const [tok] = await select<{ t: string }>(
    w,
    "SELECT getSetting('insert_deduplication_token') AS t",
  );
  expect(tok?.t).toBe("");
});
