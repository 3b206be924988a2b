// Migration 0023 on a database at 0021 holding sessions, one of them stored under two start
// times: the rebuilt table keeps every row, its TTL and its views, and the tombstone rule then
// brings that session to one row under FINAL (its newest read), which is what the rollups job
// does for rows stored before the tombstones existed.
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionSchema } from "../../../src/api/schemas/session.js";
import type { Config } from "../../../src/config/index.js";
import { rollUp } from "../../../src/pipeline/rollups.js";
import { createLogger } from "../../../src/util/logger.js";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import { insertRows } from "../../../src/warehouse/insert.js";
import { migrate, MIGRATIONS_DIR } from "../../../src/warehouse/migrate.js";
import { sessionRow } from "../../helpers/session-row.js";
import { select, testConfig } from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

let w: Warehouse;
let config: Config;
let dir: string;

const DAY = 86_400_000;
const NOW = Date.parse("2026-11-16T12:00:00Z");
const RETENTION_DAYS = 400;

beforeAll(async () => {
  config = await testConfig();
  w = await openWarehouse(config);
  // The migrations up to 0021, as a database created before 0023 has them.
  dir = mkdtempSync(join(testTmpDir(), "migrations-0021-"));
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  for (const f of readdirSync(dir))
    if (Number(f.slice(0, 4)) > 21) rmSync(join(dir, f));
});
afterAll(async () => {
  await w.close();
});

function record(id: string, startMs: number, status: string, user: string) {
  const raw = JSON.stringify({
    id,
    startTime: new Date(startMs).toISOString(),
    sessionStatus: status,
    ...(status === "completed"
      ? {
          endTime: new Date(startMs + 60_000).toISOString(),
          duration: "60s",
        }
      : {}),
    user: {
      type: "human",
      username: user,
      formal: { user: { id: `usr_${user}`, email: `${user}@acme.example` } },
    },
    resource: {
      type: "datastore",
      id: "res_orders",
      name: "orders",
      technology: "postgres",
    },
    connector: { id: "con_1", name: "edge-1" },
  });
  return { raw, s: sessionSchema.parse(JSON.parse(raw)) };
}

async function store(
  id: string,
  startMs: number,
  status: string,
  fetchedAtMs: number,
  user = "ada",
): Promise<string> {
  const { s, raw } = record(id, startMs, status, user);
  await insertRows(w, "sessions", [sessionRow(s, raw, fetchedAtMs)], {
    retries: 0,
  });
  return raw;
}

const count = async (sql: string) =>
  Number((await select<{ n: string }>(w, sql))[0]?.n);

const sessionsDdl = async () =>
  (
    await select<{ q: string }>(
      w,
      "SELECT create_table_query AS q FROM system.tables WHERE database = {d:String} AND name = 'sessions'",
      { d: w.database },
    )
  )[0]?.q ?? "";

describe("migration 0023 (sessions rebuilt with tombstones)", () => {
  it("keeps every session, the TTL and the first-seen views, and then keeps one row per session", async () => {
    await migrate(w, { dir, retentionDays: RETENTION_DAYS });
    const start = NOW - 3 * DAY;
    await store("ses_a", start, "completed", NOW - 2 * DAY);
    await store("ses_b", start + 1000, "active", NOW - 2 * DAY);
    // ses_c read open at one start, then completed at a start corrected by an hour, a month
    // earlier (another partition).
    const oldStart = Date.parse("2026-11-01T00:30:00Z");
    const newStart = oldStart - 3_600_000;
    await store("ses_c", oldStart, "active", NOW - 2 * DAY);
    const newest = await store("ses_c", newStart, "completed", NOW - DAY);
    expect(await count("SELECT count() AS n FROM {db}.sessions FINAL")).toBe(4);

    const result = await migrate(w, {
      dir: MIGRATIONS_DIR,
      retentionDays: RETENTION_DAYS,
    });
    expect(result.applied).toContain("0023_session_tombstones.sql");

    // Every row kept, the table rebuilt with the tombstone column, its TTL given again.
    expect(await count("SELECT count() AS n FROM {db}.sessions")).toBe(4);
    const ddl = await sessionsDdl();
    expect(ddl).toContain("ReplacingMergeTree(version, is_deleted)");
    expect(ddl).toContain("ORDER BY (start_time, id)");
    expect(ddl).toMatch(/TTL .*(INTERVAL 400 DAY|toIntervalDay\(400\))/);
    // Held sessions are still never deleted.
    expect(ddl).toMatch(/TTL .*WHERE legal_hold = false/);
    // The keys of the stored sessions, for the check that follows.
    expect(
      await count(
        "SELECT uniqExact(id, start_time) AS n FROM {db}.session_keys",
      ),
    ).toBe(4);
    const tables = await select<{ name: string }>(
      w,
      "SELECT name FROM system.tables WHERE database = {d:String} AND name LIKE 'sessions%'",
      { d: w.database },
    );
    expect(tables.map((t) => t.name).sort()).toEqual([
      "sessions",
      "sessions_enriched",
    ]);

    // The rule applies to rows stored before it: the newest read of ses_c stays.
    const r = await rollUp(
      { config, warehouse: w, logger: createLogger({ level: "silent" }) },
      NOW,
    );
    expect(r.keysRetired).toBe(1);
    const rows = await select<{ id: string; start_time: string; raw: string }>(
      w,
      "SELECT id, toString(start_time) AS start_time, raw FROM {db}.sessions FINAL ORDER BY id",
    );
    expect(rows.map((x) => x.id)).toEqual(["ses_a", "ses_b", "ses_c"]);
    expect(rows[2]?.start_time).toBe("2026-10-31 23:30:00.000");
    expect(rows[2]?.raw).toBe(newest);

    // The first-seen views still see new sessions, and a tombstone is not a session there.
    await store("ses_d", NOW - 3_600_000, "completed", NOW, "grace");
    expect(
      await count(
        "SELECT count() AS n FROM {db}.user_active_days WHERE user_key = 'grace@acme.example'",
      ),
    ).toBe(1);
    // A tombstone is not a session there (one written for a person never seen before).
    const { s: eve, raw } = record(
      "ses_e",
      NOW - 7_200_000,
      "completed",
      "eve",
    );
    await insertRows(
      w,
      "sessions",
      [{ ...sessionRow(eve, raw, NOW), is_deleted: 1 }],
      { retries: 0 },
    );
    expect(
      await count(
        "SELECT count() AS n FROM {db}.user_active_days WHERE user_key = 'eve@acme.example'",
      ),
    ).toBe(0);
    expect(
      await count(
        "SELECT count() AS n FROM {db}.user_resource_first_seen WHERE user_key = 'eve@acme.example'",
      ),
    ).toBe(0);
    const [tombstone] = await select<{ n: string }>(
      w,
      "SELECT count() AS n FROM {db}.sessions WHERE is_deleted = 1 AND id = 'ses_c'",
    );
    expect(Number(tombstone?.n)).toBe(1);
  });
});
