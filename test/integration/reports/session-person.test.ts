// The reports read brand members' sessions from `sessions` with the person columns of
// `sessions_enriched` (only native users' sessions go through the view's identity-link join),
// and the data labels once per resource. On sessions of brand users, end users acting through a
// machine user, users without an e-mail, native users linked to a user, to a group, linked for
// part of the period, and unlinked, over several resources and days: every session's person is
// the view's, and every table of the access review and the sensitive-data report that reads the
// sessions gives the rows, in the order, that the same query over the view gives (kept here as
// the reference). _Privileged or production access_ is taken from the pairs' rows as they are
// read: its rows, order and CSV are those of the query it had.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { tableCsv } from "../../../src/reports/csv.js";
import { columns, typedRow, type Report } from "../../../src/reports/model.js";
import { reportFrom } from "../../../src/reports/produce.js";
import {
  accessQueries,
  chTime,
  sensitiveQueries,
  type ReportQuery,
  type Warehouse,
} from "../../../src/warehouse/index.js";
import {
  periodSessionsSql,
  RESOURCE_LABELS,
} from "../../../src/warehouse/reports/session-queries.js";
import { quoteIdent } from "../../../src/warehouse/sql.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

const PREVIOUS = Date.UTC(2026, 9, 1);
const FROM = Date.UTC(2026, 9, 4);
const TO = Date.UTC(2026, 9, 7);

const FILTERS = `({user:String} = '' OR user_key = {user:String} OR person = {user:String})
  AND ({resource:String} = '' OR resource_name = {resource:String})
  AND ({environment:String} = '' OR environment = {environment:String})`;

/** The sessions of a range as the reports read them before: every one through the view. */
const viewSessions = (lo: string, hi: string) => `SELECT * FROM (
  SELECT s.id AS id, s.start_time AS start_time, s.user_key AS user_key, s.user_type AS user_type,
       s.resource_id AS resource_id, s.resource_name AS resource_name, s.resource_technology AS resource_technology,
       s.native_username AS native_username, ifNull(e.environment, '') AS environment,
       multiIf(person_email != '', person_email, person_via != 'brand' AND person_name != '', person_name, user_key) AS person,
       if(person_name != '', person_name, user_name) AS person_name, person_via AS via, data_labels
  FROM {{db}}.sessions_enriched AS s
  LEFT JOIN {{db}}.resource_environments AS e ON e.resource_name = s.resource_name
  WHERE s.start_time >= {${lo}:DateTime64(3, 'UTC')} AND s.start_time < {${hi}:DateTime64(3, 'UTC')}
) WHERE ${FILTERS}`;

const T = (c: string) => `formatDateTime(${c}, '%Y-%m-%d %H:%i:%S')`;

/** _Access per person_ as it was: the labels gathered from every session's. */
const PER_PERSON = `SELECT person, any(person_name) AS name, any(via) AS via,
       arrayStringConcat(arraySort(groupUniqArray(user_key)), ', ') AS accounts,
       uniqExact(resource_name) AS systems, count() AS sessions,
       ${T("min(start_time)")} AS first_access, ${T("max(start_time)")} AS last_access,
       countIf(startsWith(lower(environment), 'prod')) AS production_sessions,
       countIf(match(lower(native_username), '^(root|admin|administrator|postgres|sa|sys|system|dba|superuser|rdsadmin|master)$|admin')) AS privileged_sessions,
       arrayStringConcat(arraySort(groupUniqArrayArray(data_labels)), ', ') AS data_labels
FROM (${viewSessions("from", "to")})
GROUP BY person
ORDER BY sessions DESC, person`;

const PRIVILEGED =
  "match(lower(native_username), '^(root|admin|administrator|postgres|sa|sys|system|dba|superuser|rdsadmin|master)$|admin')";

