// Session record → row of the `sessions` table: the column contract (names, types, and the SQL
// the engine builds each value with) the migrations and the writer share, the value checks a
// record passes before it is sent, and the input row that carries it.
import { durationStringMs, timestampMs } from "../api/schemas/common.js";
import { calendarProblem } from "../util/time.js";
import type { Session } from "../api/schemas/session.js";
import type { BodyFormat } from "./insert.js";
import {
  lastValueOf,
  rowBinaryString,
  type RowBlock,
  type TakenRows,
} from "./row-block.js";

/** Statuses after which a session never changes again. */
export const FINAL_STATUSES = new Set(["completed"]);

/** The version's status rank step: 2^42 ms is year 2109, so a fetch time always fits below it. */
const RANK_STEP = 2 ** 42;

/**
 * A column of `sessions`: its name and ClickHouse type as the migrations create it, and the SQL
 * the insert computes it with from one input row (see SESSION_INPUT): `r` is the record read
 * as RECORD_TUPLE, `b` the identities under its brand member, `start` its start time. The
 * engine builds every row from the record as received; `materialized` columns are computed by
 * the table itself, and `defaulted` ones keep their DEFAULT in every row the writer inserts.
 */
export type SessionColumn = {
  name: string;
  type: string;
  /** The migration that added the column (migrations/NNNN_*.sql). */
  since: number;
  /**
   * False for a column the Session detail dashboard's "Session" panel does not list
   * (dashboards/session-detail.json): the record itself, which has a panel of its own, and what
   * this database keeps about a row rather than what the session is.
   */
  inDetail?: false;
} & ({ sql: string } | { materialized: true } | { defaulted: true });

const DT = "DateTime64(3, 'UTC')";
const LC = "LowCardinality(String)";

/** The columns of one identity (IDENTITY_TUPLE at `member`), named `<prefix>_…`. */
function identityColumns(
  prefix: string,
  member: string,
  typeColumn: string,
): SessionColumn[] {
  return [
    { name: `${prefix}_id`, type: "String", sql: `${member}.id` },
    { name: `${prefix}_name`, type: "String", sql: `${member}.name` },
    { name: `${prefix}_email`, type: "String", sql: `${member}.email` },
    { name: typeColumn, type: LC, sql: `${member}.type` },
    { name: `${prefix}_groups`, type: `Array(${LC})`, sql: `${member}.groups` },
    {
      name: `${prefix}_external_ids`,
      type: "Array(String)",
      sql: `${member}.externalIds`,
    },
  ].map((c) => ({ ...c, since: 2 }));
}

/** An identity as the insert reads it; absent members are empty. */
const IDENTITY_TUPLE =
  "Tuple(id String, name String, email String, type String, groups Array(String), externalIds Array(String))";

/** The identities under the user's brand member (see findBrandKey). */
const BRAND_TUPLE = `Tuple(user ${IDENTITY_TUPLE}, endUser ${IDENTITY_TUPLE})`;

/**
 * One row of a session block, as the insert reads it (RowBinary, see SessionInputs): when it was
 * fetched, whether an active legal hold names it, the name of its brand member (null: none),
 * and the record as received.
 */
const SESSION_INPUT =
  "fetched_ms Int64, held Bool, brand Nullable(String), raw String";

const timeOf = (member: string) =>
  `parseDateTime64BestEffort(${member}, 3, 'UTC')`;

