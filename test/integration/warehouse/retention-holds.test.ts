// Retention and legal holds on a real engine: the TTL (forced with OPTIMIZE … FINAL) deletes raw
// session rows past the retention, but not the rollups and not the sessions an active hold
// names; the writer flags held sessions as it inserts them; releasing a hold lets the deletion
// resume. The keys of the deleted sessions (`session_keys`) go with them, the others stay.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlaneApi } from "../../../src/api/control-plane.js";
import { sessionSchema } from "../../../src/api/schemas/session.js";
import type { Config } from "../../../src/config/index.js";
import { withRun } from "../../../src/pipeline/context.js";
import { rollUp } from "../../../src/pipeline/rollups.js";
import { SessionWriter } from "../../../src/pipeline/session-writer.js";
import { createLogger } from "../../../src/util/logger.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  addHold,
  applyActiveHolds,
  listHolds,
  releaseHold,
} from "../../../src/warehouse/holds.js";
import { insertRows } from "../../../src/warehouse/insert.js";
import { migrate } from "../../../src/warehouse/migrate.js";
import { retentionSettings } from "../../../src/warehouse/retention.js";
import { deleteKeysOfDeletedSessions } from "../../../src/warehouse/session-keys.js";
import { sessionRow } from "../../helpers/session-row.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

const DAY = 86_400_000;
const NOW = Date.now();
const OLD = Math.floor((NOW - 100 * DAY) / DAY) * DAY + 3_600_000;
const RECENT = Math.floor((NOW - 5 * DAY) / DAY) * DAY + 3_600_000;
const logger = createLogger({ level: "silent" });

let w: Warehouse;
let config: Config;
let kept: Config;
beforeAll(async () => {
  config = await testConfig({ SESSIONHOUSE_RETENTION_DAYS: "30" });
  kept = { ...config, clickhouse: { ...config.clickhouse, retentionDays: 0 } };
  // Created without retention: the old rows are stored and rolled up first.
  w = await migratedWarehouse(kept);
});
afterAll(async () => {
  await w.close();
});

function record(id: string, startMs: number, user: string, parent = "") {
  const raw = JSON.stringify({
    id,
    startTime: new Date(startMs).toISOString(),
    endTime: new Date(startMs + 60_000).toISOString(),
    duration: "60s",
    sessionStatus: "completed",
    user: {
      type: "human",
      username: user,
      formal: { user: { id: `usr_${user}`, email: `${user}@acme.example` } },
    },
    resource: {
      type: "datastore",
      id: "r1",
      name: "orders",
      technology: "postgres",
    },
    ...(parent ? { parentSessionId: parent } : {}),
  });
  return { raw, s: sessionSchema.parse(JSON.parse(raw)) };
}

async function store(
  specs: ReadonlyArray<readonly [string, number, string, string?]>,
) {
  await insertRows(
    w,
    "sessions",
    specs.map(([id, start, user, parent]) => {
      const { s, raw } = record(id, start, user, parent);
      return sessionRow(s, raw, NOW - 1000);
    }),
    { retries: 0 },
  );
}

const ids = async () =>
  (
    await select<{ id: string }>(
      w,
      "SELECT DISTINCT id FROM {db}.sessions ORDER BY id",
    )
  ).map((r) => r.id);
/** The ids `session_keys` holds a key of. */
const keyIds = async () =>
  (
    await select<{ id: string }>(
      w,
      "SELECT DISTINCT id FROM {db}.session_keys ORDER BY id",
    )
  ).map((r) => r.id);
const rollupRows = () =>
  select(
    w,
    "SELECT toString(day) AS day, user_key, sessions FROM {db}.session_rollups_daily FINAL WHERE sessions > 0 ORDER BY day, user_key",
  );
const optimize = () =>
  w.client.command({
    query: `OPTIMIZE TABLE \`${w.database}\`.sessions FINAL`,
  });

