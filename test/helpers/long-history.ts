// Sessions over the last DAYS days up to now, for the tests of long ranges over the daily
// rollups: PER_DAY a day (people, resources, technologies, connectors, groups, addresses (one
// of them used by more people than a panel names), parents and children, machine accounts acting
// for a person (an end user with an email, or a name only), two reads of some), and on the last OPEN_DAYS days and today a session
// still open, so that those days are not settled. Relative to the wall clock, as the TTL is.
import type { Warehouse } from "../../src/warehouse/client.js";

export const DAY = 86_400_000;
export const HOUR = 3_600_000;
/** Days of sessions before today; the last OPEN_DAYS of them have a session still open. */
export const DAYS = 60;
export const OPEN_DAYS = 3;
export const PER_DAY = 40;

/** Stores the sessions into `sessions` of the session's database (unqualified). */
export async function storeLongHistory(
  w: Warehouse,
  nowMs: number,
): Promise<void> {
  const today = Math.floor(nowMs / DAY) * DAY;
  const first = today - DAYS * DAY;
  const rows = `
    SELECT n, k, i, u, r,
      concat('ses_', toString(n)) AS id,
      fromUnixTimestamp64Milli(toInt64(${first} + k * ${DAY} + i * 35 * 60000 + 7 * 60000), 'UTC') AS start,
      (k >= ${DAYS - OPEN_DAYS} AND i = 5) OR (k = ${DAYS}) AND i % 4 = 0 AS open,
      toUInt64(1000 * (30 + cityHash64(n) % 5000)) AS duration
    FROM (
      SELECT number AS n, intDiv(number, ${PER_DAY}) AS k, number % ${PER_DAY} AS i,
             (number * 7) % 9 AS u, (number * 3 + intDiv(number, ${PER_DAY})) % 5 AS r
      FROM numbers(${(DAYS + 1) * PER_DAY}))
    WHERE start < fromUnixTimestamp64Milli(${nowMs - HOUR}, 'UTC')`;
  const insert = (status: string, version: string, where: string) =>
    w.client.command({
      query: `INSERT INTO sessions (id, start_time, end_time, duration_ms, session_status,
          client_ip_address, user_type, user_username, user_email, user_groups, resource_name,
          resource_technology, connector_name, native_username, parent_session_id, end_user_email,
          end_user_name, fetched_at, version)
        SELECT id, start, if(${status} = 'completed', start + toIntervalMillisecond(duration), NULL),
          if(${status} = 'completed', duration, NULL), ${status},
          if(u < 7, '10.0.0.0', '10.0.0.2'), if(u < 6, 'human', 'machine'), concat('user', toString(u)),
          if(u < 6, concat('user', toString(u), '@acme.example'), ''), [concat('group-', toString(u % 3))],
          concat('resource-', toString(r)), arrayElement(['postgres', 'mysql', 's3', 'ssh', 'llm'], r + 1),
          if(r % 2 = 0, 'edge-1', ''), arrayElement(['analyst', 'postgres', 'app'], 1 + n % 3),
          if(n % 6 = 1, concat('ses_', toString(n - 1)), ''),
          if(u >= 6 AND n % 4 = 1, concat('person', toString(n % 5), '@acme.example'), ''),
          if(u >= 6 AND n % 4 IN (1, 3), concat('Person ', toString(n % 5)), ''),
          start + toIntervalMinute(1), ${version}
        FROM (${rows}) WHERE ${where}`,
    });
  // An earlier read of every ninth session, still open: FINAL keeps the later one.
  await insert("'active'", "1", "n % 9 = 0 AND NOT open");
  await insert("if(open, 'active', 'completed')", "2", "1");
}
