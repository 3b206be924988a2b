// Which stored sessions the open-session refresh re-reads through GetSession, and what it
// recorded for those GetSession did not find (migrations/0008_session_polls.sql). Every query
// about them lives here.
import type { Warehouse } from "./client.js";
import { qualified } from "./sql.js";
import { chTime } from "./format.js";
import { versionWriter } from "./insert.js";
import { FINAL_STATUSES } from "./session-rows.js";
import { Tables } from "./tables.js";
import { selectCount } from "./select.js";

/** Statuses the service is known to report for a session still open. */
const OPEN_STATUSES: readonly string[] = ["active", "idle"];

/**
 * The sessions to follow: every status that is not final, except sessions marked vanished and
 * sessions in a status neither open nor final (one the service added since) that started
 * before `unknownSinceMs`.
 */
export interface PollSelection {
  /** Only sessions that started before this instant (epoch ms); all when absent. */
  beforeMs?: number | undefined;
  /** Sessions in a status not known to be open are followed while they started at or after this. */
  unknownSinceMs: number;
}

export interface SessionToPoll {
  id: string;
  /** `not_found` answers in a row so far. */
  misses: number;
}

function selection(
  w: Warehouse,
  s: PollSelection,
): { from: string; params: Record<string, unknown> } {
  const before =
    s.beforeMs === undefined
      ? ""
      : " AND s.start_time < fromUnixTimestamp64Milli({before:Int64})";
  return {
    // Without a row in session_polls, `misses` reads 0 and `vanished` false (the join's defaults).
    from: `${qualified(w, Tables.sessions)} AS s FINAL
           LEFT JOIN (SELECT session_id, misses, vanished FROM ${qualified(w, Tables.sessionPolls)} FINAL) AS p
             ON p.session_id = s.id
           WHERE s.session_status NOT IN {final:Array(String)}
             AND (s.session_status IN {open:Array(String)}
                  OR s.start_time >= fromUnixTimestamp64Milli({unknownSince:Int64}))
             AND NOT p.vanished${before}`,
    params: {
      final: [...FINAL_STATUSES],
      open: OPEN_STATUSES,
      unknownSince: s.unknownSinceMs,
      ...(s.beforeMs === undefined ? {} : { before: s.beforeMs }),
    },
  };
}

/** The sessions to re-read, oldest first, with their `not_found` answers in a row. */
export async function sessionsToPoll(
  w: Warehouse,
  s: PollSelection,
): Promise<SessionToPoll[]> {
  const { from, params } = selection(w, s);
  const rs = await w.client.query({
    query: `SELECT s.id AS id, p.misses AS misses FROM ${from} ORDER BY s.start_time`,
    query_params: params,
    format: "JSONEachRow",
  });
  return (await rs.json<{ id: string; misses: number | string }>()).map(
    (r) => ({ id: r.id, misses: Number(r.misses) }),
  );
}

/** How many sessions the refresh follows (status reports it). */
export async function countSessionsToPoll(
  w: Warehouse,
  s: PollSelection,
): Promise<number> {
  const { from, params } = selection(w, s);
  return selectCount(w, `SELECT count() AS n FROM ${from}`, params);
}

/** Sessions marked vanished. */
export function countVanishedSessions(w: Warehouse): Promise<number> {
  return selectCount(
    w,
    `SELECT count() AS n FROM ${qualified(w, Tables.sessionPolls)} FINAL WHERE vanished`,
  );
}

export interface SessionPoll {
  sessionId: string;
  misses: number;
  vanished: boolean;
  polledAtMs: number;
  /** What the last unsuccessful answer was ("" after a successful read). */
  lastError: string;
}

/** Records poll states; the newest write of a session wins (updated_at always grows here). */
export const writeSessionPolls = versionWriter(
  Tables.sessionPolls,
  (p: SessionPoll) => ({
    session_id: p.sessionId,
    misses: p.misses,
    vanished: p.vanished,
    last_polled_at: chTime(p.polledAtMs),
    last_error: p.lastError,
  }),
);
