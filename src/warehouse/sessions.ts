// Session → row of the `sessions` table: the column contract (names, types, readers) the
// migrations and the writer share, the value checks before a row is built, and the line itself.
import { durationStringMs, timestampMs } from "../api/schemas/common.js";
import type { Session } from "../api/schemas/session.js";
import { chTime } from "./format.js";
import { linesOf, type LineBlock, type TakenLines } from "./line-block.js";

/** Statuses after which a session never changes again. */
export const FINAL_STATUSES = new Set(["completed"]);

/** 2^42 ms is year 2109: a fetch time always fits below the status rank. */
const RANK_STEP = 2 ** 42;

/** Completed reads outrank open ones; among equals the later fetch wins (see the migration). */
export function sessionVersion(status: string, fetchedAtMs: number): number {
  return (FINAL_STATUSES.has(status) ? 2 : 1) * RANK_STEP + fetchedAtMs;
}

/** What a column's value is read from: the session, and when and how it was fetched. */
interface RowSource {
  s: Session;
  durationMs: number | undefined;
  fetchedAt: string;
  fetchedAtMs: number;
  /** An active legal hold names the session (see holds.ts). */
  held: boolean;
}

/**
 * A column of `sessions`: its name and ClickHouse type as the migrations create it, and how the
 * writer reads its value. `raw` is the record as received (appended verbatim, never read
 * through here); `materialized` columns are computed by the table itself.
 */
export type SessionColumn =
  | { name: string; type: string; value: (r: RowSource) => unknown }
  | { name: "raw"; type: string; raw: true }
  | { name: string; type: string; materialized: true };

const DT = "DateTime64(3, 'UTC')";
const LC = "LowCardinality(String)";
const ids = (r: RowSource) => r.s.user.identity;
const endUser = (r: RowSource) => r.s.user.endUser;

/** Every column of `sessions`, in the table's order: the one definition of the row. */
export const SESSION_COLUMNS: readonly SessionColumn[] = [
  { name: "id", type: "String", value: (r) => r.s.id },
  { name: "start_time", type: DT, value: (r) => r.s.startTime },
  {
    name: "end_time",
    type: `Nullable(${DT})`,
    value: (r) => r.s.endTime ?? null,
  },
  {
    name: "duration_ms",
    type: "Nullable(UInt64)",
    value: (r) => r.durationMs ?? null,
  },
  { name: "session_status", type: LC, value: (r) => r.s.sessionStatus },
  {
    name: "client_ip_address",
    type: "String",
    value: (r) => r.s.network.clientIpAddress,
  },
  {
    name: "server_ip_address",
    type: "String",
    value: (r) => r.s.network.serverIpAddress,
  },
  { name: "sidecar_id", type: "String", value: (r) => r.s.sidecar.id },
  { name: "sidecar_name", type: LC, value: (r) => r.s.sidecar.name },
  {
    name: "sidecar_technology",
    type: LC,
    value: (r) => r.s.sidecar.technology,
  },
  { name: "user_type", type: LC, value: (r) => r.s.user.type },
  { name: "user_username", type: "String", value: (r) => r.s.user.username },
  { name: "user_id", type: "String", value: (r) => ids(r)?.id ?? "" },
  { name: "user_name", type: "String", value: (r) => ids(r)?.name ?? "" },
  { name: "user_email", type: "String", value: (r) => ids(r)?.email ?? "" },
  { name: "user_account_type", type: LC, value: (r) => ids(r)?.type ?? "" },
  {
    name: "user_groups",
    type: `Array(${LC})`,
    value: (r) => ids(r)?.groups ?? [],
  },
  {
    name: "user_external_ids",
    type: "Array(String)",
    value: (r) => ids(r)?.externalIds ?? [],
  },
  { name: "end_user_id", type: "String", value: (r) => endUser(r)?.id ?? "" },
  {
    name: "end_user_name",
    type: "String",
    value: (r) => endUser(r)?.name ?? "",
  },
  {
    name: "end_user_email",
    type: "String",
    value: (r) => endUser(r)?.email ?? "",
  },
  { name: "end_user_type", type: LC, value: (r) => endUser(r)?.type ?? "" },
  {
    name: "end_user_groups",
    type: `Array(${LC})`,
    value: (r) => endUser(r)?.groups ?? [],
  },
  {
    name: "end_user_external_ids",
    type: "Array(String)",
    value: (r) => endUser(r)?.externalIds ?? [],
  },
  {
    name: "native_username",
    type: "String",
    value: (r) => r.s.user.native?.username ?? "",
  },
  { name: "resource_type", type: LC, value: (r) => r.s.resource.type },
  { name: "resource_id", type: "String", value: (r) => r.s.resource.id },
  { name: "resource_name", type: LC, value: (r) => r.s.resource.name },
  {
    name: "resource_technology",
    type: LC,
    value: (r) => r.s.resource.technology,
  },
  { name: "connector_id", type: "String", value: (r) => r.s.connector.id },
  { name: "connector_name", type: LC, value: (r) => r.s.connector.name },
  {
    name: "parent_session_id",
    type: "String",
    value: (r) => r.s.parentSessionId,
  },
  { name: "raw", type: "String", raw: true },
  { name: "fetched_at", type: DT, value: (r) => r.fetchedAt },
  {
    name: "version",
    type: "UInt64",
    value: (r) => sessionVersion(r.s.sessionStatus, r.fetchedAtMs),
  },
  { name: "user_key", type: LC, materialized: true },
  { name: "legal_hold", type: "Bool", value: (r) => r.held },
];

