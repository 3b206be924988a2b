import { cpSync, mkdtempSync, appendFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import {
  migrate,
  MIGRATIONS_DIR,
  readMigrations,
} from "../../../src/warehouse/migrate.js";
import { SinkError } from "../../../src/warehouse/errors.js";
import {
  applyMergePolicy,
  SESSIONS_MERGE_SELECTOR_BASE,
} from "../../../src/warehouse/merges.js";
import { select, testConfig } from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

let w: Warehouse;
let dir: string;

beforeAll(async () => {
  w = await openWarehouse(await testConfig());
  // A private copy of the migrations, so that this test may edit one.
  dir = mkdtempSync(join(testTmpDir(), "migrations-"));
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
});
afterAll(async () => {
  await w.close();
});

describe("migrations", () => {
  it("applies every file once, in order, and records its checksum", async () => {
    const first = await migrate(w, { dir });
    const files = readMigrations(dir);
    expect(first.applied).toEqual(files.map((f) => f.name));
    const ledger = await select<{ version: number; checksum: string }>(
      w,
      "SELECT version, checksum FROM {db}.schema_migrations WHERE version > 0 ORDER BY version",
    );
    expect(ledger.map((r) => r.checksum)).toEqual(files.map((f) => f.checksum));
    const tables = await select<{ name: string }>(
      w,
      "SELECT name FROM system.tables WHERE database = {d:String} ORDER BY name",
      { d: w.database },
    );
    expect(tables.map((t) => t.name)).toEqual(
      expect.arrayContaining([
        "sessions",
        "checkpoints",
        "dead_letters",
        "runs",
        "schema_migrations",
      ]),
    );

    const second = await migrate(w, { dir });
    expect(second.applied).toEqual([]);
    expect(second.alreadyApplied).toBe(files.length);
  });

  it("gives the sessions table wider merges, and gives them again when the setting was reset", async () => {
    await migrate(w, { dir });
    const ddl = async () =>
      (
        await select<{ q: string }>(
          w,
          "SELECT create_table_query AS q FROM system.tables WHERE database = {d:String} AND name = 'sessions'",
          { d: w.database },
        )
      )[0]?.q ?? "";
    const wanted = `merge_selector_base = ${SESSIONS_MERGE_SELECTOR_BASE}`;
    expect(await ddl()).toContain(wanted);
    // Applied once: a table that has it is left alone.
    expect(await applyMergePolicy(w)).toBe(false);
    await w.client.command({
      query: `ALTER TABLE ${w.database}.sessions RESET SETTING merge_selector_base`,
    });
    expect(await ddl()).not.toContain("merge_selector_base");
    await migrate(w, { dir });
    expect(await ddl()).toContain(wanted);
  });

  it("sets and removes the retention TTL to match the configuration", async () => {
    await migrate(w, { dir, retentionDays: 400 });
    const ddl = async () =>
      (
        await select<{ q: string }>(
          w,
          "SELECT create_table_query AS q FROM system.tables WHERE database = {d:String} AND name = 'sessions'",
          { d: w.database },
        )
      )[0]?.q ?? "";
    expect(await ddl()).toMatch(
      /TTL .*(INTERVAL 400 DAY|toIntervalDay\(400\))/,
    );
    await migrate(w, { dir, retentionDays: 0 });
    expect(await ddl()).not.toMatch(/TTL/);
  });

  it("refuses an applied migration whose file changed, naming it", async () => {
    appendFileSync(join(dir, "0002_sessions.sql"), "\n-- edited later\n");
    const err = await migrate(w, { dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).code).toBe("MIGRATION_CHANGED");
    expect((err as SinkError).message).toContain("0002_sessions.sql");
    expect((err as SinkError).hint).toMatch(/new numbered migration/);
  });
});
