// A report whose tables have more rows than a document can show and than a small heap can hold.
// Built in this process in every format: the HTML, PDF and JSON hold the first TOP_ROWS rows of
// each table and say how many there are and where, every CSV holds them all, and the manifest's
// hashes (taken as the CSVs were written) match the files. Built again by the CLI in a process
// with a 64 MB V8 heap: every row still reaches the CSVs, the same bytes.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { verifyEvidence } from "../../../src/evidence/manifest.js";
import { TOP_ROWS, type Report } from "../../../src/reports/model.js";
import { reportFrom } from "../../../src/reports/produce.js";
import {
  cleanEnv,
  privateCli,
  runCli,
  type CliResult,
} from "../../helpers/cli.js";
import {
  migratedWarehouse,
  select,
  testConfig,
  testDataDir,
} from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

const cli = privateCli();

/**
 * People with one session each on the period's day and on the day before (so none of them is
 * new access): as many rows in the per-person tables, more than the 64 MB heap holds at once.
 */
const PEOPLE = 60_000;
const FROM = "2026-10-01";
const TO = "2026-10-02";
const LARGE = ["access-per-person", "access-per-person-system"] as const;

let root: string;
/** The report made in this process (every format), and the one the CLI made (CSV and JSON). */
let doc: string;
let small: string;
let result: CliResult;
/** The people of the period as ClickHouse counts them, in the report's order (sessions, then person). */
let firstPeople: string[];

beforeAll(async () => {
  const config = await testConfig();
  const database = config.clickhouse.database;
  const w = await migratedWarehouse(config);
  root = mkdtempSync(join(testTmpDir(), "many-rows-"));
  doc = join(root, "doc");
  small = join(root, "small-heap");
  try {
    // Without an e-mail the person is the user name (user_key and person alike).
    await w.client.command({
      query: `INSERT INTO ${database}.sessions (id, start_time, user_type, user_username, user_name, native_username, resource_name, resource_technology, fetched_at, version)
        SELECT concat('s-', toString(number)), toDateTime64('${FROM} 00:00:00', 3, 'UTC') + toIntervalSecond(i % 86000 - day * 86400),
               'human', name, name, 'analyst', concat('db-', toString(i % 7)), 'postgres',
               toDateTime64('${TO} 00:00:00', 3, 'UTC'), 1
        FROM (SELECT number, number % ${PEOPLE} AS i, intDiv(number, ${PEOPLE}) AS day,
                     concat('person-', leftPad(toString(i), 6, '0'), '.example') AS name
              FROM numbers(${2 * PEOPLE}))`,
    });
    firstPeople = (
      await select<{ person: string }>(
        w,
        `SELECT user_key AS person FROM {db}.sessions FINAL
         WHERE start_time >= '${FROM}' AND start_time < '${TO}'
         GROUP BY person ORDER BY count() DESC, person LIMIT ${TOP_ROWS}`,
      )
    ).map((r) => r.person);
    await reportFrom(w, config, {
      kind: "access-review",
      fromMs: Date.parse(FROM),
      toMs: Date.parse(TO),
      out: doc,
      formats: ["html", "pdf", "csv", "json"],
      filters: {},
    });
  } finally {
    // The CLI opens the same data directory: one engine holds it at a time.
    await w.close();
  }
  result = await runCli(
    cli(),
    [
      "report",
      "access-review",
      "--from",
      FROM,
      "--to",
      TO,
      "--out",
      small,
      "--format",
      "csv,json",
    ],
    cleanEnv({
      SESSIONHOUSE_DATA_DIR: testDataDir(),
      CLICKHOUSE_DATABASE: database,
      SESSIONHOUSE_LOG_LEVEL: "warn",
      NODE_OPTIONS: "--max-old-space-size=64",
    }),
  );
}, 180_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

/** The data lines of a CSV (every row of this data set is one line: no quoted line break). */
function csvLines(dir: string, id: string): string[] {
  const text = readFileSync(join(dir, `${id}.csv`), "utf8");
  expect(text.endsWith("\r\n")).toBe(true);
  return text.slice(0, -2).split("\r\n").slice(1);
}

it("every row is in the CSVs, in the table's order", () => {
  for (const id of LARGE) expect(csvLines(doc, id), id).toHaveLength(PEOPLE);
  expect(
    csvLines(doc, "access-per-person")
      .slice(0, TOP_ROWS)
      .map((l) => l.split(",")[0]),
  ).toEqual(firstPeople);
});

it("the CLI writes the same CSVs in a 64 MB heap", () => {
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  for (const id of LARGE)
    expect(
      readFileSync(join(small, `${id}.csv`)).equals(
        readFileSync(join(doc, `${id}.csv`)),
      ),
      id,
    ).toBe(true);
});

it("the HTML, PDF and JSON hold the first rows and say how many more the CSV has", () => {
  const json = JSON.parse(
    readFileSync(join(doc, "report.json"), "utf8"),
  ) as Report;
  const tables = json.sections.flatMap((s) => s.tables);
  const note = (id: string) =>
    `${TOP_ROWS.toLocaleString("en-US")} of ${PEOPLE.toLocaleString("en-US")} rows; all ${PEOPLE.toLocaleString("en-US")} in ${id}.csv.`;
  const html = readFileSync(join(doc, "report.html"), "utf8");
  const pdf = execFileSync("pdftotext", [join(doc, "report.pdf"), "-"], {
    encoding: "utf8",
    maxBuffer: 1 << 26,
  }).replace(/\s+/g, " ");
  for (const id of LARGE) {
    const t = tables.find((x) => x.id === id);
    expect(t?.total, id).toBe(PEOPLE);
    expect(t?.rows, id).toHaveLength(TOP_ROWS);
    expect(t?.csv, id).toBe(`${id}.csv`);
    const shown = html
      .split(`data-table="${id}"`)[1]
      ?.split("</table>")[0]
      ?.match(/<tr>/g)?.length;
    expect(shown, id).toBe(TOP_ROWS + 1); // and the header row
    expect(html, id).toContain(note(id));
    expect(pdf, id).toContain(note(id));
  }
  expect(
    tables.find((t) => t.id === "access-per-person")?.rows.map((r) => r.person),
  ).toEqual(firstPeople);
  const people = json.summary.find((f) => f.label === "People");
  expect(people?.value).toBe(PEOPLE);
  expect(tables.find((t) => t.id === "access-new")?.total).toBe(0);
});

it("the manifest hashes every file as written", () => {
  const check = verifyEvidence(doc);
  expect(check.problems).toEqual([]);
  const listed = check.manifest.files.map((f) => f.path);
  for (const id of LARGE) expect(listed).toContain(`${id}.csv`);
  expect(listed).toEqual(
    expect.arrayContaining(["report.html", "report.pdf", "report.json"]),
  );
});
