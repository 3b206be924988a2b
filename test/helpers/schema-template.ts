// The migrated schema, replayed: scripts/schema-template.mjs migrates a database once per test
// run (globalSetup, built-dist.ts) and writes its tables' and views' CREATE statements and the
// rows of its ledger; a test's fresh database gets them in one statement per object instead of
// every migration's statements and a ledger row after each. `migrate` then runs on it as on any
// database: it finds every file applied (the ledger's checksums are checked against migrations/)
// and brings the retention to the test's configuration. captureTemplate and replayTemplate do the
// same for any database of the engine: a state captured once, given to many fresh databases.
import { existsSync, readFileSync } from "node:fs";
import type { Warehouse } from "../../src/warehouse/client.js";
import { existingTables } from "../../src/warehouse/migrate.js";
import { selectRows } from "../../src/warehouse/select.js";
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
  await replayTemplate(w, t);
  return true;
}

/**
 * A database's tables and views as a template (their CREATE statements, by name) with the rows
 * of the tables that hold any: what replayTemplate gives another database on the same engine.
 */
export async function captureTemplate(w: Warehouse): Promise<SchemaTemplate> {
  const objects = await selectRows<{
    name: string;
    ddl: string;
    rows: string | null;
  }>(
    w,
    "SELECT name, create_table_query AS ddl, total_rows AS rows FROM system.tables WHERE database = {db:String} ORDER BY name",
    { db: w.database },
  );
  const data: SchemaTemplate["data"] = [];
  for (const o of objects)
    if (Number(o.rows ?? 0) > 0)
      data.push({
        table: o.name,
        rows: await selectRows<Record<string, unknown>>(
          w,
          `SELECT * FROM ${w.database}.\`${o.name}\``,
        ),
      });
  return {
    database: w.database,
    statements: objects.map((o) => o.ddl),
    data,
  };
}

/**
 * Creates the template's objects and rows in the (new) database `w` names. A statement whose
 * dependencies are not there yet waits for the next round; the answer is the order that worked,
 * for the template's next replay.
 */
export async function replayTemplate(
  w: Warehouse,
  t: SchemaTemplate,
): Promise<string[]> {
  await w.client.command({
    query: `CREATE DATABASE IF NOT EXISTS ${w.database}`,
  });
  const ordered: string[] = [];
  let waiting = t.statements;
  while (waiting.length > 0) {
    const next: string[] = [];
    let failure: unknown;
    for (const sql of waiting)
      try {
        await w.client.command({
          query: sql.replaceAll(t.database, w.database),
        });
        ordered.push(sql);
      } catch (e) {
        next.push(sql);
        failure = e;
      }
    if (next.length === waiting.length)
      throw new Error(
        `cannot replay ${next.length} statement(s) of the template: ${(failure as Error).message}`,
      );
    waiting = next;
  }
  for (const { table, rows } of t.data)
    await w.client.insert({
      table: `${w.database}.${table}`,
      values: rows,
      format: "JSONEachRow",
    });
  return ordered;
}
