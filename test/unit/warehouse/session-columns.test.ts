// The session column list (src/warehouse/session-rows.ts) against the copies that follow it: the
// migration that added each column against every schema state main has had (the upgrade
// fixtures' manifests), the archive's accepted older columns, and the Session detail dashboard's
// "Session" panel. The list against the migrated table itself: test/integration/warehouse/
// session-columns.test.ts; a restore of a month archived under the oldest schema:
// test/integration/pipeline/archive.test.ts.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { archiveSpec } from "../../../src/warehouse/archive.js";
import {
  SESSION_COLUMNS,
  sessionColumnsAddedAfter,
} from "../../../src/warehouse/session-rows.js";
import { DASHBOARDS_DIR, REPO_ROOT } from "../../helpers/dashboards.js";

const FIXTURES = join(REPO_ROOT, "test/fixtures/upgrade");

interface Manifest {
  migrations: { version: number }[];
  tables: { name: string; columns: string[] }[];
}

const manifestOf = (state: string) =>
  JSON.parse(
    readFileSync(join(FIXTURES, state, "manifest.json"), "utf8"),
  ) as Manifest;

/** The stored columns ("name type") of `sessions` in a state, as its manifest lists them. */
function storedSessionColumns(m: Manifest): string[] {
  const t = m.tables.find((x) => x.name === "sessions");
  if (t === undefined) throw new Error("a state without sessions");
  return t.columns;
}

/** The list's stored columns of a database that ran exactly `migrations`. */
const listed = (migrations: ReadonlySet<number>) =>
  SESSION_COLUMNS.filter(
    (c) => migrations.has(c.since) && !("materialized" in c),
  ).map((c) => `${c.name} ${c.type}`);

describe("the session column list", () => {
  const states = readdirSync(FIXTURES).sort();

  it.each(states)(
    "names the columns of sessions in schema state %s by the migrations that added them",
    (state) => {
      const m = manifestOf(state);
      const ran = new Set(m.migrations.map((x) => x.version));
      expect(listed(ran)).toEqual(storedSessionColumns(m));
    },
  );

  it("gives the archive every column a month archived under the oldest archived schema lacks", () => {
    // 0018-8f0c16b: migrations through 0018, the schema the archive format was first written
    // under (before 0023 added is_deleted).
    const archivedThen = storedSessionColumns(manifestOf("0018-8f0c16b")).map(
      (c) => c.split(" ")[0],
    );
    const storedNow = SESSION_COLUMNS.filter((c) => !("materialized" in c)).map(
      (c) => c.name,
    );
    const lacking = storedNow.filter((c) => !archivedThen.includes(c));
    expect(lacking).toEqual(["is_deleted", "archived"]);
    expect(archiveSpec("sessions")?.laterColumns).toEqual(lacking);
    expect(sessionColumnsAddedAfter(18)).toEqual(lacking);
  });
});

describe("Session detail's Session panel", () => {
  const dashboard = JSON.parse(
    readFileSync(join(DASHBOARDS_DIR, "session-detail.json"), "utf8"),
  ) as { panels: { title: string; targets?: { rawSql?: string }[] }[] };
  const panel = dashboard.panels.find((p) => p.title === "Session");
  const sql = panel?.targets?.[0]?.rawSql ?? "";

  it("lists every column of the list it shows, each read from its own column", () => {
    const fields = [
      ...sql.matchAll(/\('(\w+)', ifNull\(toString\((\w+)\), ''\)\)/g),
    ].map((m) => {
      expect(m[2]).toBe(m[1]);
      return m[1];
    });
    const shown = SESSION_COLUMNS.filter((c) => c.inDetail !== false).map(
      (c) => c.name,
    );
    expect(shown.length).toBeGreaterThan(30);
    expect([...fields].sort()).toEqual([...shown].sort());
    // The one row that is not a column of sessions: the resource's environment.
    expect(sql).toContain("('environment', ");
  });
});
