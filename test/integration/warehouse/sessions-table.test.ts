import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionSchema } from "../../../src/api/schemas/session.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { insertRows } from "../../../src/warehouse/insert.js";
import { sessionRow } from "../../helpers/session-row.js";
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

function read(status: string, extra: Record<string, unknown> = {}) {
  const raw = JSON.stringify({
    id: "ses_1",
    startTime: "2026-11-02T10:04:05.12Z",
    sessionStatus: status,
    user: {
      type: "human",
      username: "alice",
      formal: {
        user: {
          id: "usr_1",
          email: "alice@acme.example",
          groups: ["g1", "g2"],
        },
      },
    },
    resource: {
      type: "datastore",
      id: "res_1",
      name: "orders-prod-pg",
      technology: "postgres",
    },
    ...extra,
  });
  return { raw, session: sessionSchema.parse(JSON.parse(raw)) };
}

const opts = { retries: 0 };

describe("the sessions table", () => {
  it("keeps one row per session, and a completed session never turns back to active", async () => {
    const open = read("active");
    const done = read("completed", {
      endTime: "2026-11-02T10:14:05Z",
      duration: "600s",
    });
    await insertRows(
      w,
      "sessions",
      [sessionRow(open.session, open.raw, 1_000)],
      opts,
    );
    await insertRows(
      w,
      "sessions",
      [sessionRow(done.session, done.raw, 2_000)],
      opts,
    );
    // An out-of-order read of the open state, fetched later than the completed one.
    await insertRows(
      w,
      "sessions",
      [sessionRow(open.session, open.raw, 3_000)],
      opts,
    );
    const rows = await select<{
      id: string;
      session_status: string;
      duration_ms: number;
      end_time: string;
      user_email: string;
      user_groups: string[];
      raw: string;
    }>(
      w,
      "SELECT id, session_status, duration_ms, end_time, user_email, user_groups, raw FROM {db}.sessions FINAL",
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: "ses_1",
      session_status: "completed",
      duration_ms: 600_000,
      end_time: "2026-11-02 10:14:05.000",
      user_email: "alice@acme.example",
      user_groups: ["g1", "g2"],
    });
    expect(rows[0]?.raw).toBe(done.raw);
  });

  it("stores a retried block only once (insert deduplication token)", async () => {
    const r = read("active", { id: "ses_2" });
    const row = sessionRow(r.session, r.raw, 5_000);
    await insertRows(w, "sessions", [row], opts);
    await insertRows(w, "sessions", [row], opts);
    const [c] = await select<{ n: number }>(
      w,
      "SELECT count() AS n FROM {db}.sessions WHERE id = 'ses_2'",
    );
    expect(Number(c?.n)).toBe(1);
  });
});