/** Every column of `sessions`, in the table's order: the one definition of the row. */
export const SESSION_COLUMNS: readonly SessionColumn[] = [
  { name: "id", type: "String", sql: "r.id", since: 2 },
  { name: "start_time", type: DT, sql: "start", since: 2 },
  {
    name: "end_time",
    since: 2,
    type: `Nullable(${DT})`,
    sql: `if(r.endTime = '', NULL, ${timeOf("r.endTime")})`,
  },
  {
    name: "duration_ms",
    since: 2,
    type: "Nullable(UInt64)",
    // The Duration the service sent ("12.5s", rounded to the millisecond, halves up), or
    // end − start for a completed session that has none.
    sql: `multiIf(r.duration != '', toUInt64(floor(toFloat64(extract(r.duration, '-?[0-9]+(?:[.][0-9]+)?')) * 1000 + 0.5)), r.endTime = '', NULL, toUInt64(toUnixTimestamp64Milli(${timeOf("r.endTime")}) - toUnixTimestamp64Milli(start)))`,
  },
  { name: "session_status", type: LC, sql: "r.sessionStatus", since: 2 },
  {
    name: "client_ip_address",
    since: 2,
    type: "String",
    sql: "r.network.clientIpAddress",
  },
  {
    name: "server_ip_address",
    since: 2,
    type: "String",
    sql: "r.network.serverIpAddress",
  },
  { name: "sidecar_id", type: "String", sql: "r.sidecar.id", since: 2 },
  { name: "sidecar_name", type: LC, sql: "r.sidecar.name", since: 2 },
  {
    name: "sidecar_technology",
    type: LC,
    sql: "r.sidecar.technology",
    since: 2,
  },
  { name: "user_type", type: LC, sql: "r.user.type", since: 2 },
  { name: "user_username", type: "String", sql: "r.user.username", since: 2 },
  ...identityColumns("user", "b.user", "user_account_type"),
  ...identityColumns("end_user", "b.endUser", "end_user_type"),
  {
    name: "native_username",
    type: "String",
    sql: "r.user.native.username",
    since: 2,
  },
  { name: "resource_type", type: LC, sql: "r.resource.type", since: 2 },
  { name: "resource_id", type: "String", sql: "r.resource.id", since: 2 },
  { name: "resource_name", type: LC, sql: "r.resource.name", since: 2 },
  {
    name: "resource_technology",
    type: LC,
    sql: "r.resource.technology",
    since: 2,
  },
  { name: "connector_id", type: "String", sql: "r.connector.id", since: 2 },
  { name: "connector_name", type: LC, sql: "r.connector.name", since: 2 },
  {
    name: "parent_session_id",
    type: "String",
    sql: "r.parentSessionId",
    since: 2,
  },
  // Shown whole by the panel "Raw record" of Session detail.
  { name: "raw", type: "String", sql: "raw", since: 2, inDetail: false },
  {
    name: "fetched_at",
    since: 2,
    type: DT,
    sql: "fromUnixTimestamp64Milli(fetched_ms, 'UTC')",
  },
  {
    name: "version",
    since: 2,
    type: "UInt64",
    // Completed reads outrank open ones; among equals the later fetch wins (see the migration).
    sql: `if(r.sessionStatus IN (${[...FINAL_STATUSES].map((v) => `'${v}'`).join(", ")}), 2, 1) * ${RANK_STEP} + fetched_ms`,
  },
  { name: "user_key", type: LC, materialized: true, since: 6, inDetail: false },
  { name: "legal_hold", type: "Bool", sql: "held", since: 14, inDetail: false },
  // 1 only in a tombstone, which retires a key the session is no longer stored under
  // (session-keys.ts); a read is never one.
  {
    name: "is_deleted",
    type: "UInt8",
    defaulted: true,
    since: 23,
    inDetail: false,
  },
  // Set by `archive export` on the rows of a month it archived (migrations/0039); a read is
  // never archived when stored.
  {
    name: "archived",
    type: "Bool",
    defaulted: true,
    since: 39,
    inDetail: false,
  },
];

/** The start time as the insert computes it once per row (`start` in the columns' SQL). */
const START_SQL = timeOf("r.startTime");

/**
 * The members of the session record the row is built from, as paths ("network.clientIpAddress"):
 * every `r.…` the columns' SQL (and the start time's) reads, in order of first use. The record is
 * read as exactly these (RECORD_TUPLE), so a column reading a new member needs nothing else here;
 * test/unit/api/session-fast.test.ts holds each to a member the session schema declares.
 */
export const RECORD_MEMBERS: readonly string[] = [
  ...new Set(
    [START_SQL, ...SESSION_COLUMNS.map((c) => ("sql" in c ? c.sql : ""))]
      .flatMap((sql) => [
        ...sql.matchAll(/\br\.([A-Za-z]\w*(?:\.[A-Za-z]\w*)*)/g),
      ])
      .map((m) => m[1] as string),
  ),
];

interface MemberTree {
  [member: string]: MemberTree;
}

/** A named Tuple of the members under `tree`: a member with none under it is a String. */
function tupleOf(tree: MemberTree): string {
  return `Tuple(${Object.entries(tree)
    .map(
      ([k, t]) => `${k} ${Object.keys(t).length === 0 ? "String" : tupleOf(t)}`,
    )
    .join(", ")})`;
}

/**
 * A session record as the insert reads it: RECORD_MEMBERS, each a String, nested as in the
 * record; absent members are empty, as proto3 omits zero values. The exporter has checked the
 * record's shape before (parseSession), so a member is never of another type here.
 */
const RECORD_TUPLE = tupleOf(
  RECORD_MEMBERS.reduce<MemberTree>((tree, path) => {
    let at = tree;
    for (const key of path.split(".")) at = at[key] ??= {};
    return tree;
  }, {}),
);

