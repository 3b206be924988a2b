// A database's schema and rows as comparable values: what an upgrade or a resumed migration is
// compared on against a clean `migrate` (tables' DDL, columns, every row of every table), and
// migration directories holding a subset of migrations/ (a database at an earlier state).
import { cpSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { Warehouse } from "../../src/warehouse/client.js";
import { MIGRATIONS_DIR } from "../../src/warehouse/migrate.js";
import { select } from "./warehouse.js";
import { testTmpDir } from "./run-tmp.js";

/** A copy of migrations/ with only the files `keep` accepts (by file name). */
export function migrationsSubset(keep: (file: string) => boolean): string {
  const dir = mkdtempSync(join(testTmpDir(), "migrations-subset-"));
  cpSync(MIGRATIONS_DIR, dir, {
    recursive: true,
    filter: (src) =>
      src === MIGRATIONS_DIR || keep(src.slice(MIGRATIONS_DIR.length + 1)),
  });
  return dir;
}

/** A warehouse handle on another database of the same engine or server. */
export function onDatabase(w: Warehouse, database: string): Warehouse {
  return { ...w, database };
}

export interface SchemaSnapshot {
  tables: { name: string; engine: string; ddl: string }[];
  columns: {
    table: string;
    name: string;
    type: string;
    default_kind: string;
    default_expression: string;
  }[];
}

/** The tables, views and columns of the database, its name written as `db`. */
export async function schemaOf(w: Warehouse): Promise<SchemaSnapshot> {
  const db = w.database;
  const tables = await select<{ name: string; engine: string; ddl: string }>(
    w,
    "SELECT name, engine, create_table_query AS ddl FROM system.tables WHERE database = {db:String} ORDER BY name",
    { db },
  );
  const columns = await select<SchemaSnapshot["columns"][number]>(
    w,
    `SELECT table, name, type, default_kind, default_expression FROM system.columns
     WHERE database = {db:String} ORDER BY table, position`,
    { db },
  );
  return {
    tables: tables.map((t) => ({ ...t, ddl: t.ddl.replaceAll(db, "db") })),
    columns,
  };
}

/** Tables that hold rows (not views), by name. */
async function dataTables(w: Warehouse): Promise<string[]> {
  const rows = await select<{ name: string }>(
    w,
    `SELECT name FROM system.tables WHERE database = {db:String}
     AND engine NOT IN ('View', 'MaterializedView') ORDER BY name`,
    { db: w.database },
  );
  return rows.map((r) => r.name);
}

/**
 * Every row of every table, sorted, as JSON lines, without the instants at which a migration
 * or a setting was applied (`applied_at`); the ledger as the migrations applied (which statement
 * rows an interrupted run left is not the schema's state).
 */
export async function rowsOf(
  w: Warehouse,
  options: { final?: boolean } = {},
): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of await dataTables(w)) {
    const sql =
      table === "schema_migrations"
        ? "SELECT version, name, checksum FROM {db}.schema_migrations WHERE version > 0"
        : `SELECT ${table === "retention_settings" ? "* EXCEPT (applied_at)" : "*"} FROM {db}.\`${table}\`${options.final && (await replacing(w, table)) ? " FINAL" : ""}`;
    const rows = await select(w, sql);
    out[table] = rows.map((r) => JSON.stringify(r)).sort();
  }
  return out;
}

async function replacing(w: Warehouse, table: string): Promise<boolean> {
  const [row] = await select<{ engine: string }>(
    w,
    "SELECT engine FROM system.tables WHERE database = {db:String} AND name = {t:String}",
    { db: w.database, t: table },
  );
  return /Replacing|Aggregating|Summing|Collapsing/.test(row?.engine ?? "");
}