describe("retention with legal holds", () => {
  let rolled: unknown[];

  it("keeps held sessions and the rollups when the TTL deletes old rows", async () => {
    await store([
      ["old_alice", OLD, "alice"],
      ["old_bob", OLD + 1000, "bob"],
      ["old_bob_child", OLD + 2000, "carol", "old_bob"],
      ["old_carol", OLD + 3000, "carol"],
      ["new_dave", RECENT, "dave"],
    ]);
    await rollUp({ config: kept, warehouse: w, logger }, NOW);
    rolled = await rollupRows();
    expect(rolled.length).toBeGreaterThan(0);

    await addHold(
      w,
      {
        scope: "user",
        value: "alice@acme.example",
        reason: "matter 1",
        createdBy: "legal",
      },
      NOW,
    );
    await addHold(
      w,
      {
        scope: "session",
        value: "old_bob",
        reason: "matter 2",
        createdBy: "legal",
      },
      NOW,
    );
    // alice's session, bob's and its child (by carol) are flagged; nothing else.
    expect(await applyActiveHolds(w, "legal", NOW)).toBe(3);
    expect(await applyActiveHolds(w, "legal", NOW)).toBe(0);

    await migrate(w, { retention: retentionSettings(config) });
    const [ddl] = await select<{ q: string }>(
      w,
      "SELECT create_table_query AS q FROM system.tables WHERE database = {d:String} AND name = 'sessions'",
      { d: w.database },
    );
    expect(ddl?.q).toMatch(/TTL .*WHERE legal_hold = false/);
    await optimize();

    expect(await ids()).toEqual([
      "new_dave",
      "old_alice",
      "old_bob",
      "old_bob_child",
    ]);
    // The key of the session the TTL deleted goes with it (the rollups job deletes it); those of
    // the held sessions past the retention and of the recent one stay.
    expect(await keyIds()).toContain("old_carol");
    const { keysDeleted } = await rollUp({ config, warehouse: w, logger }, NOW);
    expect(await keyIds()).toEqual(await ids());
    expect(keysDeleted).toBe(1);
    expect(await rollupRows()).toEqual(rolled);
  });

  it("flags a held session as the writer inserts it", async () => {
    const api = ControlPlaneApi.fromConfig(config, logger);
    try {
      await withRun(
        { config, api, warehouse: w, logger },
        "test",
        async (ctx) => {
          const writer = new SessionWriter(ctx);
          const records = [
            record("late_alice", OLD + 5000, "alice"),
            record("late_erin", RECENT + 6000, "erin"),
          ].map(({ raw }) => ({
            text: raw,
            value: JSON.parse(raw) as unknown,
          }));
          await writer.add(records, NOW);
          await writer.drain();
        },
      );
    } finally {
      await api.close();
    }
    const flags = await select<{ id: string; legal_hold: boolean }>(
      w,
      "SELECT id, legal_hold FROM {db}.sessions WHERE id IN ('late_alice', 'late_erin') ORDER BY id",
    );
    expect(flags).toEqual([
      { id: "late_alice", legal_hold: true },
      { id: "late_erin", legal_hold: false },
    ]);
    await optimize();
    expect(await ids()).toContain("late_alice");
  });

  it("lets the deletion resume for the sessions of a released hold", async () => {
    const alice = (await listHolds(w)).find((h) => h.scope === "user");
    expect(alice).toBeDefined();
    if (!alice) return;
    await releaseHold(w, alice, { by: "legal", reason: "matter closed" }, NOW);
    expect(await applyActiveHolds(w, "legal", NOW)).toBe(2);
    await optimize();
    expect(await ids()).toEqual([
      "late_erin",
      "new_dave",
      "old_bob",
      "old_bob_child",
    ]);
    const deleted = await deleteKeysOfDeletedSessions(w, 30, NOW);
    expect(await keyIds()).toEqual(await ids());
    expect(deleted).toBe(2);
    expect(await rollupRows()).toEqual(rolled);
    const events = await select<{ action: string }>(
      w,
      "SELECT action FROM {db}.legal_hold_events ORDER BY at, action",
    );
    expect(events.map((e) => e.action).sort()).toEqual([
      "added",
      "added",
      "applied",
      "applied",
      "released",
    ]);
  });
});