/**
 * The stored columns a later migration than `migration` added: what a row written under that
 * migration's schema (an archived month) lacks, and takes the default of when loaded.
 */
export function sessionColumnsAddedAfter(migration: number): string[] {
  return SESSION_COLUMNS.filter(
    (c) => c.since > migration && !("materialized" in c),
  ).map((c) => c.name);
}

/**
 * The person of a session as dashboards and holds name it: the e-mail of a human, the user name
 * of a machine. The `user_key` column computes the same (migrations/0006).
 */
export function sessionUserKey(s: Session): string {
  const email = s.user.identity?.email ?? "";
  return email !== "" ? email : s.user.username;
}

const WRITTEN = SESSION_COLUMNS.flatMap((c) => ("sql" in c ? [c] : []));

/** The columns an insert writes, in the order of SESSION_ROW_SQL's values. */
export const SESSION_INSERT_COLUMNS: readonly string[] = WRITTEN.map(
  (c) => c.name,
);

/** Why the engine refuses a record it cannot read although the exporter could (see below). */
const UNREADABLE =
  "the engine cannot read this record as JSON although the exporter could (a number beyond its range, nesting deeper than it allows): it is kept as a dead letter";

/**
 * The SELECT that builds session rows from input rows read from `source` (a table function
 * with SESSION_INPUT's structure). The record is read once into RECORD_TUPLE and its brand
 * member once into BRAND_TUPLE. A record the engine's JSON reader refuses reads as all empty;
 * the exporter never passes one without an id, so an empty id means exactly that, and the row
 * is refused (the block is split to find it, see insertBlock) instead of stored empty.
 */
export function sessionRowsSelect(source: string): string {
  return `SELECT ${WRITTEN.map((c) => c.sql).join(", ")}
FROM (
  SELECT fetched_ms, held, raw,
    JSONExtract(raw, '${RECORD_TUPLE}') AS r,
    JSONExtract(if(brand IS NULL, '{}', raw), 'user', ifNull(brand, ''), '${BRAND_TUPLE}') AS b,
    ${START_SQL} AS start
  FROM ${source}
  WHERE throwIf(r.id = '', '${UNREADABLE}') = 0
)`;
}

/** The range of a DateTime64(3) column: 1900-01-01 to 2299-12-31 UTC. */
const DATETIME64_MIN_MS = Date.UTC(1900, 0, 1);
const DATETIME64_MAX_MS = Date.UTC(2300, 0, 1) - 1;
/** Earliest start a real session can have: the service did not exist before. */
const START_FLOOR_MS = Date.UTC(2000, 0, 1);
/** Latest start a session can have: a day after it was read, for clocks that disagree. */
const START_AHEAD_MS = 86_400_000;
/** Longest duration: the whole DateTime64 range. */
const MAX_DURATION_MS = DATETIME64_MAX_MS - DATETIME64_MIN_MS;

/** Whether a DateTime64(3) column holds the instant. */
const inDateTime64 = (ms: number) =>
  ms >= DATETIME64_MIN_MS && ms <= DATETIME64_MAX_MS;

/** Whether a session read at `fetchedAtMs` can have started at `startMs`. */
const plausibleStart = (startMs: number, fetchedAtMs: number) =>
  startMs >= START_FLOOR_MS && startMs <= fetchedAtMs + START_AHEAD_MS;

/** Digits of `v` from `at`, as a number (the schema has checked that they are digits). */
function digits(v: string, at: number, n: number): number {
  let x = 0;
  for (let i = at; i < at + n; i++) x = 10 * x + v.charCodeAt(i) - 48;
  return x;
}

/**
 * What is wrong with an RFC 3339 timestamp whose digits the schema accepted: a day or time
 * that no calendar has (Date.parse reads "2026-02-30" as March 2 and "24:00" as the next day),
 * or an instant a DateTime64 column cannot hold. Undefined when it is a real instant.
 */
function instantProblem(
  field: string,
  v: string,
  ms: number,
): string | undefined {
  const problem = calendarProblem(
    digits(v, 0, 4),
    digits(v, 5, 2),
    digits(v, 8, 2),
    digits(v, 11, 2),
    digits(v, 14, 2),
    digits(v, 17, 2),
  );
  if (problem !== undefined)
    return `${field}: "${v}" is not a valid date and time (${problem})`;
  if (!inDateTime64(ms))
    return `${field}: "${v}" is out of range (a DateTime64 holds 1900-01-01 to 2299-12-31 UTC)`;
  return undefined;
}

/** The members of a session its value checks read. */
export type SessionTimes = Pick<Session, "startTime" | "endTime" | "duration">;

