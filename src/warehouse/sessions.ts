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

/** A JSON string literal; plain ASCII text (nearly every value) skips JSON.stringify. */
function q(text: string): string {
  return PLAIN.test(text) ? `"${text}"` : JSON.stringify(text);
}
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function qa(items: readonly string[]): string {
  return items.length === 0 ? "[]" : `[${items.map(q).join(",")}]`;
}

/**
 * The row as one JSON line, written directly (it is on the hot path of every session), with the
 * raw record spliced in as it was received: the insert reads JSON objects into String columns
 * verbatim (input_format_json_read_objects_as_strings), so the record is neither escaped here
 * nor re-encoded, and stays byte-exact. Same columns and values as `sessionRow`.
 */
export function sessionLine(
  s: Session,
  raw: string,
  fetchedAtMs: number,
  fetchedAt = chTime(fetchedAtMs),
): string {
  const id = s.user.identity;
  const eu = s.user.endUser;
  const startMs = timestampMs(s.startTime);
  const endMs = s.endTime === undefined ? undefined : timestampMs(s.endTime);
  const durationMs =
    s.duration !== ""
      ? durationStringMs(s.duration)
      : endMs !== undefined
        ? Math.max(0, endMs - startMs)
        : undefined;
  const rawText = raw.trimStart().startsWith("{") ? raw : JSON.stringify(raw);
  return (
    `{"id":${q(s.id)},"start_time":${q(s.startTime)},"end_time":${s.endTime === undefined ? "null" : q(s.endTime)}` +
    `,"duration_ms":${durationMs === undefined ? "null" : Math.max(0, durationMs)},"session_status":${q(s.sessionStatus)}` +
    `,"client_ip_address":${q(s.network.clientIpAddress)},"server_ip_address":${q(s.network.serverIpAddress)}` +
    `,"sidecar_id":${q(s.sidecar.id)},"sidecar_name":${q(s.sidecar.name)},"sidecar_technology":${q(s.sidecar.technology)}` +
    `,"user_type":${q(s.user.type)},"user_username":${q(s.user.username)},"user_id":${q(id?.id ?? "")}` +
    `,"user_name":${q(id?.name ?? "")},"user_email":${q(id?.email ?? "")},"user_account_type":${q(id?.type ?? "")}` +
    `,"user_groups":${qa(id?.groups ?? [])},"user_external_ids":${qa(id?.externalIds ?? [])}` +
    `,"end_user_id":${q(eu?.id ?? "")},"end_user_name":${q(eu?.name ?? "")},"end_user_email":${q(eu?.email ?? "")}` +
    `,"end_user_type":${q(eu?.type ?? "")},"end_user_groups":${qa(eu?.groups ?? [])},"end_user_external_ids":${qa(eu?.externalIds ?? [])}` +
    `,"native_username":${q(s.user.native?.username ?? "")},"resource_type":${q(s.resource.type)},"resource_id":${q(s.resource.id)}` +
    `,"resource_name":${q(s.resource.name)},"resource_technology":${q(s.resource.technology)}` +
    `,"connector_id":${q(s.connector.id)},"connector_name":${q(s.connector.name)},"parent_session_id":${q(s.parentSessionId)}` +
    `,"raw":${rawText},"fetched_at":"${fetchedAt}","version":${sessionVersion(s.sessionStatus, fetchedAtMs)}}`
  );
}

export function sessionRow(
  s: Session,
  raw: string,
  fetchedAtMs: number,
  fetchedAt = chTime(fetchedAtMs),
): SessionRow {
  const identity = s.user.identity;
  const endUser = s.user.endUser;
  const endMs = s.endTime === undefined ? undefined : timestampMs(s.endTime);
  const startMs = timestampMs(s.startTime);
  const durationMs =
    s.duration !== ""
      ? durationStringMs(s.duration)
      : endMs !== undefined
        ? Math.max(0, endMs - startMs)
        : undefined;
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
