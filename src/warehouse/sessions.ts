// Session → row of the `sessions` table (migrations/0002_sessions.sql).
import { durationStringMs, timestampMs } from "../api/schemas/common.js";
import type { Session } from "../api/schemas/session.js";
import { chTime } from "./format.js";
import type { LineBlock } from "./insert.js";

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
  return Math.max(0, timestampMs(s.endTime) - timestampMs(s.startTime));
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
    durationMs === undefined ? null : Math.max(0, durationMs),
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
