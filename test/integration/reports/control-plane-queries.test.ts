// The report queries over the control-plane streams. The sessions under policy suspensions are those of the suspended identities joined on the
// identity (no cross join of the period's sessions with every suspension): the rows, in their
// order, are those of the cross join the report used to run (kept here as the reference), on
// suspensions of a user (matched as user and as end user), of a group (in the user's and in the
// end user's groups), expired, revoked, created late, and with each filter. The accounts without
// activity read the period's sessions once (the rows of the two reads it used to make).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chTime,
  controlPlaneQueries,
  ReportReader,
  type Warehouse,
} from "../../../src/warehouse/index.js";
import { quoteIdent } from "../../../src/warehouse/sql.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

/** The report's query before the join on identities: every session of the period × every suspension. */
const CROSS_JOIN = `SELECT p.id AS suspension_id, p.policy_id AS policy_id, s.id AS session_id,
       formatDateTime(s.start_time, '%Y-%m-%d %H:%i:%S') AS start_time, s.user_key AS user, s.resource_name AS resource,
       s.native_username AS native_user
FROM (
  SELECT id, start_time, user_id, end_user_id, user_groups, end_user_groups, user_key,
         resource_name, native_username
  FROM {db}.sessions FINAL
  WHERE start_time >= {from:DateTime64(3, 'UTC')} AND start_time < {to:DateTime64(3, 'UTC')}
    AND ({resource:String} = '' OR resource_name = {resource:String})
) AS s
CROSS JOIN (SELECT * FROM {db}.policy_suspensions_latest
WHERE created_at < {to:DateTime64(3, 'UTC')}
  AND (expire_at IS NULL OR expire_at > {from:DateTime64(3, 'UTC')})
  AND (removed_at IS NULL OR removed_at > {from:DateTime64(3, 'UTC')})) AS p
WHERE s.start_time >= p.created_at AND (p.expire_at IS NULL OR s.start_time < p.expire_at)
  AND (p.removed_at IS NULL OR s.start_time < p.removed_at)
  AND multiIf(
    p.identity_type = 'group', has(s.user_groups, p.identity_id) OR has(s.end_user_groups, p.identity_id),
    s.user_id = p.identity_id OR s.end_user_id = p.identity_id)
  AND ({user:String} = '' OR s.user_key = {user:String} OR p.identity_id = {user:String})
ORDER BY s.start_time, p.id, s.id`;

const DAY = "2026-10-01";
const at = (hh: number, mm = 0) =>
  `toDateTime64('${DAY} ${String(hh).padStart(2, "0")}:${String(mm).padStart(2, "0")}:00', 3, 'UTC')`;

/** The inactive accounts as the report read them before: the period's sessions twice. */
const TWO_READS = `SELECT id, email, full_name AS name, type, db_username,
       if(expire_at IS NULL, '', formatDateTime(assumeNotNull(expire_at), '%Y-%m-%d %H:%i:%S')) AS expires
FROM {db}.users FINAL
WHERE is_deleted = 0 AND created_at < {to:DateTime64(3, 'UTC')}
  AND ({user:String} = '' OR email = {user:String} OR db_username = {user:String})
  AND id NOT IN (
    SELECT arrayJoin([user_id, end_user_id]) FROM {db}.sessions FINAL
    WHERE start_time >= {from:DateTime64(3, 'UTC')} AND start_time < {to:DateTime64(3, 'UTC')}
  )
  AND (email = '' OR email NOT IN (
    SELECT arrayJoin([user_email, end_user_email]) FROM {db}.sessions FINAL
    WHERE start_time >= {from:DateTime64(3, 'UTC')} AND start_time < {to:DateTime64(3, 'UTC')}
  ))
ORDER BY type, email, id`;

/** Users: id, e-mail, deleted, created. */
const USERS: [string, string, number, string][] = [
  ["u-alice", "alice@x", 0, at(0)],
  ["u-bot", "", 0, at(0)],
  ["u-zed", "zed@x", 0, at(0)],
  ["u-noemail", "", 0, at(0)],
  ["u-carol-2", "carol@x", 0, at(0)],
  ["u-gone", "gone@x", 1, at(0)],
  ["u-late", "late@x", 0, "toDateTime64('2026-10-02 00:00:00', 3, 'UTC')"],
];