/** _Privileged or production access_ as it was: a read and grouping of the period of its own. */
const PRIVILEGED_ROWS = `SELECT person, resource_name AS system, environment, native_username AS native_user,
       ${PRIVILEGED} AS privileged, startsWith(lower(environment), 'prod') AS production,
       count() AS sessions, ${T("max(start_time)")} AS last_access
FROM (${viewSessions("from", "to")})
WHERE ${PRIVILEGED} OR startsWith(lower(environment), 'prod')
GROUP BY person, resource_name, environment, native_username
ORDER BY person, system, native_user`;

/** _Data labels per person_ as it was: each resource's labels from the view's sessions. */
const PERSON_LABELS = `SELECT person, label, sum(n) AS sessions, uniqExact(resource_name) AS resources,
       ${T("max(last)")} AS last_access
FROM (
  SELECT person, resource_id, resource_name, count() AS n, max(start_time) AS last
  FROM (${viewSessions("from", "to")})
  GROUP BY person, resource_id, resource_name
) AS s
INNER JOIN (SELECT resource_id, any(data_labels) AS labels
FROM {{db}}.sessions_enriched
WHERE start_time >= {from:DateTime64(3, 'UTC')} AND start_time < {to:DateTime64(3, 'UTC')}
GROUP BY resource_id) AS l ON l.resource_id = s.resource_id
ARRAY JOIN l.labels AS label
GROUP BY person, label
ORDER BY person, label`;

let w: Warehouse;
let config: Config;
const at = (ms: number) => `toDateTime64(${ms / 1000}, 3, 'UTC')`;

/**
 * 2,400 sessions over the six days (the period and the one before it), on four resources:
 * by kind, a brand user, an end user through the machine user svc-bot (with an e-mail of its
 * own), a brand user without an e-mail, and the native users analyst (linked to a user), app
 * (linked to a group), etl (linked to a user until the period's middle) and root (never linked).
 */
async function storeSessions(): Promise<void> {
  await w.client.command({
    query: `INSERT INTO sessions (id, start_time, user_type, user_username, user_id, user_name, user_email,
        end_user_id, end_user_name, end_user_email, native_username, resource_id, resource_name,
        resource_technology, fetched_at, version)
      SELECT concat('s-', toString(number)), ${at(PREVIOUS)} + toIntervalSecond(number * 216 + number % 7),
        multiIf(k = 1, 'machine', k < 3, 'human', 'native'),
        multiIf(k = 0, concat('a', p), k = 1, 'svc-bot', k = 2, concat('nomail', p), ''),
        multiIf(k = 0, concat('usr_a', p), k = 1, 'usr_bot', k = 2, concat('usr_n', p), ''),
        multiIf(k = 0, concat('A ', p), k = 1, 'Bot', ''),
        multiIf(k = 0, concat('a', p, '@acme.example'), k = 1, 'bot@acme.example', ''),
        if(k = 1, concat('usr_e', p), ''), if(k = 1, concat('E ', p), ''),
        if(k = 1, concat('e', p, '@acme.example'), ''),
        ['', '', 'admin', 'analyst', 'app', 'etl', 'root'][k + 1],
        concat('res-', toString(r)), concat('db-', toString(r)), 'postgres', ${at(TO)}, 1
      FROM (SELECT number, number % 7 AS k, toString(intDiv(number, 7) % 5) AS p,
                   intDiv(number, 35) % 4 AS r FROM numbers(2400))`,
  });
}

