// Storage tiers on the embedded engine with a storage policy of two local disks: the default
// policy of this test's engine has a `hot` volume (the data directory) and a `cold` one (a second
// directory). Sessions past their hot days move to the cold disk, past their retention they are
// deleted; settings changed later are applied with ALTER TABLE … MODIFY TTL, recorded, and
// reported by `status`.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Session } from "chdb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionSchema } from "../../../src/api/schemas/session.js";
import { collectStatus } from "../../../src/cli/commands/status.js";
import type { Config } from "../../../src/config/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { insertRows } from "../../../src/warehouse/insert.js";
import { migrate } from "../../../src/warehouse/migrate.js";
import { retentionSettings } from "../../../src/warehouse/retention.js";
import { sessionRow } from "../../helpers/session-row.js";
import {
  migratedWarehouse,
  select,
  testConfig,
  testDataDir,
} from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

const DAY = 86_400_000;
const NOW = Date.now();
let engine: Session;
let w: Warehouse;
let config: Config;

beforeAll(async () => {
  const dir = mkdtempSync(join(testTmpDir(), "sessionhouse-tiers-"));
  const cold = join(dir, "cold");
  mkdirSync(cold);
  const file = join(dir, "storage.xml");
  writeFileSync(
    file,
    `<clickhouse><storage_configuration>
  <disks><cold><path>${cold}/</path></cold></disks>
  <policies><default><volumes>
    <hot><disk>default</disk></hot>
    <cold><disk>cold</disk></cold>
  </volumes></default></policies>
</storage_configuration></clickhouse>`,
  );
  // The engine is opened first with the config file; the client opened afterwards on the same
  // directory shares it.
  engine = new Session(testDataDir(), {
    connectionArgs: [`--config-file=${file}`],
  });
  config = await testConfig({
    SESSIONHOUSE_HOT_DAYS: "30",
    SESSIONHOUSE_RETENTION_DAYS: "365",
    SESSIONHOUSE_ROLLUP_RETENTION_DAYS: "3650",
  });
  w = await migratedWarehouse(config);
});
afterAll(async () => {
  await w.close();
  engine.close();
});

async function store(id: string, startMs: number) {
  const raw = JSON.stringify({
    id,
    startTime: new Date(startMs).toISOString(),
    sessionStatus: "completed",
    user: { type: "machine", username: "etl" },
    resource: {
      type: "datastore",
      id: "r",
      name: "orders",
      technology: "postgres",
    },
  });
  await insertRows(
    w,
    "sessions",
    [sessionRow(sessionSchema.parse(JSON.parse(raw)), raw, NOW)],
    { retries: 0 },
  );
}

const ddl = async (table: string) =>
  (
    await select<{ q: string }>(
      w,
      "SELECT create_table_query AS q FROM system.tables WHERE database = {d:String} AND name = {t:String}",
      { d: w.database, t: table },
    )
  )[0]?.q ?? "";

/** Where the active parts of sessions are, per month partition. */
const placement = async () =>
  select<{ partition: string; disk: string; rows: number }>(
    w,
    `SELECT partition, any(disk_name) AS disk, sum(rows) AS rows FROM system.parts
     WHERE database = {d:String} AND table = 'sessions' AND active
     GROUP BY partition ORDER BY partition`,
    { d: w.database },
  );

const month = (ms: number) =>
  new Date(ms).toISOString().slice(0, 7).replace("-", "");

describe("storage tiers", () => {
  const old = NOW - 100 * DAY;

  it("moves sessions past their hot days to the cold volume and keeps them until their retention", async () => {
    expect(await ddl("sessions")).toMatch(/TO VOLUME 'cold'/);
    expect(await ddl("session_rollups_daily")).toMatch(
      /TTL day \+ toIntervalDay\(3650\)/,
    );
    await store("old", old);
    await store("new", NOW - DAY);
    await w.client.command({
      query: `OPTIMIZE TABLE \`${w.database}\`.sessions FINAL`,
    });
    const parts = await placement();
    expect(parts.find((p) => p.partition === month(old))).toMatchObject({
      disk: "cold",
      rows: 1,
    });
    expect(parts.find((p) => p.partition === month(NOW - DAY))).toMatchObject({
      disk: "default",
    });
  });

  it("applies changed settings with MODIFY TTL, records them and reports them in status", async () => {
    const changed: Config = {
      ...config,
      clickhouse: { ...config.clickhouse, retentionDays: 90 },
      retention: {
        ...config.retention,
        tables: {
          ...config.retention.tables,
          sessions: { hotDays: 7 },
          agg_histogram: { hotDays: 0, retentionDays: 400 },
        },
      },
    };
    await migrate(w, { retention: retentionSettings(changed) });
    expect(await ddl("sessions")).toMatch(
      /toIntervalDay\(7\) TO VOLUME 'cold', .*toIntervalDay\(90\) WHERE legal_hold = false/,
    );
    expect(await ddl("agg_histogram")).toMatch(
      /TTL bucket_time \+ toIntervalDay\(400\)/,
    );
    // Past the new retention, the old session is gone; the recent one is kept.
    await w.client.command({
      query: `OPTIMIZE TABLE \`${w.database}\`.sessions FINAL`,
    });
    expect(
      (await select<{ id: string }>(w, "SELECT id FROM {db}.sessions")).map(
        (r) => r.id,
      ),
    ).toEqual(["new"]);

    const report = await collectStatus(w, changed);
    expect(report.retention.tables).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          table: "sessions",
          hotDays: 7,
          coldVolume: "cold",
          retentionDays: 90,
        }),
        expect.objectContaining({
          table: "agg_histogram",
          hotDays: 0,
          retentionDays: 400,
        }),
        expect.objectContaining({
          table: "session_rollups_daily",
          retentionDays: 3650,
        }),
      ]),
    );
    // Unchanged settings change nothing.
    const before = await select(
      w,
      "SELECT count() AS n FROM {db}.retention_settings",
    );
    await migrate(w, { retention: retentionSettings(changed) });
    expect(
      await select(w, "SELECT count() AS n FROM {db}.retention_settings"),
    ).toEqual(before);
  });
});
