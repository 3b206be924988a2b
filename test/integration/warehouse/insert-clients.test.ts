// Embedded, an engine connection runs one query at a time: inserts sent side by side each take a
// connection of their own (Warehouse.insertClients), so the engine stores them side by side.
import type { ClickHouseClient } from "@clickhouse/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { insertRows } from "../../../src/warehouse/insert.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

let w: Warehouse;

beforeAll(async () => {
  w = await migratedWarehouse(await testConfig());
  await w.client.command({
    query: `CREATE TABLE \`${w.database}\`.side_by_side (block UInt32, n UInt32) ENGINE = MergeTree ORDER BY (block, n)`,
  });
});

afterAll(async () => {
  await w.close();
});

/** A client that runs the real one and counts the inserts it runs at once. */
function counted(
  client: ClickHouseClient,
  tally: {
    now: Map<ClickHouseClient, number>;
    most: number;
    used: Set<number>;
  },
  lane: number,
): ClickHouseClient {
  return new Proxy(client, {
    get(target, key, receiver) {
      if (key !== "command")
        return Reflect.get(target, key, receiver) as unknown;
      return async (params: Parameters<ClickHouseClient["command"]>[0]) => {
        const running = (tally.now.get(client) ?? 0) + 1;
        tally.now.set(client, running);
        tally.most = Math.max(tally.most, running);
        tally.used.add(lane);
        try {
          return await target.command(params);
        } finally {
          tally.now.set(client, (tally.now.get(client) ?? 1) - 1);
        }
      };
    },
  });
}

describe("insert clients", () => {
  it("gives each insert under way a connection of its own, embedded, and stores every row", async () => {
    const blocks = 6;
    const rows = (block: number) =>
      Array.from({ length: 20_000 }, (_, n) => ({ block, n }));
    if (w.kind !== "embedded") {
      // A server's client sends inserts side by side itself.
      expect(w.insertClients).toBeUndefined();
      await Promise.all(
        Array.from({ length: blocks }, (_, b) =>
          insertRows(w, "side_by_side", rows(b), { retries: 0 }),
        ),
      );
    } else {
      expect(w.insertClients?.length).toBe(2);
      const tally = {
        now: new Map<ClickHouseClient, number>(),
        most: 0,
        used: new Set<number>(),
      };
      const lanes = (w.insertClients ?? []).map((c, i) => counted(c, tally, i));
      const counting: Warehouse = { ...w, insertClients: lanes };
      // Two at a time, as the sessions writer sends them.
      for (let b = 0; b < blocks; b += 2)
        await Promise.all(
          [b, b + 1].map((block) =>
            insertRows(counting, "side_by_side", rows(block), { retries: 0 }),
          ),
        );
      // Both connections took inserts, never two at once on one of them.
      expect([...tally.used].sort()).toEqual([0, 1]);
      expect(tally.most).toBe(1);
    }
    const [stored] = await select<{ rows: unknown; blocks: unknown }>(
      w,
      "SELECT count() AS rows, uniqExact(block) AS blocks FROM {db}.side_by_side",
    );
    expect(Number(stored?.rows)).toBe(blocks * 20_000);
    expect(Number(stored?.blocks)).toBe(blocks);
  });
});
