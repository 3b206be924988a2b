// The interrupted-migrations test (test/slow/warehouse/) skips the stop after a statement that
// is a no-op when run again by its form alone; this holds that form to an allow-list, so that a
// new statement of any other form (a backfill, a swap, a mutation, an ALTER of several
// commands) is always stopped after, and that no statement a rerun guard protects is skipped.
import { describe, expect, it } from "vitest";
import { readMigrations, renderSql } from "../../../src/warehouse/migrate.js";
import { rerunGuard } from "../../../src/warehouse/rerun-guards.js";
import {
  safeToRerunByForm,
  stopBoundaries,
} from "../../helpers/rerun-forms.js";

const FILES = readMigrations();

describe("statements safe to run again by their form", () => {
  it.each([
    "CREATE DATABASE IF NOT EXISTS `db`",
    "CREATE TABLE IF NOT EXISTS `db`.t (a String, b UInt8) ENGINE = MergeTree ORDER BY a",
    "CREATE VIEW IF NOT EXISTS `db`.v AS SELECT a, b FROM `db`.t",
    "CREATE MATERIALIZED VIEW IF NOT EXISTS `db`.m TO `db`.t AS SELECT a, b FROM `db`.s",
    "DROP VIEW IF EXISTS `db`.v",
    "DROP TABLE IF EXISTS `db`.t",
    "ALTER TABLE `db`.t ADD COLUMN IF NOT EXISTS c AggregateFunction(quantilesTDigest(0.5, 0.9), UInt64)",
    "ALTER TABLE `db`.t ADD COLUMN IF NOT EXISTS c String DEFAULT 'a, b'",
    "ALTER TABLE `db`.t ADD INDEX IF NOT EXISTS i c TYPE bloom_filter(0.01) GRANULARITY 1",
    "ALTER TABLE `db`.t DROP INDEX IF EXISTS i",
  ])("%s", (sql) => {
    expect(safeToRerunByForm(sql)).toBe(true);
  });

  it.each([
    "INSERT INTO `db`.t SELECT a, b FROM `db`.s",
    "EXCHANGE TABLES `db`.a AND `db`.b",
    "ALTER TABLE `db`.a ATTACH PARTITION ALL FROM `db`.b",
    "ALTER TABLE `db`.t MATERIALIZE COLUMN c",
    "ALTER TABLE `db`.t MATERIALIZE INDEX i",
    "ALTER TABLE `db`.t MODIFY COLUMN a String CODEC(ZSTD(1))",
    "ALTER TABLE `db`.t ADD COLUMN IF NOT EXISTS p String, MODIFY ORDER BY (a, p)",
    "ALTER TABLE `db`.t ADD COLUMN IF NOT EXISTS p String, DROP COLUMN q",
    "ALTER TABLE `db`.t DELETE WHERE a = ''",
    "ALTER TABLE `db`.t ADD COLUMN c String",
    "CREATE TABLE `db`.t (a String) ENGINE = MergeTree ORDER BY a",
    "CREATE OR REPLACE VIEW `db`.v AS SELECT 1",
    "DROP TABLE `db`.t",
    "DROP TABLE IF EXISTS `db`.t SYNC; INSERT INTO `db`.t VALUES (1)",
    "RENAME TABLE `db`.a TO `db`.b",
    "TRUNCATE TABLE IF EXISTS `db`.t",
  ])("not %s", (sql) => {
    expect(safeToRerunByForm(sql)).toBe(false);
  });
});

describe.each(FILES.map((f) => [f.name, f] as const))(
  "the stops made in %s",
  (_name, file) => {
    const statements = renderSql(file.text, { db: "db" });
    const stops = new Set(
      stopBoundaries(statements, { bootstrap: file === FILES[0] }),
    );

    it("skip only statements safe to run again by their form, none guarded", () => {
      const skipped = statements.filter((_, i) => !stops.has(i + 1));
      for (const sql of skipped) {
        expect(safeToRerunByForm(sql), sql).toBe(true);
        expect(rerunGuard(sql), sql).toBeUndefined();
      }
      for (const sql of statements.filter((s) => rerunGuard(s)))
        expect(stops.has(statements.indexOf(sql) + 1), sql).toBe(true);
    });
  },
);

it("stops after the last statement of each file it stops in, and at every boundary of the bootstrap", () => {
  const bootstrap = renderSql(FILES[0]?.text ?? "", { db: "db" });
  expect(stopBoundaries(bootstrap, { bootstrap: true })).toEqual(
    bootstrap.map((_, i) => i + 1),
  );
  for (const file of FILES.slice(1)) {
    const statements = renderSql(file.text, { db: "db" });
    const stops = stopBoundaries(statements, { bootstrap: false });
    if (stops.length > 0)
      expect(stops.at(-1), file.name).toBe(statements.length);
  }
});