/** Sessions: id, hour, user id, user key, user groups, end user id, end user groups, resource. */
const SESSIONS: [
  string,
  number,
  string,
  string,
  string[],
  string,
  string[],
  string,
][] = [
  ["s-alice", 1, "u-alice", "alice@x", ["analysts"], "", [], "db-1"],
  ["s-alice-late", 20, "u-alice", "alice@x", ["analysts"], "", [], "db-2"],
  [
    "s-bot-for-alice",
    2,
    "u-bot",
    "bot",
    ["machines"],
    "u-alice",
    ["analysts", "ops"],
    "db-1",
  ],
  [
    "s-self",
    3,
    "u-alice",
    "alice@x",
    ["analysts"],
    "u-alice",
    ["analysts"],
    "db-2",
  ],
  ["s-bob", 4, "u-bob", "bob@x", ["ops"], "", [], "db-1"],
  ["s-bob-analysts", 5, "u-bob", "bob@x", ["ops", "analysts"], "", [], "db-2"],
  ["s-carol", 6, "u-carol", "carol@x", ["finance"], "", [], "db-1"],
  ["s-dave", 7, "u-dave", "dave@x", [], "", [], "db-1"],
  ["s-erin", 8, "u-erin", "erin@x", ["ops"], "", [], "db-2"],
];

/** A suspension: id, identity type, identity id, created, expires (null: never), removed (null: not). */
type Suspension = [
  string,
  string,
  string,
  string,
  string | null,
  string | null,
];

/** Stores suspensions and the removals of those removed, as the directory sync does. */
async function insertSuspensions(
  db: string,
  suspensions: readonly Suspension[],
): Promise<void> {
  await w.client.command({
    query: `INSERT INTO ${db}.policy_suspensions (id, policy_id, identity_type, identity_id, suspension_type, expire_at, created_at, updated_at, content_hash, observed_at)
      VALUES ${suspensions
        .map(
          ([id, type, identity, created, expires]) =>
            `('${id}', 'pol-${id}', '${type}', '${identity}', 'temporary', ${expires ?? "NULL"}, ${created}, ${created}, 'h', ${created})`,
        )
        .join(", ")}`,
  });
  const removals = suspensions.flatMap(([id, , , , , removed]) =>
    removed ? [`('${id}', ${removed}, NULL, ${removed})`] : [],
  );
  if (removals.length > 0)
    await w.client.command({
      query: `INSERT INTO ${db}.policy_suspension_removals (id, removed_at, returned_at, observed_at)
      VALUES ${removals.join(", ")}`,
    });
}

const SUSPENSIONS: Suspension[] = [
  ["sus-alice", "user", "u-alice", at(0), null, null],
  ["sus-analysts", "group", "analysts", at(2, 30), at(19), null],
  ["sus-ops", "group", "ops", at(0), null, at(5, 30)],
  ["sus-carol-late", "user", "u-carol", at(6, 30), null, null],
  ["sus-dave-expired", "user", "u-dave", at(0), at(6, 59), null],
  ["sus-nobody", "user", "u-nobody", at(0), null, null],
  ["sus-finance-name", "group", "u-carol", at(0), null, null],
];

let w: Warehouse;
let reader: ReportReader;

beforeAll(async () => {
  w = await migratedWarehouse(await testConfig());
  const db = quoteIdent(w.database);
  const arr = (a: string[]) => `[${a.map((g) => `'${g}'`).join(", ")}]`;
  await w.client.command({
    query: `INSERT INTO ${db}.sessions (id, start_time, user_type, user_id, user_username, user_name, user_email, user_groups,
              end_user_id, end_user_groups, native_username, resource_id, resource_name, resource_technology, fetched_at, version)
      VALUES ${SESSIONS.map(
        ([id, h, user, key, groups, end, endGroups, res]) =>
          `('${id}', ${at(h)}, 'human', '${user}', '${key}', '${key}', '${key}', ${arr(groups)}, '${end}', ${arr(endGroups)}, 'app', '${res}', '${res}', 'postgres', ${at(23)}, 1)`,
      ).join(", ")}`,
  });
  await insertSuspensions(db, SUSPENSIONS);
  await w.client.command({
    query: `INSERT INTO ${db}.users (id, email, type, is_deleted, created_at, updated_at, observed_at, version)
      VALUES ${USERS.map(
        ([id, email, deleted, created]) =>
          `('${id}', '${email}', 'human', ${deleted}, ${created}, ${created}, ${created}, 1)`,
      ).join(", ")}`,
  });
  reader = await ReportReader.open(w);
}, 60_000);

