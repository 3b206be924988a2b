// The session → row mapping in JavaScript, as plain objects: what the tests insert with
// insertRows, and the independent reference the rows the engine builds from the records
// (sessionRowsSelect) are held equal to (test/integration/warehouse/engine-rows.test.ts).
import { durationStringMs, timestampMs } from "../../src/api/schemas/common.js";
import type { Session } from "../../src/api/schemas/session.js";
import { chTime } from "../../src/warehouse/format.js";
import { FINAL_STATUSES } from "../../src/warehouse/session-rows.js";

/** Completed reads outrank open ones; among equals the later fetch wins (2^42 ms: year 2109). */
export function sessionVersion(status: string, fetchedAtMs: number): number {
  return (FINAL_STATUSES.has(status) ? 2 : 1) * 2 ** 42 + fetchedAtMs;
}

/** The Duration the service sent, or end − start for a completed session that has none. */
export function sessionDurationMs(s: Session): number | undefined {
  if (s.duration !== "") return durationStringMs(s.duration);
  if (s.endTime === undefined) return undefined;
  return timestampMs(s.endTime) - timestampMs(s.startTime);
}

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
  legal_hold: boolean;
}

export function sessionRow(
  s: Session,
  raw: string,
  fetchedAtMs: number,
  fetchedAt = chTime(fetchedAtMs),
  held = false,
): SessionRow {
  const identity = s.user.identity;
  const endUser = s.user.endUser;
  const durationMs = sessionDurationMs(s);
  return {
    id: s.id,
    // RFC 3339 as received; the insert parses it (date_time_input_format=best_effort).
    start_time: s.startTime,
    end_time: s.endTime ?? null,
    duration_ms: durationMs ?? null,
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
    legal_hold: held,
  };
}
