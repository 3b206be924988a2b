// `migrate --dry-run` prints each pending migration file and its statements as they would run
// (the database's name and the cluster clause filled in) and writes nothing; `--to` applies the
// files up to a number.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openWarehouse } from "../../../src/warehouse/client.js";
import { readMigrations } from "../../../src/warehouse/migrate.js";
import { cleanEnv, privateCli, runCli } from "../../helpers/cli.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import { rowsOf, schemaOf } from "../../helpers/schema-snapshot.js";
import {
  freshDatabaseName,
  select,
  testConfig,
  testDataDir,
} from "../../helpers/warehouse.js";

const cli = privateCli();

function envFor(database: string) {
  return cleanEnv({
    SESSIONHOUSE_DATA_DIR: testDataDir(),
    CLICKHOUSE_DATABASE: database,
    CLICKHOUSE_URL: process.env.CLICKHOUSE_URL,
    SESSIONHOUSE_LOG_LEVEL: "warn",
  });
}

/** The database as a reader sees it: schema, rows, and every ledger row (statements too). */
async function state(database: string) {
  const w = await openWarehouse(await testConfig({}, database));
  try {
    return {
      schema: await schemaOf(w),
      rows: await rowsOf(w),
      ledger: await select(
        w,
        "SELECT version, name, checksum, applied_at FROM {db}.schema_migrations ORDER BY version, name",
      ),
    };
  } finally {
    await w.close();
  }
}

const FILES = readMigrations();

describe("migrate --dry-run", () => {
  it("prints the pending files and their rendered statements, and changes nothing", async () => {
    const database = freshDatabaseName();
    const env = envFor(database);
    const to = await runCli(cli(), ["migrate", "--to", "0019"], env);
    expect(to.code, to.stderr).toBe(0);
    expect(to.stdout).toMatch(/: \d+ migrations applied/);
    const before = await state(database);
    expect(before.ledger.filter((r) => Number(r.version) > 0)).toHaveLength(
      FILES.filter((f) => f.version <= 19).length,
    );

    const dry = await runCli(cli(), ["migrate", "--dry-run"], env);
    expect(dry.code, dry.stderr).toBe(0);
    const pending = FILES.filter((f) => f.version > 19);
    expect(dry.stdout).toContain(
      `${pending.length} ${pending.length === 1 ? "migration" : "migrations"} pending (dry run: nothing was written)`,
    );
    for (const f of pending) expect(dry.stdout).toContain(`-- ${f.name}: `);
    for (const f of FILES.filter((x) => x.version <= 19))
      expect(dry.stdout).not.toContain(`-- ${f.name}`);
    // Statements as they would run: placeholders filled with the quoted database name.
    expect(dry.stdout).toContain(
      `EXCHANGE TABLES \`${database}\`.sessions_rebuilt AND \`${database}\`.sessions;`,
    );
    expect(dry.stdout).not.toMatch(/\{\{(db|on_cluster)\}\}/);

    expect(await state(database)).toEqual(before);
  });

  it("on a database not created yet lists every file and creates nothing", async () => {
    const database = freshDatabaseName();
    const dry = await runCli(cli(), ["migrate", "--dry-run"], envFor(database));
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`${FILES.length} migrations pending`);
    expect(dry.stdout).toContain(
      `CREATE DATABASE IF NOT EXISTS \`${database}\``,
    );
    // A connection to a server names its database, and opening one creates it (empty) for
    // every command, this check's own included: no table is what a dry run leaves there.
    const w = await openWarehouse(await testConfig({}, database));
    try {
      expect(
        await select(
          w,
          "SELECT name FROM system.tables WHERE database = {d:String}",
          { d: database },
        ),
      ).toEqual([]);
      if (w.kind === "embedded")
        expect(
          await select(
            w,
            "SELECT name FROM system.databases WHERE name = {d:String}",
            { d: database },
          ),
        ).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it("refuses --to with a number no migration has, naming the numbers there are", async () => {
    const r = await runCli(
      cli(),
      ["migrate", "--to", "12"],
      envFor(freshDatabaseName()),
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("there is no migration numbered 12");
    expect(r.stderr).toContain("0011, 0013");
  });

  it("refuses --to a version before the database's, changing nothing", async () => {
    const database = freshDatabaseName();
    const env = envFor(database);
    const all = await runCli(cli(), ["migrate"], env);
    expect(all.code, all.stderr).toBe(0);
    const before = await state(database);
    const last = String(FILES.at(-1)?.version).padStart(4, "0");
    const r = await runCli(cli(), ["migrate", "--to", "0005"], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `is at migration ${last}, past --to 0005: migrations only go forward, and nothing was changed`,
    );
    expect(r.stderr).toMatch(/\nhint: leave out --to/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(await state(database)).toEqual(before);
  });

  it.skipIf(process.env.CLICKHOUSE_URL !== undefined)(
    "a dry run on a data directory that does not exist creates none",
    async () => {
      const dir = join(testTmpDir(), `never-made-${Date.now()}`);
      const r = await runCli(cli(), ["migrate", "--dry-run"], {
        ...envFor(freshDatabaseName()),
        SESSIONHOUSE_DATA_DIR: dir,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("the data directory does not exist yet");
      expect(existsSync(dir)).toBe(false);
    },
  );
});