afterAll(async () => {
  await w.close();
});

const params = (filters: { user?: string; resource?: string } = {}) => ({
  from: chTime(Date.parse(`${DAY}T00:00:00Z`)),
  to: chTime(Date.parse(`${DAY}T00:00:00Z`) + 86_400_000),
  user: filters.user ?? "",
  resource: filters.resource ?? "",
});

it.each([
  ["no filter", {}],
  ["a user filter (a user key)", { user: "bob@x" }],
  ["a user filter (a suspended identity)", { user: "analysts" }],
  ["a resource filter", { resource: "db-2" }],
])(
  "lists the rows the cross join listed, in its order: %s",
  async (_name, filters) => {
    const p = params(filters);
    const ours = await reader.rows(controlPlaneQueries.sessionsUnder, p);
    const reference = await select(w, CROSS_JOIN, p);
    expect(ours).toEqual(reference);
  },
);

it("lists a session once per suspension it is under, whichever way it matches", async () => {
  const rows =
    (await reader.rows(controlPlaneQueries.sessionsUnder, params())) ?? [];
  expect(
    rows.map((r) => `${String(r.suspension_id)} ${String(r.session_id)}`),
  ).toEqual([
    "sus-alice s-alice",
    "sus-alice s-bot-for-alice",
    "sus-ops s-bot-for-alice",
    "sus-alice s-self",
    "sus-analysts s-self",
    "sus-ops s-bob",
    "sus-analysts s-bob-analysts",
    "sus-ops s-bob-analysts",
    "sus-alice s-alice-late",
  ]);
});

describe("accounts without activity", () => {
  it("lists the rows the two reads listed: neither user nor end user, by id or e-mail", async () => {
    const ours = await reader.rows(
      controlPlaneQueries.inactiveAccounts,
      params(),
    );
    expect(ours).toEqual(await select(w, TWO_READS, params()));
    expect(ours?.map((r) => r.id)).toEqual(["u-noemail", "u-zed"]);
  });

  it("reads the period's sessions once", async () => {
    // Every row of both tables once; a second read of the sessions goes over.
    const cap = { max_rows_to_read: String(USERS.length + SESSIONS.length) };
    const run = (sql: string) =>
      w.client.query({
        query: sql.replaceAll("{db}", quoteIdent(w.database)),
        query_params: params(),
        format: "JSONEachRow",
        clickhouse_settings: cap,
      });
    await expect(run(TWO_READS)).rejects.toThrow(
      /Limit for rows or bytes to read exceeded/,
    );
    const ours = await run(
      controlPlaneQueries.inactiveAccounts.sql.replaceAll("{{db}}", "{db}"),
    );
    expect((await ours.json()).length).toBe(2);
  });
});

