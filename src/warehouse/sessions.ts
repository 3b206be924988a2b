// Session → row of the `sessions` table (migrations/0002_sessions.sql).
import { durationStringMs, timestampMs } from "../api/schemas/common.js";
import type { Session } from "../api/schemas/session.js";
import { chTime } from "./format.js";

export interface SessionRow {
  id: string;
  start_time: string;
  end_time: string | null;
  duration_ms: number | null;
  session_status: string;
  client_ip_address: string;
  server_ip_address: string;
  sidecar_id: string;
  sidecar_name: string;
  sidecar_technology: string;
  user_type: string;
  user_username: string;
  user_id: string;
  user_name: string;
  user_email: string;
  user_account_type: string;
  user_groups: string[];
  user_external_ids: string[];
  end_user_id: string;
  end_user_name: string;
  end_user_email: string;
  end_user_type: string;
  end_user_groups: string[];
  end_user_external_ids: string[];
  native_username: string;
  resource_type: string;
  resource_id: string;
  resource_name: string;
  resource_technology: string;
  connector_id: string;
  connector_name: string;
  parent_session_id: string;
  raw: string;
  fetched_at: string;
  version: number;
}

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
function durationOf(s: Session): number | undefined {
  if (s.duration !== "") return durationStringMs(s.duration);
  if (s.endTime === undefined) return undefined;
  return Math.max(0, timestampMs(s.endTime) - timestampMs(s.startTime));
}

/**
 * The row as one JSONCompactEachRow line (columns SESSION_LINE_COLUMNS). It is on the hot path
 * of every session: an array is what V8 serializes fastest, and the raw record is appended as
 * it was received — the insert reads a JSON object into a String column verbatim
 * (input_format_json_read_objects_as_strings), so the record is neither escaped here nor
 * re-encoded, and stays byte-exact. Same values as `sessionRow`.
 */
export function sessionLine(
  s: Session,
  raw: string,
  fetchedAtMs: number,
  fetchedAt = chTime(fetchedAtMs),
): string {
  const head = sessionLineHead(s, fetchedAtMs, fetchedAt);
  return `${head.slice(0, -1)},${rawLineValue(raw)}]`;
}

/**
 * `sessionLine` without `raw`: a JSON array of every other column. The sync writes it and the
 * raw value into its block one after the other (LineBlock.pushArrayWith), so the line is never
 * built as one string.
 */
export function sessionLineHead(
  s: Session,
  fetchedAtMs: number,
  fetchedAt = chTime(fetchedAtMs),
): string {
  const id = s.user.identity;
  const eu = s.user.endUser;
  const durationMs = durationOf(s);
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
export function rawLineValue(raw: string): string {
  return raw.charCodeAt(0) === 0x7b || raw.trimStart().startsWith("{")
    ? raw
    : JSON.stringify(raw);
}

export function sessionRow(
  s: Session,
  raw: string,
  fetchedAtMs: number,
  fetchedAt = chTime(fetchedAtMs),
): SessionRow {
  const identity = s.user.identity;
  const endUser = s.user.endUser;
  const durationMs = durationOf(s);
  return {
    id: s.id,
    // RFC 3339 as received; the insert parses it (date_time_input_format=best_effort).
    start_time: s.startTime,
    end_time: s.endTime ?? null,
    duration_ms: durationMs === undefined ? null : Math.max(0, durationMs),
    session_status: s.sessionStatus,
    client_ip_address: s.network.clientIpAddress,
    server_ip_address: s.network.serverIpAddress,
    sidecar_id: s.sidecar.id,
    sidecar_name: s.sidecar.name,
    sidecar_technology: s.sidecar.technology,
    user_type: s.user.type,
    user_username: s.user.username,
    user_id: identity?.id ?? "",
    user_name: identity?.name ?? "",
    user_email: identity?.email ?? "",
    user_account_type: identity?.type ?? "",
    user_groups: identity?.groups ?? [],
    user_external_ids: identity?.externalIds ?? [],
    end_user_id: endUser?.id ?? "",
    end_user_name: endUser?.name ?? "",
    end_user_email: endUser?.email ?? "",
    end_user_type: endUser?.type ?? "",
    end_user_groups: endUser?.groups ?? [],
    end_user_external_ids: endUser?.externalIds ?? [],
    native_username: s.user.native?.username ?? "",
    resource_type: s.resource.type,
    resource_id: s.resource.id,
    resource_name: s.resource.name,
    resource_technology: s.resource.technology,
    connector_id: s.connector.id,
    connector_name: s.connector.name,
    parent_session_id: s.parentSessionId,
    raw,
    fetched_at: fetchedAt,
    version: sessionVersion(s.sessionStatus, fetchedAtMs),
  };
}
