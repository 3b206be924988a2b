// Reads of the `sessions` table: what the reconciliation compares a window's listing with, and
// how many sessions are stored.
import type { Warehouse } from "./client.js";
import { qualified } from "./sql.js";
import { selectCount } from "./select.js";
import { Tables } from "./tables.js";

/** Sessions stored, one per id (FINAL). */
export function countStoredSessions(w: Warehouse): Promise<number> {
  return selectCount(
    w,
    `SELECT count() AS n FROM ${qualified(w, Tables.sessions)} FINAL`,
  );
}

/** Distinct ids of the sessions stored with a start time in [startMs, endMs). */
export async function storedSessionIds(
  w: Warehouse,
  window: { startMs: number; endMs: number },
): Promise<string[]> {
  const rs = await w.client.query({
    // DISTINCT rather than FINAL: every read of a session has its id and its start time.
    query: `SELECT DISTINCT id FROM ${qualified(w, Tables.sessions)}
            WHERE start_time >= fromUnixTimestamp64Milli({from:Int64})
              AND start_time < fromUnixTimestamp64Milli({to:Int64})`,
    query_params: { from: window.startMs, to: window.endMs },
    format: "JSONCompactEachRow",
  });
  return (await rs.json<[string]>()).map((r) => r[0]);
}