/**
 * The person of a session as dashboards and holds name it: the e-mail of a human, the user name
 * of a machine. The `user_key` column computes the same (migrations/0006).
 */
export function sessionUserKey(s: Session): string {
  const email = s.user.identity?.email ?? "";
  return email !== "" ? email : s.user.username;
}

/** The columns the writer fills from the session, in the order of a line's values. */
const VALUE_COLUMNS = SESSION_COLUMNS.flatMap((c) => ("value" in c ? [c] : []));
const VALUE_READERS = VALUE_COLUMNS.map((c) => c.value);

/**
 * Columns of a session line, in order: every column the writer fills but `raw` first, `raw`
 * last, so that the raw record can be appended as it was received.
 */
export const SESSION_LINE_COLUMNS: readonly string[] = [
  ...VALUE_COLUMNS.map((c) => c.name),
  "raw",
];

/** The Duration the service sent, or end − start for a completed session that has none. */
export function sessionDurationMs(s: Session): number | undefined {
  if (s.duration !== "") return durationStringMs(s.duration);
  if (s.endTime === undefined) return undefined;
  return timestampMs(s.endTime) - timestampMs(s.startTime);
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

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/** Digits of `v` from `at`, as a number (the schema has checked that they are digits). */
function digits(v: string, at: number, n: number): number {
  let x = 0;
  for (let i = at; i < at + n; i++) x = 10 * x + v.charCodeAt(i) - 48;
  return x;
}

function daysIn(year: number, month: number): number {
  if (month === 2)
    return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
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
  const year = digits(v, 0, 4);
  const month = digits(v, 5, 2);
  const day = digits(v, 8, 2);
  if (month < 1 || month > 12)
    return `${field}: "${v}" is not a valid date (there is no month ${month})`;
  if (day < 1 || day > daysIn(year, month))
    return `${field}: "${v}" is not a valid date (${MONTHS[month - 1]} ${year} has ${daysIn(year, month)} days)`;
  if (digits(v, 11, 2) > 23 || digits(v, 14, 2) > 59 || digits(v, 17, 2) > 59)
    return `${field}: "${v}" is not a valid time of day`;
  if (ms < DATETIME64_MIN_MS || ms > DATETIME64_MAX_MS)
    return `${field}: "${v}" is out of range (a DateTime64 holds 1900-01-01 to 2299-12-31 UTC)`;
  return undefined;
}

/**
 * Why the session's values cannot be stored as they are, named by field and value ("startTime:
 * … is out of range"), or undefined when they can. Runs for every session before its row is
 * built: a value is never clamped into range, it goes to dead_letters with this reason.
 */
export function sessionValueProblem(
  s: Session,
  fetchedAtMs: number,
): string | undefined {
  const startMs = timestampMs(s.startTime);
  const start = instantProblem("startTime", s.startTime, startMs);
  if (start !== undefined) return start;
  if (startMs < START_FLOOR_MS || startMs > fetchedAtMs + START_AHEAD_MS)
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
 * A line of a session block ClickHouse refused, as a dead letter's record id and raw record:
 * the line's first value is the session id, its last (from `tails`) the record as received.
 */
export function rejectedSessionLine(
  block: TakenLines,
  index: number,
): { recordId: string; raw: string } {
  const start = block.starts[index] as number;
  const line = linesOf(block, index, index + 1);
  const tail = block.tails[index] ?? -1;
  if (tail < 0) return { recordId: "", raw: line.toString("utf8") };
  const rawText = line.toString("utf8", tail - start, line.length - 1);
  let recordId = "";
  try {
    const head = JSON.parse(
      `${line.toString("utf8", 0, tail - start - 1)}]`,
    ) as unknown[];
    if (typeof head[0] === "string") recordId = head[0];
  } catch {
    // The head is our own JSON.stringify output; the id stays empty if it ever is not.
  }
  return {
    recordId,
    raw: rawText.startsWith('"') ? (JSON.parse(rawText) as string) : rawText,
  };
}

/**
 * Appends the session's row to an insert block as one JSONCompactEachRow line (columns
 * SESSION_LINE_COLUMNS). It is on the hot path of every session: an array is what V8
 * serializes fastest, and the raw record is appended as it was received — the insert reads a
 * JSON object into a String column verbatim (input_format_json_read_objects_as_strings), so the
 * record is neither escaped here nor re-encoded, and stays byte-exact. The line is never built
 * as one string: the other columns and the raw record go into the block one after the other.
 */
export function pushSessionLine(
  block: LineBlock,
  s: Session,
  raw: string,
  fetchedAtMs: number,
  fetchedAt = chTime(fetchedAtMs),
  held = false,
): void {
  block.pushArrayWith(
    sessionLineHead(s, fetchedAtMs, fetchedAt, held),
    rawLineValue(raw),
  );
}

/** Every column of the line but `raw`, as a JSON array. */
function sessionLineHead(
  s: Session,
  fetchedAtMs: number,
  fetchedAt: string,
  held: boolean,
): string {
  const source: RowSource = {
    s,
    durationMs: sessionDurationMs(s),
    fetchedAt,
    fetchedAtMs,
    held,
  };
  const values = new Array<unknown>(VALUE_READERS.length);
  for (let i = 0; i < VALUE_READERS.length; i++)
    values[i] = (VALUE_READERS[i] as (r: RowSource) => unknown)(source);
  return JSON.stringify(values);
}

/** The raw record as the line's last value: a JSON object as it is, anything else quoted. */
function rawLineValue(raw: string): string {
  return raw.charCodeAt(0) === 0x7b || raw.trimStart().startsWith("{")
    ? raw
    : JSON.stringify(raw);
}