/** The links, the user one of them names, the resources' labels and environments. */
async function storeEntities(): Promise<void> {
  await w.client.command({
    query: `INSERT INTO native_user_identity_links_history (id, valid_from, valid_to, resource_id,
        native_username, identity_type, identity_id, user_email, user_full_name, group_name,
        is_deleted, version)
      SELECT concat('lnk_', native, '_', toString(r)), ${at(PREVIOUS)}, valid_to, concat('res-', toString(r)),
             native, type, id, '', name, grp, 0, 1
      FROM (SELECT arrayJoin([('analyst', 'user', 'usr_zoe', 'Zoe Link', '', CAST(NULL, 'Nullable(DateTime64(3, \\'UTC\\'))')),
                              ('app', 'group', 'grp_ops', '', 'ops', NULL),
                              ('etl', 'user', 'usr_yan', '', '', ${at(FROM + 36 * 3_600_000)})]) AS t,
                   t.1 AS native, t.2 AS type, t.3 AS id, t.4 AS name, t.5 AS grp, t.6 AS valid_to,
                   arrayJoin([0, 1, 2]) AS r)`,
  });
  await w.client.command({
    query: `INSERT INTO users (id, email, full_name, type, is_deleted, version)
      VALUES ('usr_zoe', 'zoe@acme.example', 'Zoe', 'human', 0, 1),
             ('usr_yan', 'yan@acme.example', 'Yan', 'human', 0, 1)`,
  });
  await w.client.command({
    query: `INSERT INTO inventory_columns (id, kind, resource_id, resource_name, path, data_labels, is_deleted, version)
      VALUES ('c1', 'column', 'res-0', 'db-0', 'a.b.email', ['pii'], 0, 1),
             ('c2', 'column', 'res-1', 'db-1', 'a.b.card', ['pci', 'pii'], 0, 1),
             ('c3', 'column', 'res-1', 'db-1', 'a.b.note', ['secret'], 0, 1),
             ('c4', 'column', 'res-2', 'db-2', 'a.b.id', [], 0, 1)`,
  });
  await w.client.command({
    query: `INSERT INTO agg_histogram (job, bucket_time, interval_s, level, key1, key2, count, window_start, fetched_at)
      SELECT job, ${at(FROM)} AS t, 3600, 2, k1, k2, 1, t, t
      FROM (SELECT arrayJoin([('resource_environments', 'production', 'db-1'), ('resource_environments', 'staging', 'db-2'),
                              ('labels', 'pii', 'db-0'), ('labels', 'pci', 'db-1')]) AS e, e.1 AS job, e.2 AS k1, e.3 AS k2)`,
  });
  // The aggregation job of data labels by resource, which the sensitive-data report reads.
  await w.client.command({
    query: `INSERT INTO agg_jobs (job, group_by, recorded_at)
      VALUES ('labels', ['response.returned_columns.data_label', 'resource.name'], ${at(FROM)})`,
  });
}

beforeAll(async () => {
  config = await testConfig();
  w = await migratedWarehouse(config);
  await w.client.command({ query: `USE ${quoteIdent(w.database)}` });
  await storeSessions();
  await storeEntities();
}, 60_000);

afterAll(async () => {
  await w?.close();
});

const params = (user = "") => ({
  from: chTime(FROM),
  to: chTime(TO),
  previousFrom: chTime(PREVIOUS),
  user,
  resource: "",
  environment: "",
});

const rows = (sql: string, user = "") =>
  select(w, sql.replaceAll("{{db}}", quoteIdent(w.database)), params(user));

/** The new sessions of the period, and of the period before it (the same text, shifted). */
const current = periodSessionsSql("enriched");
const previous = current
  .replaceAll("{from:", "{previousFrom:")
  .replaceAll("{to:", "{from:");

/** A query over the view's sessions instead of the reports' own read of them. */
const overView = (q: ReportQuery): string =>
  q.sql
    .replaceAll(current, viewSessions("from", "to"))
    .replaceAll(previous, viewSessions("previousFrom", "from"));

