// The migrated schema as a list of statements, for the tests: a database migrated by the real
// runner (migrations/ up to head, default retention), written out as its tables' and views'
// CREATE statements in an order the engine accepts, with the rows of every table that has any
// (the migration ledger). test/helpers/warehouse.ts's migratedWarehouse replays it instead of
// running every migration again in every test file, then runs `migrate` on it, which finds
// nothing pending and brings the retention to the test's configuration.
// Usage: node scripts/schema-template.mjs <out.json>   (needs dist/: npm run build)
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../dist/config/index.js";
import { migrate, openWarehouse } from "../dist/warehouse/index.js";

/** A name no statement contains by chance, replaced by the test's database on replay. */
const TEMPLATE_DB = "sessionhouse_schema_template_3f9c1e";
const CHECK_DB = "sessionhouse_schema_template_check";

const out = process.argv[2];
if (!out) throw new Error("usage: node scripts/schema-template.mjs <out.json>");
const dataDir = mkdtempSync(join(tmpdir(), "sessionhouse-template-"));
const config = loadConfig({
  env: {
    SESSIONHOUSE_API_URL: "http://127.0.0.1:1",
    SESSIONHOUSE_API_KEY: "template-0000",
    SESSIONHOUSE_DATA_DIR: dataDir,
    CLICKHOUSE_DATABASE: TEMPLATE_DB,
    SESSIONHOUSE_LOG_LEVEL: "silent",
  },
});
const w = await openWarehouse(config);
try {
  await migrate(w);
  const rows = async (query, params = {}) =>
    (
      await w.client.query({
        query,
        query_params: params,
        format: "JSONEachRow",
      })
    ).json();
  const objects = await rows(
    "SELECT name, engine, create_table_query AS ddl, total_rows FROM system.tables WHERE database = {db:String} ORDER BY name",
    { db: TEMPLATE_DB },
  );
  // Replay on a scratch database: a statement whose dependencies are not there yet waits for the
  // next round, and the order that worked is the one written.
  await w.client.command({ query: `CREATE DATABASE ${CHECK_DB}` });
  const ordered = [];
  let waiting = objects;
  while (waiting.length > 0) {
    const next = [];
    for (const o of waiting) {
      try {
        await w.client.command({
          query: o.ddl.replaceAll(TEMPLATE_DB, CHECK_DB),
        });
        ordered.push(o);
      } catch {
        next.push(o);
      }
    }
    if (next.length === waiting.length)
      throw new Error(`cannot replay ${next.map((o) => o.name).join(", ")}`);
    waiting = next;
  }
  // The replayed schema must be the migrated one.
  const again = await rows(
    "SELECT name, create_table_query AS ddl FROM system.tables WHERE database = {db:String} ORDER BY name",
    { db: CHECK_DB },
  );
  for (const [i, o] of objects.entries())
    if (again[i]?.ddl.replaceAll(CHECK_DB, TEMPLATE_DB) !== o.ddl)
      throw new Error(`the replayed ${o.name} differs from the migrated one`);
  const data = [];
  for (const o of objects)
    if (Number(o.total_rows ?? 0) > 0)
      data.push({
        table: o.name,
        rows: await rows(`SELECT * FROM ${TEMPLATE_DB}.\`${o.name}\``),
      });
  writeFileSync(
    `${out}.partial`,
    JSON.stringify({
      database: TEMPLATE_DB,
      statements: ordered.map((o) => o.ddl),
      data,
    }),
  );
  renameSync(`${out}.partial`, out);
} finally {
  await w.close();
  rmSync(dataDir, { recursive: true, force: true });
}
