// _New access since the previous period_ is the pairs of _Systems reached per person_ with no
// session in the period of the same length before it, taken from that table's rows as they are
// read (no read of the period of its own): on several people, systems and days, its rows and
// their order are those of the query it had (kept here as the reference), its CSV holds them
// all, and the manifest lists no query of its own.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { tableCsv } from "../../../src/reports/csv.js";
import { columns, type Report } from "../../../src/reports/model.js";
import { reportFrom } from "../../../src/reports/produce.js";
import { chTime } from "../../../src/warehouse/index.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

const FROM = "2026-10-04";
const TO = "2026-10-07";
/** The period before it, of the same length. */
const PREVIOUS = "2026-10-01";

/** The new pairs as the report read them before: the period, NOT IN the period before it. */
const REFERENCE = `SELECT person, system, first_access, sessions FROM (
  SELECT user_key AS person, resource_name AS system,
         formatDateTime(min(start_time), '%Y-%m-%d %H:%i:%S') AS first_access, count() AS sessions
  FROM {db}.sessions FINAL
  WHERE start_time >= {from:DateTime64(3, 'UTC')} AND start_time < {to:DateTime64(3, 'UTC')}
    AND (user_key, resource_name) NOT IN (
      SELECT user_key, resource_name FROM {db}.sessions FINAL
      WHERE start_time >= {previousFrom:DateTime64(3, 'UTC')} AND start_time < {from:DateTime64(3, 'UTC')})
  GROUP BY person, system)
ORDER BY person, system`;

let root: string;
let json: Report;
let csv: string;
let reference: Record<string, unknown>[];
let queries: string[];

beforeAll(async () => {
  const config = await testConfig();
  const database = config.clickhouse.database;
  const w = await migratedWarehouse(config);
  root = mkdtempSync(join(testTmpDir(), "new-access-"));
  try {
    // 9 people × 6 systems over six days (the period before and the period): a person reaches a
    // system on some days only, with several native users; the person is the user key.
    await w.client.command({
      query: `INSERT INTO ${database}.sessions (id, start_time, user_type, user_username, user_name, native_username, resource_name, resource_technology, fetched_at, version)
        SELECT concat('s-', toString(number)), toDateTime64('${PREVIOUS} 00:00:00', 3, 'UTC') + toIntervalSecond(day * 86400 + number * 37 % 86400),
               'human', name, name, ['app', 'root', 'reader'][1 + number % 3], concat('db-', toString(system)), 'postgres',
               toDateTime64('${TO} 00:00:00', 3, 'UTC'), 1
        FROM (SELECT number, number % 9 AS p, intDiv(number, 9) % 6 AS system, intDiv(number, 54) % 6 AS day,
                     concat('person-', toString(p), '.example') AS name
              FROM numbers(400)
              WHERE (p + system + day) % 4 != 0 AND NOT (day < 3 AND (p + system) % 3 = 0))`,
    });
    reference = await select(w, REFERENCE, {
      previousFrom: chTime(Date.parse(PREVIOUS)),
      from: chTime(Date.parse(FROM)),
      to: chTime(Date.parse(TO)),
    });
    const out = join(root, "report");
    await reportFrom(w, config, {
      kind: "access-review",
      fromMs: Date.parse(FROM),
      toMs: Date.parse(TO),
      out,
      formats: ["csv", "json"],
      filters: {},
    });
    json = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as Report;
    csv = readFileSync(join(out, "access-new.csv"), "utf8");
    queries = (
      JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as {
        queries: { id: string }[];
      }
    ).queries.map((q) => q.id);
  } finally {
    await w.close();
  }
}, 120_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

it("lists the rows the query of its own listed, in its order", () => {
  const table = json.sections
    .flatMap((s) => s.tables)
    .find((t) => t.id === "access-new");
  // Some pairs are new, some are not: the data tells the two apart.
  expect(reference.length).toBeGreaterThan(5);
  const pairs = json.sections
    .flatMap((s) => s.tables)
    .find((t) => t.id === "access-per-person-system");
  expect(pairs?.total).toBeGreaterThan(reference.length);
  expect(table?.rows).toEqual(reference);
  expect(table?.total).toBe(reference.length);
  const cols = columns("person", "system", "first_access", "sessions:number");
  expect(csv).toBe(
    tableCsv({ columns: cols, rows: table?.rows ?? [] }).replace(
      /^.*\r\n/,
      "person,system,first_access,sessions\r\n",
    ),
  );
});

it("reads the period's pairs once, for both tables", () => {
  expect(queries).toContain("access.per_person_system");
  expect(queries).not.toContain("access.new_since_previous_period");
});