describe("the sessions the reports read", () => {
  it("every session of the period has the person, name and source sessions_enriched gives it", async () => {
    const cols = "id, person, person_name, via, user_key, environment";
    const mine = await rows(`SELECT ${cols} FROM (${current}) ORDER BY id`);
    const view = await rows(
      `SELECT ${cols} FROM (${viewSessions("from", "to")}) ORDER BY id`,
    );
    expect(mine.length).toBeGreaterThan(1000);
    expect(mine).toEqual(view);
    // Every way of finding a person is in the data.
    expect(new Set(mine.map((r) => r.via))).toEqual(
      new Set(["brand", "link_user", "link_group", "none"]),
    );
  });

  it("every session's resource has the data labels sessions_enriched gives the session", async () => {
    const mine = await rows(
      `SELECT c.id AS id, l.labels AS labels FROM (${current}) AS c LEFT JOIN ${RESOURCE_LABELS} AS l ON l.resource_id = c.resource_id ORDER BY id`,
    );
    const view = await rows(
      `SELECT id, data_labels AS labels FROM (${viewSessions("from", "to")}) ORDER BY id`,
    );
    expect(mine).toEqual(view);
  });
});

describe("tables over the sessions: the rows and order of the same query over the view", () => {
  const access = accessQueries("enriched");
  const sensitive = sensitiveQueries("enriched");
  const swapped: [string, ReportQuery][] = [
    ["access per person system", access.perPersonSystem],
    ["totals and sessions per day", access.totalsAndDays],
    ["people on labelled resources", sensitive.byPersonResources],
  ];
  for (const [name, q] of swapped)
    it(`${name}`, async () => {
      expect(q.sql).toContain(current);
      const mine = await rows(q.sql);
      expect(mine.length).toBeGreaterThan(0);
      expect(mine).toEqual(await rows(overView(q)));
    });

  it("access per person (labels once per resource), also for one person", async () => {
    const mine = await rows(access.perPerson.sql);
    expect(mine.length).toBeGreaterThan(10);
    expect(mine).toEqual(await rows(PER_PERSON));
    expect(mine.some((r) => r.data_labels === "pci, pii, secret")).toBe(true);
    const one = await rows(access.perPerson.sql, "zoe@acme.example");
    expect(one).toHaveLength(1);
    expect(one).toEqual(await rows(PER_PERSON, "zoe@acme.example"));
  });

  it("data labels per person (labels once per resource)", async () => {
    const mine = await rows(sensitive.byPersonLabels.sql);
    expect(mine.length).toBeGreaterThan(10);
    expect(mine).toEqual(await rows(PERSON_LABELS));
  });
});

describe("privileged or production access, taken from the pairs as they are read", () => {
  let root: string;
  let json: Report;
  let csv: string;
  let queries: string[];

  beforeAll(async () => {
    root = mkdtempSync(join(testTmpDir(), "privileged-"));
    const out = join(root, "report");
    await reportFrom(w, config, {
      kind: "access-review",
      fromMs: FROM,
      toMs: TO,
      out,
      formats: ["csv", "json"],
      filters: {},
    });
    json = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as Report;
    csv = readFileSync(join(out, "access-privileged-production.csv"), "utf8");
    queries = (
      JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as {
        queries: { id: string }[];
      }
    ).queries.map((q) => q.id);
  }, 60_000);

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("lists the rows, in the order, of the query it had, in its CSV too", async () => {
    const cols = columns(
      "person",
      "system",
      "environment",
      "native_user",
      "privileged:bool",
      "production:bool",
      "sessions:number",
      "last_access",
    );
    const place = { report: "r", section: "s", table: "t" };
    const reference = (await rows(PRIVILEGED_ROWS)).map((r) =>
      typedRow(r, cols, place),
    );
    // Privileged native users (admin, root) and a production resource's sessions, not all rows.
    expect(reference.length).toBeGreaterThan(10);
    expect(reference.some((r) => r.privileged && !r.production)).toBe(true);
    expect(reference.some((r) => !r.privileged && r.production)).toBe(true);
    const table = json.sections
      .flatMap((t) => t.tables)
      .find((t) => t.id === "access-privileged-production");
    expect(table?.rows).toEqual(reference);
    expect(table?.total).toBe(reference.length);
    expect(csv).toBe(tableCsv({ columns: cols, rows: reference }));
  });

  it("reads the period's pairs once, for the three tables", () => {
    expect(queries).toContain("access.per_person_system");
    expect(queries).not.toContain("access.privileged_or_production");
  });
});
