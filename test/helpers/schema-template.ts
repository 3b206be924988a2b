// The migrated schema, replayed: scripts/schema-template.mjs migrates a database once per test
// run (globalSetup, built-dist.ts) and writes its tables' and views' CREATE statements and the
// rows of its ledger; a test's fresh database gets them in one statement per object instead of
// every migration's statements and a ledger row after each. `migrate` then runs on it as on any
// database: it finds every file applied (the ledger's checksums are checked against migrations/)
// and brings the retention to the test's configuration.
import { existsSync, readFileSync } from "node:fs";
import type { Warehouse } from "../../src/warehouse/client.js";
import { existingTables } from "../../src/warehouse/migrate.js";
import { Tables } from "../../src/warehouse/tables.js";
import { schemaTemplatePath } from "./built-dist.js";

export interface SchemaTemplate {
  /** The database the statements name, replaced by the test's. */
  database: string;
  statements: string[];
  data: { table: string; rows: Record<string, unknown>[] }[];
}

let loaded: SchemaTemplate | null | undefined;

function schemaTemplate(): SchemaTemplate | null {
  if (loaded === undefined) {
    const path = schemaTemplatePath();
    loaded = existsSync(path)
      ? (JSON.parse(readFileSync(path, "utf8")) as SchemaTemplate)
      : null;
  }
  return loaded;
}

/**
 * Gives an empty database the migrated schema and ledger; false (nothing done) when there is no
 * template in this run, the database already has a ledger, or its name would need quoting.
 */
export async function replaySchema(w: Warehouse): Promise<boolean> {
  const t = schemaTemplate();
  if (!t || w.cluster || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(w.database))
    return false;
  if ((await existingTables(w)).has(Tables.schemaMigrations)) return false;
  await w.client.command({
    query: `CREATE DATABASE IF NOT EXISTS ${w.database}`,
  });
  for (const sql of t.statements)
    await w.client.command({ query: sql.replaceAll(t.database, w.database) });
  for (const { table, rows } of t.data)
    await w.client.insert({
      table: `${w.database}.${table}`,
      values: rows,
      format: "JSONEachRow",
    });
  return true;
}