/**
 * Why the session's values cannot be stored as they are, named by field and value ("startTime:
 * … is out of range"), or undefined when they can. Runs for every session before its row is
 * built: a value is never clamped into range, it goes to dead_letters with this reason.
 */
export function sessionValueProblem(
  s: SessionTimes,
  fetchedAtMs: number,
): string | undefined {
  const startMs = timestampMs(s.startTime);
  const start = instantProblem("startTime", s.startTime, startMs);
  if (start !== undefined) return start;
  if (!plausibleStart(startMs, fetchedAtMs))
    return `startTime: "${s.startTime}" is out of range (a session starts after 2000-01-01 and at most a day after it was read, ${new Date(fetchedAtMs).toISOString()})`;
  if (s.endTime !== undefined) {
    const endMs = timestampMs(s.endTime);
    const end = instantProblem("endTime", s.endTime, endMs);
    if (end !== undefined) return end;
    if (endMs < startMs)
      return `endTime: "${s.endTime}" is before startTime "${s.startTime}"`;
  }
  if (s.duration !== "") {
    const ms = durationStringMs(s.duration) as number;
    if (ms < 0) return `duration: "${s.duration}" is negative`;
    if (ms > MAX_DURATION_MS)
      return `duration: "${s.duration}" is longer than any session can last (400 years)`;
  }
  return undefined;
}

/**
 * Whether a session passes sessionValueProblem, judged on numbers with the same limits: for a
 * record whose times the scan read as real calendar instants (epoch ms, see scanSession) and
 * whose duration it found in range. When this is false, sessionValueProblem on the record's
 * strings names the problem.
 */
export function sessionTimesFit(
  startMs: number,
  endMs: number | undefined,
  fetchedAtMs: number,
): boolean {
  return (
    inDateTime64(startMs) &&
    plausibleStart(startMs, fetchedAtMs) &&
    (endMs === undefined || (inDateTime64(endMs) && endMs >= startMs))
  );
}

/** How a session block is inserted: input rows, table rows built by the engine. */
export const SESSION_ROWS: BodyFormat = {
  format: "RowBinary",
  columns: SESSION_INSERT_COLUMNS,
  input: SESSION_INPUT,
  select: sessionRowsSelect,
};

/**
 * A row of a session block ClickHouse refused, as a dead letter's record id and raw record: the
 * row's last value is the record as received, and its `id` the record id.
 */
export function rejectedSessionRow(
  block: TakenRows,
  index: number,
): { recordId: string; raw: string } {
  const raw = lastValueOf(block, index).toString("utf8");
  let recordId = "";
  try {
    const id = (JSON.parse(raw) as { id?: unknown }).id;
    if (typeof id === "string") recordId = id;
  } catch {
    // Only records the exporter parsed are in a block; the id stays empty if one ever is not.
  }
  return { recordId, raw };
}

/** The RowBinary bytes of a Nullable(String) value. */
const nullableString = (v: string | undefined): Buffer =>
  v === undefined
    ? Buffer.of(1)
    : Buffer.concat([Buffer.of(0), rowBinaryString(v)]);

/**
 * The input rows (SESSION_INPUT) of sessions fetched at one instant. A row's leading columns
 * (fetch time, held flag, brand member) are encoded once per held flag and brand member.
 * Appending a row is on the hot path of every session, and does little: the engine builds the
 * table row (sessionRowsSelect). The record is appended as it was received, with its length
 * before it, so it is neither escaped nor re-encoded, stays byte-exact, and the engine does not
 * scan it to find where it ends.
 */
export class SessionInputs {
  readonly #fetchedAtMs: number;
  readonly #free = new Map<string | undefined, Buffer>();
  readonly #held = new Map<string | undefined, Buffer>();

  constructor(fetchedAtMs: number) {
    this.#fetchedAtMs = fetchedAtMs;
  }

  /** Appends a session's input row to an insert block. */
  push(
    block: RowBlock,
    raw: string | Uint8Array,
    held: boolean,
    brandMember: string | undefined,
  ): void {
    block.push(this.#leading(held, brandMember), raw);
  }

  #leading(held: boolean, brandMember: string | undefined): Buffer {
    const made = held ? this.#held : this.#free;
    let leading = made.get(brandMember);
    if (leading === undefined) {
      const fetched = Buffer.alloc(8);
      fetched.writeBigInt64LE(BigInt(this.#fetchedAtMs));
      leading = Buffer.concat([
        fetched,
        Buffer.of(held ? 1 : 0),
        nullableString(brandMember),
      ]);
      made.set(brandMember, leading);
    }
    return leading;
  }
}
