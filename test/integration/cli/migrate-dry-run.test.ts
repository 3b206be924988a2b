// `migrate --dry-run` prints each pending migration file and its statements as they would run
// (the database's name and the cluster clause filled in) and writes nothing; `--to` applies the
// files up to a number. The refusal of --to before the database's version runs the built CLI
// as a child (its exit status and stderr without a stack); the other runs call the CLI's main
// in this process (cli-in-process.ts: the same output and exit status, without a node and
// engine start each), and the database already at the last migration is the run's migrated
// schema replayed (migratedWarehouse), as `migrate` leaves it.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openWarehouse } from "../../../src/warehouse/client.js";
import { readMigrations } from "../../../src/warehouse/migrate.js";
import { cleanEnv, privateCli, runCli } from "../../helpers/cli.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import { rowsOf, schemaOf } from "../../helpers/schema-snapshot.js";
import {
  freshDatabaseName,
  migratedWarehouse,
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

/** The CLI's main in this process, with the environment of `envFor`. */
async function inProcess(
  env: NodeJS.ProcessEnv,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const own: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) own[k] = v;
  const r = await mainInProcess(own, ...args);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
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
    const to = await inProcess(env, "migrate", "--to", "0019");
    expect(to.code, to.stderr).toBe(0);
    expect(to.stdout).toMatch(/: \d+ migrations applied/);
    const before = await state(database);
    expect(before.ledger.filter((r) => Number(r.version) > 0)).toHaveLength(
      FILES.filter((f) => f.version <= 19).length,
    );

    const dry = await inProcess(env, "migrate", "--dry-run");
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
    const dry = await inProcess(envFor(database), "migrate", "--dry-run");
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
    const r = await inProcess(
      envFor(freshDatabaseName()),
      "migrate",
      "--to",
      "12",
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("there is no migration numbered 12");
    expect(r.stderr).toContain("0011, 0013");
  });

  it("refuses --to a version before the database's, changing nothing", async () => {
    const database = freshDatabaseName();
    const env = envFor(database);
    const all = await migratedWarehouse(await testConfig({}, database));
    await all.close();
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
      const r = await inProcess(
        { ...envFor(freshDatabaseName()), SESSIONHOUSE_DATA_DIR: dir },
        "migrate",
        "--dry-run",
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("the data directory does not exist yet");
      expect(existsSync(dir)).toBe(false);
    },
  );
});