describe("sessions under suspensions over several days", () => {
  // Each suspension joins a session of its own UTC day: these span days, start before the
  // period, run on indefinitely, are revoked mid-way, and sessions fall on midnight exactly.
  const day = (d: number, hh = 0, mm = 0, ms = 0) =>
    `toDateTime64('2026-11-0${d} ${String(hh).padStart(2, "0")}:${String(mm).padStart(2, "0")}:00', 3, 'UTC') + toIntervalMillisecond(${ms})`;
  const SPAN_SESSIONS: [string, string, string, string[]][] = [
    ["m-ann-1", day(1, 9), "u-ann", ["crew"]],
    ["m-ann-2", day(2, 23, 59), "u-ann", ["crew"]],
    ["m-ann-3", day(3), "u-ann", ["crew"]],
    ["m-ann-4", day(4, 12), "u-ann", []],
    ["m-ann-5", day(5, 23, 59, 59_999), "u-ann", ["crew"]],
    ["m-ben-1", day(1), "u-ben", []],
    ["m-ben-2", day(2, 6), "u-ben", ["crew"]],
    ["m-ben-3", day(3, 18), "u-ben", []],
    ["m-ben-4", day(5, 1), "u-ben", []],
  ];
  /** id, identity type, identity, created, expires (null: never), removed (null: not). */
  const SPAN_SUSPENSIONS: Suspension[] = [
    ["m-crew-forever", "group", "crew", day(1, 12), null, null],
    [
      "m-ann-before",
      "user",
      "u-ann",
      "toDateTime64('2026-10-30 00:00:00', 3, 'UTC')",
      day(2, 23, 59),
      null,
    ],
    ["m-ann-across", "user", "u-ann", day(2, 20), day(4, 12, 0, 1), null],
    ["m-ben-revoked", "user", "u-ben", day(1), null, day(3, 18)],
    ["m-ben-midnight", "user", "u-ben", day(4, 23, 59), day(5, 1, 0, 1), null],
  ];

  beforeAll(async () => {
    // The embedded session keeps the read cap a test above set: lift it.
    await w.client.command({
      query: "SELECT 1",
      clickhouse_settings: { max_rows_to_read: "0" },
    });
    const db = quoteIdent(w.database);
    const arr = (a: string[]) => `[${a.map((g) => `'${g}'`).join(", ")}]`;
    await w.client.command({
      query: `INSERT INTO ${db}.sessions (id, start_time, user_type, user_id, user_username, user_name, user_email, user_groups,
              end_user_id, end_user_groups, native_username, resource_id, resource_name, resource_technology, fetched_at, version)
      VALUES ${SPAN_SESSIONS.map(
        ([id, t, user, groups]) =>
          `('${id}', ${t}, 'human', '${user}', '${user}', '${user}', '${user}', ${arr(groups)}, '', [], 'app', 'db-9', 'db-9', 'postgres', ${day(6)}, 1)`,
      ).join(", ")}`,
    });
    await insertSuspensions(db, SPAN_SUSPENSIONS);
  }, 60_000);

  const span = (from: string, to: string) => ({
    from: chTime(Date.parse(from)),
    to: chTime(Date.parse(to)),
    user: "",
    resource: "",
  });

  it.each([
    ["whole days", "2026-11-01T00:00:00Z", "2026-11-06T00:00:00Z"],
    ["bounds inside days", "2026-11-02T12:00:00Z", "2026-11-05T01:00:00Z"],
    [
      "a period inside one suspension",
      "2026-11-03T00:00:00Z",
      "2026-11-03T06:00:00Z",
    ],
  ])(
    "lists the rows the cross join listed, in its order: %s",
    async (_name, from, to) => {
      const p = span(from, to);
      const ours = await reader.rows(controlPlaneQueries.sessionsUnder, p);
      expect(ours).toEqual(await select(w, CROSS_JOIN, p));
      expect(ours?.length).toBeGreaterThan(0);
    },
  );

  it("lists each session under each suspension in force at its start, once", async () => {
    const rows =
      (await reader.rows(
        controlPlaneQueries.sessionsUnder,
        span("2026-11-01T00:00:00Z", "2026-11-06T00:00:00Z"),
      )) ?? [];
    expect(
      rows.map((r) => `${String(r.suspension_id)} ${String(r.session_id)}`),
    ).toEqual([
      "m-ben-revoked m-ben-1",
      "m-ann-before m-ann-1",
      "m-ben-revoked m-ben-2",
      "m-crew-forever m-ben-2",
      "m-ann-across m-ann-2",
      "m-crew-forever m-ann-2",
      "m-ann-across m-ann-3",
      "m-crew-forever m-ann-3",
      "m-ann-across m-ann-4",
      "m-ben-midnight m-ben-4",
      "m-crew-forever m-ann-5",
    ]);
  });
});
