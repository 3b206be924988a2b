// The sessions under policy suspensions, over a period with many sessions and few suspensions:
// the report joins the period's sessions against the suspensions held in memory, never the
// other way round, so its memory does not grow with the period's sessions. Built under a query
// memory cap that the sessions held at once exceed.
import { beforeAll, expect, it } from "vitest";
import { cappedReportCsv } from "../../helpers/capped-report.js";

const SESSIONS = 1_000_000;
/** Above what the report needs, below the period's sessions held in a join (over 100 MB). */
const MEMORY_CAP = 64 * 2 ** 20;
const FROM = "2026-10-01";
const TO = "2026-10-02";
/** Sessions start every 50 ms; the suspension is in force for the first 100 of them. */
const UNDER = 100;

let csv: string;

beforeAll(async () => {
  csv = await cappedReportCsv({
    kind: "policy-exceptions",
    fill: [
      `INSERT INTO {db}.sessions (id, start_time, user_type, user_id, user_username, user_name, user_groups, native_username, resource_id, resource_name, resource_technology, fetched_at, version)
        SELECT concat('s-', toString(number)), toDateTime64('${FROM} 00:00:00', 3, 'UTC') + toIntervalMillisecond(number * 50),
               'human', 'u-1', 'alice.example', 'alice.example', ['analysts', 'everyone'], 'analyst', 'res-1', 'db-1', 'postgres',
               toDateTime64('${TO} 00:00:00', 3, 'UTC'), 1
        FROM numbers(${SESSIONS})`,
      `INSERT INTO {db}.policy_suspensions (id, policy_id, identity_type, identity_id, suspension_type, expire_at, created_at, updated_at, content_hash, observed_at)
        VALUES ('sus-1', 'pol-1', 'user', 'u-1', 'temporary', toDateTime64('${FROM} 00:00:05', 3, 'UTC'), toDateTime64('${FROM} 00:00:00', 3, 'UTC'),
                toDateTime64('${FROM} 00:00:00', 3, 'UTC'), 'h1', toDateTime64('${FROM} 00:00:00', 3, 'UTC'))`,
    ],
    memoryCap: MEMORY_CAP,
    from: FROM,
    to: TO,
    csv: "policy-sessions-under-suspensions.csv",
  });
}, 120_000);

it("lists exactly the sessions under the suspension, under the memory cap", () => {
  const rows = csv.split("\r\n").filter((l) => l !== "");
  expect(rows[0]).toMatch(/^suspension_id,policy_id,session_id,/);
  const ids = rows.slice(1).map((r) => r.split(",")[2]);
  expect(ids).toEqual(Array.from({ length: UNDER }, (_, i) => `s-${i}`));
});
