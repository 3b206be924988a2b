// Session → row of the `sessions` table (migrations/0002_sessions.sql).
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

/**
 * Columns of a session line, in order: every column of `sessions` but `raw` first, `raw` last,
 * so that the raw record can be appended as it was received.
 */
export const SESSION_LINE_COLUMNS = [
  "id",
  "start_time",
  "end_time",
  "duration_ms",
  "session_status",
  "client_ip_address",
  "server_ip_address",
  "sidecar_id",
  "sidecar_name",
  "sidecar_technology",
  "user_type",
  "user_username",
  "user_id",
  "user_name",
  "user_email",
  "user_account_type",
  "user_groups",
  "user_external_ids",
  "end_user_id",
  "end_user_name",
  "end_user_email",
  "end_user_type",
  "end_user_groups",
  "end_user_external_ids",
  "native_username",
  "resource_type",
  "resource_id",
  "resource_name",
  "resource_technology",
  "connector_id",
  "connector_name",
  "parent_session_id",
  "fetched_at",
  "version",
  "raw",
] as const;

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
): void {
  block.pushArrayWith(
    sessionLineHead(s, fetchedAtMs, fetchedAt),
    rawLineValue(raw),
  );
}

/** Every column of the line but `raw`, as a JSON array. */
function sessionLineHead(
  s: Session,
  fetchedAtMs: number,
  fetchedAt = chTime(fetchedAtMs),
): string {
  const id = s.user.identity;
  const eu = s.user.endUser;
  const durationMs = sessionDurationMs(s);
  return JSON.stringify([
    s.id,
    s.startTime,
    s.endTime ?? null,
    durationMs ?? null,
    s.sessionStatus,
    s.network.clientIpAddress,
    s.network.serverIpAddress,
    s.sidecar.id,
    s.sidecar.name,
    s.sidecar.technology,
    s.user.type,
    s.user.username,
    id?.id ?? "",
    id?.name ?? "",
    id?.email ?? "",
    id?.type ?? "",
    id?.groups ?? [],
    id?.externalIds ?? [],
    eu?.id ?? "",
    eu?.name ?? "",
    eu?.email ?? "",
    eu?.type ?? "",
    eu?.groups ?? [],
    eu?.externalIds ?? [],
    s.user.native?.username ?? "",
    s.resource.type,
    s.resource.id,
    s.resource.name,
    s.resource.technology,
    s.connector.id,
    s.connector.name,
    s.parentSessionId,
    fetchedAt,
    sessionVersion(s.sessionStatus, fetchedAtMs),
  ]);
}

/** The raw record as the line's last value: a JSON object as it is, anything else quoted. */
function rawLineValue(raw: string): string {
  return raw.charCodeAt(0) === 0x7b || raw.trimStart().startsWith("{")
    ? raw
    : JSON.stringify(raw);
}
